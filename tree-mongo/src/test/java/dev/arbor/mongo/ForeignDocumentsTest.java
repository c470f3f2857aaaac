package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import java.util.List;
import java.util.function.Function;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Collections written by another tool, in a shape close to the manual's but not quite: every
 * read answers or throws a {@link TreeException} that names the node and what to do; none throws
 * a {@code ClassCastException} or an {@code IllegalArgumentException} from deep inside, or
 * answers with a depth of 0 and a subtree cut short. Before: a parent that is a number made
 * {@code snapshot()}, {@code ancestors} and {@code find} throw {@code ClassCastException}; a
 * malformed path an {@code IllegalArgumentException}; nested sets without depths answered
 * {@code find} with depth 0 and {@code subtree(id, k)} with the node alone (then, until stop 56,
 * were refused; they now answer, the depths counted from the intervals).
 */
class ForeignDocumentsTest {
  static List<Arguments> shapes() {
    return List.of(
        Arguments.of("a parent that is a number", TreePattern.PARENT_REFERENCES, "C", List.of(
            "{_id: 'A', parent: null}", "{_id: 'B', parent: 'A'}", "{_id: 'C', parent: 7}")),
        Arguments.of("ancestors with a number for a parent", TreePattern.ARRAY_OF_ANCESTORS, "C",
            List.of("{_id: 'A', parent: null, ancestors: []}",
                "{_id: 'B', parent: 'A', ancestors: ['A']}",
                "{_id: 'C', parent: 7, ancestors: ['A', 'B']}")),
        Arguments.of("paths without their leading comma", TreePattern.MATERIALIZED_PATHS, "B",
            List.of("{_id: 'A', path: null}", "{_id: 'B', path: 'A,'}",
                "{_id: 'C', path: 'A,B,'}")),
        Arguments.of("a path that is a number", TreePattern.MATERIALIZED_PATHS, "C",
            List.of("{_id: 'A', path: null}", "{_id: 'B', path: ',A,'}",
                "{_id: 'C', path: 12}")),
        Arguments.of("a document whose _id is the empty string", TreePattern.PARENT_REFERENCES,
            "", List.of("{_id: 'A', parent: null}", "{_id: 'B', parent: 'A'}",
                "{_id: 'C', parent: 'B'}", "{_id: '', parent: 'A'}")),
        // every read answers: the depths are counted from the intervals (before stop 56 they
        // were refused naming the node)
        Arguments.of("nested sets without depths", TreePattern.NESTED_SETS, null, List.of(
            "{_id: 'A', parent: null, left: 1, right: 6}",
            "{_id: 'B', parent: 'A', left: 2, right: 5}",
            "{_id: 'C', parent: 'B', left: 3, right: 4}")));
  }

