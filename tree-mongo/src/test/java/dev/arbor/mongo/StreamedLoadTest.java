package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeEvent;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Loads from an iterator of entries and grafts of every pattern, in batches small enough that a
 * tree of a few hundred nodes crosses many of them (late updates of nodes sent while open, a
 * refusal met in a later batch), plain and scoped; and a graft of 5 000 generated entries (never
 * a {@link Tree}) whose round trips are counted: O(n / batch).
 */
class StreamedLoadTest {

  /** A forest of {@code n} nodes of mixed depth and width, some with attributes. */
  static Tree mixed(int n, String prefix, long seed) {
    Random random = new Random(seed);
    Tree.Builder b = Tree.builder();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = prefix + i;
      String parent = ids.isEmpty() || random.nextInt(10) == 0 ? null
          : random.nextBoolean() ? ids.get(ids.size() - 1) : ids.get(random.nextInt(ids.size()));
      b.add(id, parent, i % 3 == 0 ? Map.of("n", i, "tags", List.of("t" + i)) : Map.of());
      ids.add(id);
    }
    return b.build();
  }

  private static MongoTreeStore small(TreePattern pattern, MongoCollection<Document> c,
      TreeOptions options) {
    MongoTreeStore s = (MongoTreeStore) pattern.open(c, options.capabilities(c).loadBatchSize(7));
    s.ensureIndexes();
    return s;
  }

  private static MongoTreeStore small(TreePattern pattern) {
    return small(pattern, MongoTestServer.get().freshCollection(), TreeOptions.defaults());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void loadFromEntriesInSmallBatchesAndCopyToEveryPattern(TreePattern pattern) {
    Tree tree = mixed(400, "n", 1);
    MongoTreeStore store = small(pattern);
    assertEquals(tree.size(), store.load(tree.entries().iterator()));
    assertEquals(tree, store.snapshot());
    assertEquals(List.of(), store.check());
    for (TreePattern other : TreePattern.values()) {
      MongoTreeStore copy = small(other);
      try (Stream<Node> entries = store.entries()) {
        copy.load(entries.iterator());
      }
      assertEquals(tree, copy.snapshot(), pattern + " to " + other);
      assertEquals(List.of(), copy.check(), pattern + " to " + other);
    }
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void graftsInSmallBatches(TreePattern pattern) {
    grafts(small(pattern));
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void graftsInSmallBatchesInAScopedTree(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore neighbour = small(pattern, c, TreeOptions.defaults().withScope("tree", "n"));
    Tree other = mixed(50, "b", 2); // the same ids as the grafted tree's base, in another tree
    neighbour.load(other);
    grafts(small(pattern, c, TreeOptions.defaults().withScope("tree", "t")));
    assertEquals(other, neighbour.snapshot());
    assertEquals(List.of(), neighbour.check());
  }

  private static void grafts(MongoTreeStore store) {
    Tree base = mixed(120, "b", 2);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(base);
    store.load(base);
    Tree first = mixed(150, "g", 3);
    Tree second = mixed(60, "h", 4);
    String under = base.entries().get(base.size() / 2).id();
    assertEquals(first.size(), store.graft(under, first.entries().iterator()));
    expected.graft(under, first);
    assertEquals(expected.snapshot(), store.snapshot());
    store.graft(null, second.entries().iterator());
    expected.graft(null, second);
    assertEquals(expected.snapshot(), store.snapshot());
    Tree third = mixed(30, "k", 5);
    String leaf = "g149";
    store.graft(leaf, third);
    expected.graft(leaf, third);
    assertEquals(expected.snapshot(), store.snapshot());
    assertEquals(List.of(), store.check());
    // A graft that meets an existing id in a later batch leaves nothing of its earlier batches.
    Tree clash = Tree.builder().add("new0", null).add("new1", "new0").add("new2", "new0")
        .add("new3", "new2").add("new4", null).add("new5", "new4").add("new6", "new4")
        .add("new7", "new6").add("new8", "new6").add("g7", "new8").build();
    DuplicateNodeException d = assertThrows(DuplicateNodeException.class,
        () -> store.graft(under, clash.entries().iterator()));
    assertEquals("g7", d.id());
    // An entry out of preorder in a later batch, too.
    List<Node> disorder = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      disorder.add(new Node("z" + i, i == 0 ? null : "z" + (i - 1), i, Map.of()));
    }
    disorder.add(new Node("lost", "z3x", 0, Map.of()));
    TreeException e = assertThrows(TreeException.class,
        () -> store.graft(under, disorder.iterator()));
    assertTrue(e.getMessage().contains("'lost'"), e.getMessage());
    assertEquals(expected.snapshot(), store.snapshot());
    assertEquals(List.of(), store.check());
    store.insert("last", Position.lastChildOf(under));
    expected.insert("last", Position.lastChildOf(under));
    store.move(under, Position.firstRoot());
    expected.move(under, Position.firstRoot());
    assertEquals(expected.snapshot(), store.snapshot());
    assertEquals(List.of(), store.check());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aLoadRefusedInALaterBatchLeavesTheStoreEmpty(TreePattern pattern) {
    MongoTreeStore store = small(pattern);
    Tree tree = mixed(100, "n", 6);
    List<Node> entries = new ArrayList<>(tree.entries());
    entries.add(new Node("n5", null, 0, Map.of())); // a repeated id, batches later
    assertThrows(DuplicateNodeException.class, () -> store.load(entries.iterator()));
    assertEquals(0, store.size());
    assertEquals(List.of(), store.check());
    entries.set(entries.size() - 1, new Node("big", null, 0,
        Map.of("blob", "x".repeat(17 * 1024 * 1024))));
    NodeTooLargeException big = assertThrows(NodeTooLargeException.class,
        () -> store.load(entries.iterator()));
    assertEquals("big", big.nodeId());
    assertEquals(0, store.size());
    store.load(tree.entries().iterator());
    assertEquals(tree, store.snapshot());
  }

  /**
   * A value with no codec is named as {@code checkAttributes} names it, though a streamed load
   * encodes each document once, whole (for nested sets and child references only when its
   * subtree closes, entries later), and the load is undone.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void anAttributeThatDoesNotEncodeIsNamedAndTheLoadUndone(TreePattern pattern) {
    MongoTreeStore store = small(pattern);
    Tree tree = mixed(100, "n", 7);
    List<Node> entries = new ArrayList<>();
    for (Node e : tree.entries()) {
      entries.add(e.id().equals("n60") ? new Node(e.id(), e.parentId(), e.depth(),
          Map.of("fine", 1, "thing", new Object())) : e);
    }
    RuntimeException e = assertThrows(RuntimeException.class,
        () -> store.load(entries.iterator()));
    assertTrue(e.getMessage().contains("Attribute 'thing' of node 'n60' cannot be stored in"
        + " BSON"), e.toString());
    assertEquals(0, store.size());
    assertEquals(List.of(), store.check());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aUniqueIndexOfTheCallersIsNotMistakenForARepeatedId(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    // sparse (or partial): Arbor's own documents (the lock, its fences) have no sku
    c.createIndex(new Document("sku", 1),
        new com.mongodb.client.model.IndexOptions().unique(true).sparse(true));
    MongoTreeStore store = small(pattern, c, TreeOptions.defaults());
    List<Node> entries = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      entries.add(new Node("n" + i, null, 0, Map.of("sku", i == 39 ? "s3" : "s" + i)));
    }
    RuntimeException e = assertThrows(RuntimeException.class,
        () -> store.load(entries.iterator()));
    assertFalse(e instanceof DuplicateNodeException, e.toString());
    assertTrue(e.getMessage().contains("sku"), e.getMessage());
    assertEquals(0, store.size());
    assertEquals(List.of(), store.check());
  }

  @Test
  void childReferencesRefuseAGraftPastMaxChildren() {
    MongoTreeStore store = small(TreePattern.CHILD_REFERENCES,
        MongoTestServer.get().freshCollection(), TreeOptions.defaults().withMaxChildren(10));
    store.load(Tree.parse("p(a b c d e f g h)"));
    TreeException e = assertThrows(TreeException.class,
        () -> store.graft("p", Tree.parse("x y z").entries().iterator()));
    assertTrue(e.getMessage().contains("'p'") && e.getMessage().contains("withMaxChildren"),
        e.getMessage());
    assertEquals(8, store.childCount("p"));
    store.graft("p", Tree.parse("x y"));
    assertEquals(10, store.childCount("p"));
    assertThrows(TreeException.class, () -> store.graft("a",
        Tree.parse("q(0 1 2 3 4 5 6 7 8 9 10)").entries().iterator()));
    assertEquals(11, store.size());
    assertEquals(List.of(), store.check());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void listenersHearALoadAndAGraft(TreePattern pattern) {
    List<TreeEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    MongoTreeStore store = small(pattern, MongoTestServer.get().freshCollection(),
        TreeOptions.defaults().withListener(events::add));
    store.load(Tree.parse("a(b) c").entries().iterator());
    store.graft("b", Tree.parse("x(y)").entries().iterator());
    store.graft(null, Tree.parse("r"));
    assertEquals(List.of(TreeEvent.Kind.LOAD, TreeEvent.Kind.GRAFT, TreeEvent.Kind.GRAFT),
        events.stream().map(TreeEvent::kind).toList());
    assertEquals(3, events.get(0).nodes());
    assertEquals("b", events.get(1).newParent());
    assertEquals(2, events.get(1).nodes());
    assertEquals(null, events.get(2).newParent());
  }

  // ------------------------------------------------------------------ at scale, round trips

  /**
   * {@code n} entries generated one by one in preorder, never held: chains of 50 under roots of
   * 1 000 nodes, with one attribute each.
   */
  static Iterator<Node> generated(String prefix, int n) {
    return new Iterator<>() {
      private int i;

      @Override
      public boolean hasNext() {
        return i < n;
      }

      @Override
      public Node next() {
        if (i >= n) {
          throw new NoSuchElementException();
        }
        int k = i++;
        String parent = k % 1_000 == 0 ? null
            : k % 50 == 0 ? prefix + (k - k % 1_000) : prefix + (k - 1);
        return new Node(prefix + k, parent, 0, Map.of("k", k));
      }
    };
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void fiveThousandGeneratedEntriesInORoundTripsPerBatch(TreePattern pattern) {
    NodeDataTest.Recorder recorder = new NodeDataTest.Recorder();
    try (MongoClient client = MongoTestServer.get().recordingClient(recorder)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection(client);
      int batch = 125;
      int n = 5_000; // 40 batches (on the embedded server a nested-set shift scans the collection)
      MongoTreeStore store = (MongoTreeStore) pattern.open(c,
          ServerCapabilities.probing(c).loadBatchSize(batch));
      store.ensureIndexes();
      store.lock.assumeOrdered(true);
      store.load(Tree.parse("top(mid(leaf) next)"));
      recorder.armed = true;
      assertEquals(n, store.graft("mid", generated("g", n)));
      recorder.armed = false;
      int graftCommands = recorder.commands.size();
      recorder.commands.clear();
      MongoCollection<Document> secondCollection = client.getDatabase(
          c.getNamespace().getDatabaseName()).getCollection(MongoTestServer.get()
          .freshCollection().getNamespace().getCollectionName());
      MongoTreeStore second = (MongoTreeStore) pattern.open(secondCollection,
          ServerCapabilities.probing(secondCollection).loadBatchSize(batch));
      second.lock.assumeOrdered(true);
      recorder.armed = true;
      assertEquals(n, second.load(generated("l", n)));
      recorder.armed = false;
      int loadCommands = recorder.commands.size();
      System.out.println(pattern + ": graft of " + n + " entries in batches of " + batch + ": "
          + graftCommands + " commands; load: " + loadCommands);
      // Per batch: one insert (the server's _id index refuses an id that exists: no query), at
      // most one command of late updates (nested sets, child references); plus a constant for
      // the lock and the commit.
      int most = 2 * (n / batch) + 20;
      assertTrue(graftCommands <= most, graftCommands + " commands > " + most);
      assertTrue(loadCommands <= most, loadCommands + " commands > " + most);
      assertEquals(n + 4, store.size());
      assertEquals(List.of("leaf", "g0", "g1000"),
          store.children("mid").subList(0, 3));
      assertEquals(List.of("top", "mid", "g0", "g1"), store.ancestors("g2"));
      assertEquals(List.of("next"), store.siblings("mid"));
      assertFalse(store.isDescendant("next", "mid"));
      assertEquals(List.of(), store.check());
      assertEquals(List.of(), second.check());
      assertEquals(n, second.size());
    }
  }
}
