package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A streamed load keeps the documents of the open path in hand across batches while that path is
 * short (an eighth of a batch), so that nested sets and child references send them complete, with
 * no late update; a path deeper than that is sent with placeholders and completed by late updates,
 * as before, and a load that switches between the two stores the same tree.
 */
class StreamLoadCarryTest {
  /** A complete 8-ary tree of {@code n} nodes, then a chain of {@code chain} under node 1. */
  static Tree tree(int n, int chain) {
    Tree.Builder b = Tree.builder();
    b.add("n0", null, Map.of("i", 0));
    for (int i = 1; i < n; i++) {
      b.add("n" + i, "n" + (i - 1) / 8, Map.of("i", i));
    }
    String parent = "n1";
    for (int i = 0; i < chain; i++) {
      b.add("c" + i, parent, Map.of("c", i));
      parent = "c" + i;
    }
    return b.build();
  }

  /** Loads {@code tree} in batches of 64; returns the number of update commands sent. */
  private static long load(TreePattern pattern, Tree tree) {
    NodeDataTest.Recorder recorder = new NodeDataTest.Recorder();
    try (MongoClient client = MongoTestServer.get().recordingClient(recorder)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection(client);
      MongoTreeStore store = (MongoTreeStore) pattern.open(c,
          ServerCapabilities.probing(c).loadBatchSize(64));
      store.ensureIndexes();
      recorder.armed = true;
      assertEquals(tree.size(), store.load(tree.entries().iterator()));
      recorder.armed = false;
      assertEquals(tree, store.snapshot());
      assertEquals(List.of(), store.check());
      return recorder.commands.stream().filter("update"::equals).count();
    }
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aBushyTreeGoesInWithoutLateUpdates(TreePattern pattern) {
    Tree bushy = tree(2_000, 0); // 32 batches, an open path of at most 5 nodes
    long updates = load(pattern, bushy);
    long lockOnly = load(TreePattern.PARENT_REFERENCES, bushy); // no late field at all
    assertEquals(lockOnly, updates, pattern + ": the load's update commands are the lock's only");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aDeepPathIsCompletedByLateUpdates(TreePattern pattern) {
    Tree deep = tree(600, 150); // a path of 150 open nodes: more than 64 / 8
    long updates = load(pattern, deep);
    if (pattern == TreePattern.NESTED_SETS || pattern == TreePattern.CHILD_REFERENCES) {
      assertTrue(updates > load(TreePattern.PARENT_REFERENCES, deep), pattern + ": " + updates);
    }
  }
}