  /**
   * A reference that is a document or a binary (another application's) is shown in a read's
   * refusal by its extended JSON, as a user would search for it in mongosh, not by Java's
   * toString. (Found by a trial on collections made by others: {@code parent Document{{x=1}}}.)
   */
  @org.junit.jupiter.api.Test
  void aRefusalShowsAForeignValueByItsExtendedJson() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    c.insertOne(Document.parse("{_id: 'A', parent: null}"));
    c.insertOne(Document.parse("{_id: 'C', parent: {tenant: 'x', n: 1}}"));
    c.insertOne(new Document("_id", "D").append("parent",
        new org.bson.types.Binary((byte) 0x80, new byte[] {1, 2})));
    TreeStore store = TreePattern.PARENT_REFERENCES.open(c);
    String c1 = org.junit.jupiter.api.Assertions.assertThrows(TreeException.class,
        () -> store.ancestors("C")).getMessage();
    assertTrue(c1.contains("{\"tenant\": \"x\", \"n\": 1}"), c1);
    String d1 = org.junit.jupiter.api.Assertions.assertThrows(TreeException.class,
        () -> store.ancestors("D")).getMessage();
    assertTrue(d1.contains("{\"$binary\"") && !d1.contains("Binary@"), d1);
  }

  /**
   * check() shows the items of a child references {@code children} array that are not node ids
   * (a document, a binary another application wrote) by their extended JSON, not Java's toString.
   */
  @org.junit.jupiter.api.Test
  void checkShowsForeignChildrenItemsByTheirExtendedJson() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    c.insertOne(new Document("_id", "A").append("arborRank", 0).append("children", List.of("B",
        new Document("tenant", "x"), new org.bson.types.Binary((byte) 0x80, new byte[] {1, 2}))));
    c.insertOne(new Document("_id", "B").append("children", List.of()));
    TreeStore store = TreePattern.CHILD_REFERENCES.open(c);
    String said = store.check().toString();
    assertTrue(said.contains("{\"tenant\": \"x\"}") && said.contains("{\"$binary\"")
        && !said.contains("Document{{") && !said.contains("Binary@"), said);
  }

  /**
   * A change that would rewrite a {@code children} array holding values that are not node ids
   * (another tool's numbers, nulls, ObjectIds) is refused naming the node, and writes nothing:
   * the user's values are not dropped behind their back; {@code repair()} drops them when asked.
   * (Found by a trial on collections made by others: reads threw {@code ClassCastException}.)
   */
  @org.junit.jupiter.api.Test
  void aChangeToChildrenHoldingForeignValuesIsRefusedNamingTheNodeAndKeepsThem() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    List.of("{_id: 'A', children: ['B', 7, null], arborRank: 0}", "{_id: 'B', children: []}")
        .forEach(d -> c.insertOne(Document.parse(d)));
    TreeStore store = TreePattern.CHILD_REFERENCES.open(c);
    org.bson.conversions.Bson nodes = com.mongodb.client.model.Filters.type("_id", "string");
    List<Document> before = c.find(nodes).into(new java.util.ArrayList<>());
    List<Runnable> changes = List.of(() -> store.insert("X", dev.arbor.core.Position.lastChildOf("A")), () -> store.delete("B"),
        () -> store.move("B", dev.arbor.core.Position.lastRoot()));
    for (Runnable change : changes) {
      TreeException e = org.junit.jupiter.api.Assertions.assertThrows(TreeException.class,
          change::run);
      assertTrue(e.getMessage().contains("'A'") && e.getMessage().contains("children")
          && e.getMessage().contains("7") && e.getMessage().contains("repair() drops"),
          e.getMessage());
      org.junit.jupiter.api.Assertions.assertEquals(before, c.find(nodes).into(
          new java.util.ArrayList<>()), "a refused change wrote");
    }
    assertFalse(store.check().isEmpty(), "check() found nothing");
    store.repair();
    org.junit.jupiter.api.Assertions.assertEquals(List.of("B"), store.children("A"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("shapes")
  void readsAnswerOrNameTheNode(String shape, TreePattern pattern,
      @org.jspecify.annotations.Nullable String named,
      List<String> documents) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    documents.forEach(d -> c.insertOne(Document.parse(d)));
    TreeStore store = pattern.open(c);
    List<Function<TreeStore, Object>> reads = List.of(TreeStore::snapshot, TreeStore::roots,
        s -> s.children("A"), s -> s.descendants("A"), s -> s.ancestors("C"), s -> s.find("C"),
        s -> s.subtree("A", 5), s -> s.descendantNodes("A", 1));
    int refused = 0;
    for (Function<TreeStore, Object> read : reads) {
      try {
        Object answer = read.apply(store);
        if (answer instanceof java.util.Optional<?> o && o.isPresent()) {
          assertTrue(((dev.arbor.core.Node) o.get()).depth() == 2, shape + ": " + answer);
        }
      } catch (TreeException e) {
        refused++;
        assertTrue(named != null && e.getMessage().contains("'" + named + "'")
            || e.getMessage().contains("'C'"), shape + ": " + e.getMessage());
        assertTrue(e.getMessage().contains("check()"), shape + ": " + e.getMessage());
      }
    }
    if (named == null) { // every read answers
      assertEquals(0, refused, shape + ": a read refused");
      assertEquals(List.of("B", "C"), store.descendants("A"), shape);
      assertEquals(3, store.subtree("A", 5).size(), shape);
      assertEquals(List.of(1, 2), store.descendantNodes("A", 2).stream()
          .map(dev.arbor.core.Node::depth).toList(), shape);
    } else {
      assertTrue(refused > 0, shape + ": every read answered");
    }
    if (named == null) { // nested sets without depths are sound, as the manual writes them
      assertEquals(List.of(), store.check(), shape);
    } else {
      assertFalse(store.check().isEmpty(), shape + ": check() found nothing");
    }
  }
}
