package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.Tree;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The generated shapes: exact size, deterministic from the seed, and shaped as documented. */
class ShapeTest {

  @ParameterizedTest
  @EnumSource(Shape.class)
  void sameSeedSameTreeOfExactlyTheAskedSize(Shape shape) {
    Tree a = shape.generate(2_000, 7);
    assertEquals(2_000, a.size());
    assertEquals(a, shape.generate(2_000, 7));
    assertEquals(1, a.roots().size());
  }

  @ParameterizedTest
  @EnumSource(value = Shape.class, names = {"DEEP", "RANDOM", "CATALOG"})
  void randomShapesDependOnTheSeed(Shape shape) {
    assertNotEquals(shape.generate(500, 1), shape.generate(500, 2));
  }

  @Test
  void shapesHaveTheirCharacter() {
    int n = 4_000;
    TreeFacts balanced = new TreeFacts(Shape.BALANCED.generate(n, 42));
    TreeFacts deep = new TreeFacts(Shape.DEEP.generate(n, 42));
    TreeFacts wide = new TreeFacts(Shape.WIDE.generate(n, 42));
    TreeFacts random = new TreeFacts(Shape.RANDOM.generate(n, 42));
    TreeFacts catalog = new TreeFacts(Shape.CATALOG.generate(n, 42));
    assertEquals(6, maxDepth(balanced)); // 4-ary: 1 + 4 + ... + 4^5 = 1365 < 4000 < 5461
    assertEquals(2, maxDepth(wide));
    assertEquals((n - 2) / Shape.WIDE_PARENTS, maxChildren(wide)); // ceil((n - 1 - 5) / 5)
    assertTrue(maxDepth(catalog) <= Shape.CATALOG_LEVELS);
    assertTrue(maxChildren(catalog) > 10 * Shape.FAN_OUT, "catalog fan-out is skewed");
    assertTrue(maxDepth(deep) > 5 * maxDepth(random),
        "deep " + maxDepth(deep) + " vs random " + maxDepth(random));
  }

  @Test
  void subjectsAreChosenBySizeAndAreLegal() {
    TreeFacts f = new TreeFacts(Shape.RANDOM.generate(10_000, 42));
    Subjects s = Subjects.choose(f, 42);
    assertTrue(f.isLeaf(s.deepLeaf()) && f.isLeaf(s.movedLeaf()));
    assertEquals(maxDepth(f), f.depth[s.deepLeaf()]);
    assertEquals(maxChildren(f), f.childCount[s.widest()]);
    assertTrue(within(f.subtreeSize[s.small()], 10, 3), "small " + f.subtreeSize[s.small()]);
    assertTrue(within(f.subtreeSize[s.medium()], 100, 3), "medium " + f.subtreeSize[s.medium()]);
    assertTrue(within(f.subtreeSize[s.large()], 2_500, 3), "large " + f.subtreeSize[s.large()]);
    String target = s.subtreeTarget().anchor();
    assertTrue(target == null || !f.inSubtree(f.indexOf(target), s.large()));
  }

  private static boolean within(int size, int target, double factor) {
    return size >= target / factor && size <= target * factor;
  }

  private static int maxDepth(TreeFacts f) {
    int max = 0;
    for (int d : f.depth) {
      max = Math.max(max, d);
    }
    return max;
  }

  private static int maxChildren(TreeFacts f) {
    int max = 0;
    for (int c : f.childCount) {
      max = Math.max(max, c);
    }
    return max;
  }
}
