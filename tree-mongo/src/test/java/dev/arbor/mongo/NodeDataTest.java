package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.arbor.core.Node;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The round trips of the operations on node data, counted by a command listener on a store that
 * has seen the tree quiet (the steady state): the counts the stores' javadoc states.
 */
class NodeDataTest {
  /** Records the names of the commands sent while armed. */
  static final class Recorder implements CommandListener {
    final List<String> commands = new CopyOnWriteArrayList<>();
    final List<String> bodies = new CopyOnWriteArrayList<>();
    volatile boolean armed;

    @Override
    public void commandStarted(CommandStartedEvent event) {
      if (armed) {
        commands.add(event.getCommandName());
        bodies.add(event.getCommand().toJson());
      }
    }
  }

  private final Recorder recorder = new Recorder();
  private MongoClient client;

  @BeforeEach
  void connect() {
    client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(recorder).build());
  }

  @AfterEach
  void close() {
    client.close();
  }

  /** A store of {@code pattern} over a fresh collection of the recording client, loaded. */
  MongoTreeStore open(TreePattern pattern, String outline) {
    return open(pattern, Tree.parse(outline));
  }

  /** A store of {@code pattern} over a fresh collection of the recording client, loaded. */
  MongoTreeStore open(TreePattern pattern, Tree tree) {
    MongoCollection<Document> c = client.getDatabase(MongoTestServer.get().database().getName())
        .getCollection(MongoTestServer.get().freshCollection().getNamespace()
            .getCollectionName());
    MongoTreeStore store = (MongoTreeStore) pattern.open(c);
    store.lock.assumeOrdered(true); // count what a MongoDB server gets
    store.load(tree);
    store.snapshot();
    return store;
  }

  /** The commands {@code call} sends. */
  List<String> commands(MongoTreeStore store, Consumer<MongoTreeStore> call) {
    recorder.commands.clear();
    recorder.bodies.clear();
    recorder.armed = true;
    try {
      call.accept(store);
    } finally {
      recorder.armed = false;
    }
    return List.copyOf(recorder.commands);
  }

  @Test
  void updateIsOneReadAndOneWriteWithoutJournal() {
    for (TreePattern pattern : TreePattern.values()) {
      MongoTreeStore store = open(pattern, "a(b(c d) e)");
      List<String> sent = commands(store, s -> s.update("d", Map.of("title", "D")));
      assertEquals(List.of("find", "update"), sent, pattern + ": " + sent);
      String write = recorder.bodies.get(1);
      assertEquals(false, write.contains("\"" + TreeLock.JOURNAL + "\": {"),
          pattern + ": a journal was written: " + write);
      assertEquals(Map.of("title", "D"), store.find("d").orElseThrow().attributes());
    }
  }

  /** A catalog: categories, and products with a price under them. */
  static Tree catalog() {
    Tree.Builder b = Tree.builder();
    b.add("shop", null, Map.of("kind", "category"));
    for (int c = 0; c < 3; c++) {
      b.add("cat" + c, "shop", Map.of("kind", "category"));
      b.add("sub" + c, "cat" + c, Map.of("kind", "category"));
      for (int p = 0; p < 4; p++) {
        b.add("p" + c + p, p % 2 == 0 ? "cat" + c : "sub" + c,
            Map.of("kind", "product", "price", c * 10 + p));
      }
    }
    b.add("other", null, Map.of("kind", "product", "price", 1));
    return b.build();
  }

  @Test
  void filteredDescendantsAndChildrenComeInOrderFromTheServer() {
    Tree tree = catalog();
    for (TreePattern pattern : TreePattern.values()) {
      MongoTreeStore store = open(pattern, tree);
      List<String> cheap = new ArrayList<>();
      for (String id : dev.arbor.core.TreeStoreContract.expectedDescendants(tree, "shop",
          Integer.MAX_VALUE)) {
        if (tree.get(id).attributes().get("price") instanceof Integer p && p < 12) {
          cheap.add(id);
        }
      }
      List<Node> found = store.descendantNodes("shop", Integer.MAX_VALUE,
          Filters.lt("price", 12));
      assertEquals(dev.arbor.core.TreeStoreContract.nodes(tree, cheap), found,
          pattern.toString());
      assertEquals(List.of("p00", "p02"), ids(store.descendantNodes("cat0", 1,
          Filters.eq("kind", "product"))), pattern.toString());
      assertEquals(List.of("p20", "p22"), ids(store.childNodes("cat2", "sub2", 5,
          Filters.eq("kind", "product"))), pattern.toString());
      assertThrows(IllegalArgumentException.class, () -> store.childNodes("cat2", "p00", 5,
          Filters.eq("kind", "product")));
      assertEquals(List.of("p22"), ids(store.childNodes("cat2", "p20", 5,
          Filters.eq("kind", "product"))), pattern.toString());
      assertEquals(List.of("p20"), ids(store.childNodes("cat2", null, 1,
          Filters.gte("price", 20))), pattern.toString());
      assertEquals(List.of(), store.childNodes("cat2", null, 3, Filters.gte("price", 99)));
      for (String field : store.structuralFields()) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> store.descendantNodes("shop", 2, Filters.and(Filters.eq("kind", "x"),
                Filters.or(Filters.exists(field), Filters.eq(field + ".x", 1)))));
        assertTrue(e.getMessage().contains("'" + field + "'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> store.childNodes("shop", null, 2,
            Filters.expr(new Document("$gt", List.of("$" + field, 0)))));
        assertTrue(e.getMessage().contains("'" + field + "'"), e.getMessage());
      }
      assertThrows(IllegalArgumentException.class, () -> store.descendantNodes("shop", 2,
          Filters.where("true")));
      assertThrows(NodeNotFoundException.class, () -> store.descendantNodes("nope", 2,
          Filters.eq("kind", "product")));
      assertEquals(List.of("p00"),
          ids(store.descendantNodes("shop", 9, Filters.eq("_id", "p00"))));
    }
  }

  @Test
  void subtreeFilterSelectsTheSubtreeInTheCallersQueries() {
    Tree tree = catalog();
    for (TreePattern pattern : TreePattern.values()) {
      MongoTreeStore store = open(pattern, tree);
      for (String id : List.of("shop", "cat1", "sub2", "p00", "other")) {
        List<String> expected = new ArrayList<>();
        expected.add(id);
        expected.addAll(dev.arbor.core.TreeStoreContract.expectedDescendants(tree, id,
            Integer.MAX_VALUE));
        List<String> got = new ArrayList<>();
        for (Document d : store.collection.find(store.subtreeFilter(id))) {
          got.add(d.getString("_id"));
        }
        assertEquals(new java.util.TreeSet<>(expected), new java.util.TreeSet<>(got),
            pattern + " " + id);
        assertEquals(2, store.collection.countDocuments(Filters.and(store.subtreeFilter("cat1"),
            Filters.gte("price", 12))), pattern.toString());
      }
      assertThrows(NodeNotFoundException.class, () -> store.subtreeFilter("nope"));
    }
  }

  private static List<String> ids(List<Node> nodes) {
    return nodes.stream().map(Node::id).toList();
  }

  /**
   * A tree of about {@code size} nodes whose part around {@code t} is the same at every size:
   * {@code top(t(t0(t00 t01) t1 t2) …filler)}, the filler a balanced 4-ary forest under {@code
   * top} after {@code t}.
   */
  static Tree sized(int size) {
    Tree.Builder b = Tree.builder();
    b.add("top", null, Map.of("n", 0));
    b.add("t", "top", Map.of("n", 1));
    for (String c : List.of("t0", "t1", "t2")) {
      b.add(c, "t", Map.of("n", 2));
    }
    b.add("t00", "t0", Map.of("n", 3));
    b.add("t01", "t0", Map.of("n", 3));
    for (int i = 0; b.size() < size; i++) {
      b.add("f" + i, i < 4 ? "top" : "f" + (i / 4 - 1), Map.of("n", i));
    }
    return b.build();
  }

  /** The round trips of each read of node data, per pattern, at two sizes. */
  @Test
  void roundTripsDoNotGrowWithTheTree() {
    List<Integer> sizes = new ArrayList<>();
    for (String each : System.getProperty("arbor.nodeFigures.sizes", "1000,10000").split(",")) {
      sizes.add(Integer.parseInt(each.strip()));
    }
    Map<String, Consumer<MongoTreeStore>> calls = new java.util.LinkedHashMap<>();
    calls.put("update", s -> s.update("t1", Map.of("n", 5)));
    calls.put("subtree", s -> s.subtree("t", Integer.MAX_VALUE));
    calls.put("subtree, depth 1", s -> s.subtree("t", 1));
    calls.put("childNodes", s -> s.childNodes("t"));
    calls.put("childNodes, next page", s -> s.childNodes("t", "t0", 2));
    calls.put("ancestorNodes", s -> s.ancestorNodes("t01"));
    calls.put("descendantNodes", s -> s.descendantNodes("t", Integer.MAX_VALUE));
    calls.put("descendantNodes, filtered", s -> s.descendantNodes("t", Integer.MAX_VALUE,
        Filters.eq("n", 3)));
    calls.put("childCount", s -> s.childCount("t"));
    calls.put("descendantCount", s -> s.descendantCount("t"));
    calls.put("isLeaf", s -> s.isLeaf("t"));
    calls.put("siblings", s -> s.siblings("t0"));
    calls.put("subtreeFilter", s -> s.subtreeFilter("t"));
    StringBuilder table = new StringBuilder("\n| call | size |");
    for (TreePattern p : TreePattern.values()) {
      table.append(' ').append(p.name().toLowerCase(java.util.Locale.ROOT)).append(" |");
    }
    Map<String, long[][]> counts = new java.util.LinkedHashMap<>();
    for (String call : calls.keySet()) {
      counts.put(call, new long[sizes.size()][TreePattern.values().length]);
    }
    for (int z = 0; z < sizes.size(); z++) {
      Tree tree = sized(sizes.get(z));
      for (TreePattern pattern : TreePattern.values()) {
        MongoTreeStore store = open(pattern, tree);
        for (Map.Entry<String, Consumer<MongoTreeStore>> call : calls.entrySet()) {
          call.getValue().accept(store); // warm: the store has seen the tree quiet since
          counts.get(call.getKey())[z][pattern.ordinal()] =
              commands(store, call.getValue()).size();
        }
        store.collection.drop();
      }
    }
    for (Map.Entry<String, long[][]> e : counts.entrySet()) {
      for (int z = 0; z < sizes.size(); z++) {
        table.append("\n| ").append(e.getKey()).append(" | ").append(sizes.get(z)).append(" |");
        for (long n : e.getValue()[z]) {
          table.append(' ').append(n).append(" |");
        }
      }
      for (TreePattern p : List.of(TreePattern.ARRAY_OF_ANCESTORS,
          TreePattern.MATERIALIZED_PATHS, TreePattern.NESTED_SETS)) {
        for (int z = 1; z < sizes.size(); z++) {
          assertEquals(e.getValue()[0][p.ordinal()], e.getValue()[z][p.ordinal()],
              p + ": " + e.getKey() + " at " + sizes.get(0) + " and " + sizes.get(z));
        }
      }
    }
    System.out.println(table);
  }
}
