package dev.arbor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class TreeTest {
  @Test
  void parseGivesPreorderWithDepths() {
    Tree tree = Fixtures.categories();
    assertEquals(List.of("Books", "Programming", "Languages", "Databases", "MongoDB", "dbm"),
        tree.ids());
    assertEquals(3, tree.get("dbm").depth());
    assertEquals("Databases", tree.get("dbm").parentId());
    assertEquals(List.of("Books"), tree.roots());
    assertEquals(List.of("Languages", "Databases"), tree.children("Programming"));
  }

  @Test
  void builderAcceptsAnyOrderAndKeepsSiblingOrder() {
    Tree tree = Tree.builder().add("c", "a").add("a", null).add("b", "a").add("r", null).build();
    assertEquals(Tree.parse("a(c b) r"), tree);
    assertNotEquals(Tree.parse("a(b c) r"), tree);
  }

  @Test
  void attributesTakePartInEquality() {
    Tree plain = Tree.builder().add("a", null).build();
    Tree with = Tree.builder().add("a", null, Map.of("k", 1)).build();
    assertNotEquals(plain, with);
  }

  @Test
  void builderRefusesDuplicatesOrphansAndCycles() {
    assertThrows(DuplicateNodeException.class, () -> Tree.builder().add("a", null).add("a", null));
    NodeNotFoundException orphan = assertThrows(NodeNotFoundException.class,
        () -> Tree.builder().add("a", "ghost").build());
    assertEquals("ghost", orphan.id());
    assertThrows(TreeException.class,
        () -> Tree.builder().add("r", null).add("a", "b").add("b", "a").build());
    assertThrows(IllegalArgumentException.class, () -> Tree.parse("a(b"));
    assertThrows(IllegalArgumentException.class, () -> Tree.parse("a)"));
  }

  @Test
  void veryDeepTreesNeedNoRecursion() {
    Tree.Builder b = Tree.builder();
    b.add("0", null);
    for (int i = 1; i < 200_000; i++) {
      b.add(Integer.toString(i), Integer.toString(i - 1));
    }
    Supplier<Tree> build = b::build;
    Tree tree = build.get();
    assertEquals(199_999, tree.get("199999").depth());
    assertEquals(tree, build.get());
    assertEquals(tree.hashCode(), build.get().hashCode());
  }
}
