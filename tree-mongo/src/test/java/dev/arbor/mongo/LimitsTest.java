package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Deletion;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.bson.Fits;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** What cannot fit in a document is refused before anything is written, naming the node. */
class LimitsTest {

  @Test
  void aChildrenArrayThatWouldPassSixteenMegabytesIsRefusedUpFront() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore store = (MongoTreeStore) TreePattern.CHILD_REFERENCES.open(c);
    Tree.Builder builder = Tree.builder().add("p", null);
    String pad = "x".repeat(15_000);
    for (int i = 0; i < 1_050; i++) {
      builder.add(pad + i, "p");
    }
    Tree tree = builder.build();
    store.load(tree);
    String big = "y".repeat(1_100_000);
    TreeException e = assertThrows(TreeException.class,
        () -> store.insert(big, Position.lastChildOf("p")));
    assertTrue(e.getMessage().contains("children of 'p'") && e.getMessage().contains("16 MB"),
        e.getMessage());
    assertEquals(tree.size(), store.size(), "nothing was written");
    assertEquals(List.of(), store.check());
    store.insert("small", Position.lastChildOf("p")); // a short id still fits
    assertEquals(tree.size() + 1, store.size());
  }

  /** A chain of {@code n} nodes whose ids are {@code width} characters long. */
  private static Tree chain(int n, int width) {
    Tree.Builder b = Tree.builder();
    String parent = null;
    for (int i = 0; i < n; i++) {
      String id = String.format("%0" + width + "d", i);
      b.add(id, parent);
      parent = id;
    }
    return b.build();
  }

  @Test
  void aTreeTooDeepForItsPatternIsRefusedBeforeAnythingIsBuiltOrWritten() {
    Tree deep = chain(2_500, 8_000); // documents of ancestors and paths pass 16 MB near depth 2 090
    for (TreePattern pattern : List.of(TreePattern.ARRAY_OF_ANCESTORS,
        TreePattern.MATERIALIZED_PATHS)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      long t0 = System.nanoTime();
      NodeTooLargeException e = assertThrows(NodeTooLargeException.class,
          () -> pattern.open(c).load(deep));
      assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "refused quickly");
      String message = e.getMessage();
      assertTrue(message.contains("(depth 2 0") || message.matches(".*\\(depth 20[0-9]{2}\\).*"),
          message);
      assertTrue(message.contains(pattern + " pattern") && message.contains("16 MB")
          && message.contains("PARENT_REFERENCES, CHILD_REFERENCES, NESTED_SETS hold this tree"),
          message);
      assertTrue(e.bytes() > Fits.MAX_NODE, message);
      assertEquals(deep.ids().get(Integer.parseInt(e.nodeId())), e.nodeId());
      assertEquals(0, c.countDocuments(), "nothing written, not even the lock");
    }
    // What the message says holds it, holds it.
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreePattern.PARENT_REFERENCES.open(c).load(deep);
    assertEquals(deep.size(), TreePattern.PARENT_REFERENCES.open(c).size());
  }

  @Test
  void sizeRefusalChecksAStreamOfEntriesAsALoadWouldWithoutHoldingTheTree() {
    Tree deep = chain(2_500, 8_000);
    for (TreePattern pattern : TreePattern.values()) {
      NodeTooLargeException whole = Fits.check(pattern, deep,
          com.mongodb.MongoClientSettings.getDefaultCodecRegistry());
      var streamed = pattern.sizeRefusal(deep.entries().iterator());
      assertEquals(whole == null, streamed.isEmpty(), pattern.toString());
      if (whole != null) {
        assertEquals(whole.getMessage(), streamed.get().getMessage());
        assertEquals(whole.nodeId(), streamed.get().nodeId());
      }
    }
    // a parent of too many children for one document, found on the way
    Tree.Builder wide = Tree.builder().add("p", null);
    String suffix = "x".repeat(2_000);
    for (int i = 0; i < 9_000; i++) {
      wide.add(i + suffix, "p");
    }
    var refusal = TreePattern.CHILD_REFERENCES.sizeRefusal(wide.build().entries().iterator());
    assertTrue(refusal.isPresent());
    assertEquals("p", refusal.get().nodeId());
    assertTrue(refusal.get().getMessage().contains("children array"), refusal.get().getMessage());
    assertTrue(TreePattern.NESTED_SETS.sizeRefusal(wide.build().entries().iterator()).isEmpty());
    // entries out of preorder are refused, naming the entry
    List<Node> outOfOrder = List.of(new Node("a", null, 0, java.util.Map.of()),
        new Node("b", "a", 1, java.util.Map.of()),
        new Node("c", null, 0, java.util.Map.of()),
        new Node("d", "a", 1, java.util.Map.of()));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TreePattern.PARENT_REFERENCES.sizeRefusal(outOfOrder.iterator()));
    assertTrue(e.getMessage().contains("'d'"), e.getMessage());
  }

  @Test
  void theEstimateMatchesTheDocumentsAStoreWrites() {
    // Just under and just over the limit, for the patterns whose documents grow with depth:
    // the first refused depth by the estimate is the first the insert itself refuses.
    for (TreePattern pattern : List.of(TreePattern.ARRAY_OF_ANCESTORS,
        TreePattern.MATERIALIZED_PATHS)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      TreeStore store = pattern.open(c);
      int width = 4_500_000;
      Tree three = chain(4, width);
      NodeTooLargeException estimated = Fits.check(pattern, three,
          c.getCodecRegistry());
      assertTrue(estimated != null, pattern.toString());
      int refusedDepth = Integer.parseInt(estimated.nodeId());
      String parent = null;
      for (int depth = 0; depth < refusedDepth; depth++) {
        String id = three.ids().get(depth);
        store.insert(id, parent == null ? Position.lastRoot() : Position.lastChildOf(parent));
        parent = id;
      }
      String tooDeep = three.ids().get(refusedDepth);
      String under = parent;
      NodeTooLargeException e = assertThrows(NodeTooLargeException.class,
          () -> store.insert(tooDeep, Position.lastChildOf(under)));
      assertEquals(tooDeep, e.nodeId());
      assertEquals(refusedDepth, store.size(), "nothing written by the refused insert");
      assertEquals(List.of(), store.check());
    }
  }

  @Test
  void attributesTooLargeForOneDocumentAreRefusedNamingTheNode() {
    for (TreePattern pattern : TreePattern.values()) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      TreeStore store = pattern.open(c);
      store.insert("a", Position.lastRoot());
      java.util.Map<String, Object> huge = java.util.Map.of("text", "z".repeat(17_000_000));
      NodeTooLargeException e = assertThrows(NodeTooLargeException.class,
          () -> store.insert("b", Position.lastChildOf("a"), huge));
      assertEquals("b", e.nodeId());
      NodeTooLargeException load = assertThrows(NodeTooLargeException.class,
          () -> pattern.open(MongoTestServer.get().freshCollection())
              .load(Tree.builder().add("b", null, huge).build()));
      assertTrue(load.getMessage().contains("attributes alone"), load.getMessage());
      assertEquals(1, store.size());
      // An update too: refused before anything is written, not a raw driver exception (17 MB)
      // nor a connection the server closed on a command past its limit (16 MB less 300 bytes).
      // Found by a new user's trial.
      for (int length : List.of(17_000_000, 16 * 1024 * 1024 - 300)) {
        e = assertThrows(NodeTooLargeException.class,
            () -> store.update("a", java.util.Map.of("text", "z".repeat(length))));
        assertEquals("a", e.nodeId());
      }
      assertEquals(java.util.Map.of(), store.find("a").orElseThrow().attributes(), pattern
          + ": nothing written by the refused updates");
      store.update("a", java.util.Map.of("text", "fits"));
      assertEquals(List.of(), store.check());
    }
  }

  /** A store of child references bounded to 3 children, loaded with {@code outline}. */
  private static MongoTree bounded(String outline) {
    MongoTree store = TreePattern.CHILD_REFERENCES.open(MongoTestServer.get().freshCollection(),
        TreeOptions.defaults().withMaxChildren(3));
    store.load(Tree.parse(outline));
    return store;
  }

  private static void assertRefused(MongoTree store, String parent, Runnable call) {
    Tree before = store.snapshot();
    TreeException e = assertThrows(TreeException.class, call::run);
    assertTrue(e.getMessage().contains("children of '" + parent + "'")
        && e.getMessage().contains("withMaxChildren"), e.getMessage());
    assertEquals(before, store.snapshot(), "nothing was written");
    assertEquals(List.of(), store.check());
  }

  @Test
  void aFullParentRefusesAnInsertBeforeAnythingIsWritten() {
    MongoTree store = bounded("p(a b c) q");
    assertRefused(store, "p", () -> store.insert("d", Position.lastChildOf("p")));
    assertRefused(store, "p", () -> store.insert("d", Position.before("b")));
    store.insert("d", Position.lastChildOf("q")); // another parent has room
    store.insert("r", Position.lastRoot()); // roots are not an array
  }

  @Test
  void aMoveIntoAFullParentIsRefusedAndAMoveWithinItIsNot() {
    MongoTree store = bounded("p(a b c) q(x)");
    assertRefused(store, "p", () -> store.move("x", Position.firstChildOf("p")));
    assertRefused(store, "p", () -> store.move("q", Position.after("c")));
    store.move("a", Position.after("c")); // the same three children in another order
    assertEquals(List.of("b", "c", "a"), store.children("p"));
    store.move("c", Position.lastChildOf("x"));
    store.move("x", Position.lastChildOf("p")); // room again
  }

  @Test
  void liftingChildrenIntoAFullParentIsRefused() {
    MongoTree store = bounded("p(a(a1 a2) b c)");
    assertRefused(store, "p", () -> store.delete("a", Deletion.LIFT_CHILDREN));
    // it names the node deleted and the count it would make, not a sibling already there
    TreeException e = assertThrows(TreeException.class,
        () -> store.delete("a", Deletion.LIFT_CHILDREN));
    assertTrue(e.getMessage().contains("Cannot delete 'a' lifting its 2 children")
        && e.getMessage().contains("would have 4 children"), e.getMessage());
  }

  @Test
  void aLoadOfATooWideTreeWritesNothing() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTree store = TreePattern.CHILD_REFERENCES.open(c,
        TreeOptions.defaults().withMaxChildren(3));
    TreeException e = assertThrows(TreeException.class,
        () -> store.load(Tree.parse("r(p(a b c d))")));
    assertTrue(e.getMessage().contains("'p' has 4 children")
        && e.getMessage().contains("withMaxChildren"), e.getMessage());
    assertEquals(0, c.countDocuments(), "not even a lock document");
  }

  @Test
  void theDefaultBoundIsAHundredThousandChildren() {
    assertEquals(100_000, TreeOptions.DEFAULT_MAX_CHILDREN);
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    assertEquals(TreeOptions.DEFAULT_MAX_CHILDREN,
        TreeOptions.defaults().capabilities(c).maxChildren());
    assertEquals(7, TreeOptions.defaults().withMaxChildren(7).capabilities(c).maxChildren());
    // 100 000 UUID-sized ids: the parent stays under a third of the 16 MB limit.
    org.bson.BsonArray children = new org.bson.BsonArray();
    for (int i = 0; i < TreeOptions.DEFAULT_MAX_CHILDREN; i++) {
      children.add(new org.bson.BsonString(java.util.UUID.randomUUID().toString()));
    }
    long bytes = Encoded.size(new org.bson.BsonDocument("children", children));
    assertTrue(bytes < Encoded.MAX_DOCUMENT / 3, bytes + " bytes");
  }

  @Test
  void theBoundIsCheckedWhenSetAndAgainstThePatternWhenOpened() {
    for (int bad : new int[] {0, -1, 1_000_001}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TreeOptions.defaults().withMaxChildren(bad));
      assertTrue(e.getMessage().contains("maxChildren"), e.getMessage());
    }
    for (TreePattern p : TreePattern.values()) {
      if (p != TreePattern.CHILD_REFERENCES) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> p.open(MongoTestServer.get().freshCollection(),
                TreeOptions.defaults().withMaxChildren(5)));
        assertTrue(e.getMessage().contains("withMaxChildren"), e.getMessage());
      }
    }
  }
}
