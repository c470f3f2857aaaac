package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeEvent;
import dev.arbor.core.TreeEvent.Kind;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Listeners are told of every committed change, of every kind and pattern, with the node, its
 * old and new parent, the position and the nodes touched; never of a change that failed or did
 * nothing; and a listener that throws neither undoes the change nor stops the others.
 */
class TreeEventsTest {
  private static final String FIXTURE = "a(b(c d(e f)) g(h)) i(j k)";

  private static TreeEvent event(Kind kind, String id, String oldParent, String newParent,
      Position position, long nodes) {
    return new TreeEvent(kind, id, oldParent, newParent, position, nodes, 0);
  }

  /** The events without their versions, which are checked apart. */
  private static List<TreeEvent> unversioned(List<TreeEvent> events) {
    List<TreeEvent> out = new ArrayList<>();
    for (TreeEvent e : events) {
      out.add(new TreeEvent(e.kind(), e.id(), e.oldParent(), e.newParent(), e.position(),
          e.nodes(), 0));
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void everyCommittedChangeIsToldOnceAndNothingElse(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    List<TreeEvent> told = new CopyOnWriteArrayList<>();
    List<TreeEvent> second = new CopyOnWriteArrayList<>();
    TreeStore store = pattern.open(c, TreeOptions.defaults()
        .withListener(e -> {
          told.add(e);
          throw new IllegalStateException("a listener that throws");
        })
        .withListener(second::add));
    Tree tree = Tree.parse(FIXTURE);
    store.load(tree);
    store.insert("x", Position.lastChildOf("c"));
    store.insert("y", Position.after("g"));
    store.insert("r", Position.firstRoot(), Map.of("name", "R"));
    store.move("d", Position.lastChildOf("i"));
    store.move("r", Position.after("i"));
    // Failed or empty changes tell nothing.
    assertThrows(DuplicateNodeException.class, () -> store.insert("x", Position.lastRoot()));
    assertThrows(InvalidMoveException.class, () -> store.move("a", Position.lastChildOf("c")));
    assertThrows(NodeNotFoundException.class, () -> store.delete("nope"));
    assertThrows(NodeNotFoundException.class, () -> store.move("nope", Position.lastRoot()));
    store.move("e", Position.after("e"));
    assertEquals(3, store.delete("d"));
    store.update("g", Map.of("name", "G"));
    assertThrows(NodeNotFoundException.class, () -> store.update("nope", Map.of("a", 1)));
    assertEquals(1, store.delete("a", dev.arbor.core.Deletion.LIFT_CHILDREN));
    assertThrows(dev.arbor.core.NodeHasChildrenException.class,
        () -> store.delete("b", dev.arbor.core.Deletion.LEAF_ONLY));
    assertEquals(List.of(), store.repair());
    List<TreeEvent> expected = List.of(
        event(Kind.LOAD, null, null, null, null, tree.size()),
        event(Kind.INSERT, "x", null, "c", Position.lastChildOf("c"), 1),
        event(Kind.INSERT, "y", null, "a", Position.after("g"), 1),
        event(Kind.INSERT, "r", null, null, Position.firstRoot(), 1),
        event(Kind.MOVE, "d", "b", "i", Position.lastChildOf("i"), 3),
        event(Kind.MOVE, "r", null, null, Position.after("i"), 1),
        event(Kind.DELETE, "d", "i", null, null, 3),
        event(Kind.UPDATE, "g", "a", "a", null, 1),
        event(Kind.DELETE, "a", null, null, null, 1));
    assertEquals(expected, unversioned(told));
    assertEquals(told, second, "a listener that throws does not stop the next one");
    for (int i = 1; i < told.size(); i++) {
      assertTrue(told.get(i).version() > told.get(i - 1).version(),
          "versions grow with the changes: " + told);
    }
    assertEquals(List.of(), store.check());
    assertEquals(tree.size() + 3 - 3 - 1, store.size(), "the throwing listener undid nothing");
  }
}
