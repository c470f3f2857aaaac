package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.read.KeyedPreorder;
import dev.arbor.mongo.internal.read.Preorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link KeyedPreorder}: the walk of parent references, the array of ancestors and materialized
 * paths gives the snapshot's preorder for random forests under any bounds (answers cut in the
 * middle of a group, read-ahead stopped, nodes read by cursor), in about n / keys-per-query
 * round trips for a bushy tree, holding what its bounds say.
 */
class KeyedPreorderTest {

  /**
   * A random forest of {@code n} nodes: each node's parent is a random earlier node (or none),
   * drawn near the end for deep shapes or anywhere for bushy ones; ids in random order of their
   * ranks, some with attributes.
   */
  static Tree randomForest(Random rnd, int n) {
    Tree.Builder b = Tree.builder();
    List<String> ids = new ArrayList<>();
    double deep = rnd.nextDouble();
    for (int i = 0; i < n; i++) {
      String id = Integer.toString(rnd.nextInt(1_000_000), 36) + "," + i;
      String parent = null;
      if (!ids.isEmpty() && rnd.nextInt(10) > 0) {
        int at = rnd.nextDouble() < deep ? ids.size() - 1 - rnd.nextInt(Math.min(3, ids.size()))
            : rnd.nextInt(ids.size());
        parent = ids.get(at);
      }
      b.add(id, parent, i % 3 == 0 ? Map.of("i", (long) i) : Map.of());
      ids.add(id);
    }
    return b.build();
  }

  /** The complete 8-ary tree of {@code n} nodes. */
  static Tree bushy(int n) {
    Tree.Builder b = Tree.builder();
    for (int i = 0; i < n; i++) {
      b.add("n" + i, i == 0 ? null : "n" + (i - 1) / 8);
    }
    return b.build();
  }

  private static MongoTreeStore loaded(TreePattern pattern, Tree tree) {
    MongoTreeStore store = (MongoTreeStore) pattern.open(MongoTestServer.get().freshCollection());
    store.ensureIndexes();
    store.load(tree);
    return store;
  }

  private static List<Node> walk(MongoTreeStore store, int keys, int limit, int held,
      KeyedPreorder[] walked) {
    return store.read(r -> {
      List<Node> out = new ArrayList<>();
      try (KeyedPreorder w = new KeyedPreorder(r, store.preorderKeys(), store::attributesOf,
          keys, limit, held)) {
        walked[0] = w;
        w.forEachRemaining(out::add);
      }
      return out;
    });
  }

  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"PARENT_REFERENCES", "ARRAY_OF_ANCESTORS",
      "MATERIALIZED_PATHS"})
  void walksThePreorderOfRandomForestsUnderAnyBounds(TreePattern pattern) {
    Random rnd = new Random(pattern.ordinal() * 7919L + 14);
    KeyedPreorder[] w = new KeyedPreorder[1];
    for (int trial = 0; trial < 25; trial++) {
      Tree tree = randomForest(rnd, rnd.nextInt(120));
      MongoTreeStore store = loaded(pattern, tree);
      int depth = tree.entries().stream().mapToInt(Node::depth).max().orElse(0);
      for (int[] bounds : new int[][] {{2, 1, 1}, {2, 3, 4}, {4, 6, 12},
          {1 + rnd.nextInt(20), 1 + rnd.nextInt(30), rnd.nextInt(60)},
          {KeyedPreorder.KEYS, KeyedPreorder.LIMIT, KeyedPreorder.HELD}}) {
        List<Node> got = walk(store, bounds[0], bounds[1], bounds[2], w);
        assertEquals(tree.entries(), got, "trial " + trial + ", bounds "
            + java.util.Arrays.toString(bounds) + ", tree " + tree);
        // read ahead only below the bound, then one answer (or one slice) per open level
        long most = bounds[2] + (long) Math.max(bounds[1], Preorder.SLICE) * (depth + 2);
        assertTrue(w[0].mostHeld() <= most, w[0].mostHeld() + " > " + most);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"PARENT_REFERENCES", "ARRAY_OF_ANCESTORS",
      "MATERIALIZED_PATHS"})
  void aBushyTreeTakesAboutNOverKeysRoundTrips(TreePattern pattern) {
    Tree tree = bushy(4_681); // depth 4: 585 nodes with children
    MongoTreeStore store = loaded(pattern, tree);
    KeyedPreorder[] w = new KeyedPreorder[1];
    assertEquals(tree.entries(), walk(store, KeyedPreorder.KEYS, KeyedPreorder.LIMIT,
        KeyedPreorder.HELD, w));
    System.out.println(pattern + ": 4 681 nodes in " + w[0].queries() + " queries, at most "
        + w[0].mostHeld() + " documents held");
    // one query per node with children (585) and per slice of siblings before
    assertTrue(w[0].queries() <= 4_681 / KeyedPreorder.KEYS * 2, w[0].queries() + " queries");
    // with small bounds, still about n / keys
    assertEquals(tree.entries(), walk(store, 50, 100, 200, w));
    System.out.println(pattern + ": with 50 keys a query: " + w[0].queries() + " queries, at most "
        + w[0].mostHeld() + " held");
    assertTrue(w[0].queries() <= 4_681 / 50 * 3, w[0].queries() + " queries");
    assertTrue(w[0].mostHeld() <= 200 + 100 * 6, w[0].mostHeld() + " held");
    // the public stream is this walk
    try (java.util.stream.Stream<Node> entries = store.entries()) {
      assertEquals(tree.entries(), entries.toList());
    }
  }
}
