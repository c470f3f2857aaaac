package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.bson.Document;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A read a change makes while it holds the tree's lock or a lane's marks (its plan, its
 * footprint, a lane's marks met) whose reply never comes, on a connection that stays open (a
 * stalled network, a client without a socket timeout, the driver's default): the change must
 * end, and the other writers go on. Before, such a read had no time limit: the holder waited for
 * ever while its lease was renewed in the background, and every other writer of the tree waited
 * for the lock until its own wait ran out. Now every read of a change is bounded as the lock's
 * commands are (a lease at least, at most half the lock wait or 10 s; each batch of a cursor
 * alike), and a read that runs out is made again, as after an I/O error, until the lock wait runs
 * out: one stalled read costs the change nothing. Every read counts: the index check before a
 * store's first change ({@code listIndexes}), the probe of {@code $graphLookup} its first walk
 * makes, the optimistic path's lock reads, each batch of a cursor; the move is of a subtree, so
 * that its plan walks it. (Before, a stalled {@code listIndexes} or probe held a store's first
 * change for ever, and a stalled lock read of the optimistic path, a store's default, ended the
 * change {@code NOT_APPLIED} after one command limit instead of planning it again under the
 * lock.)
 */
@Execution(ExecutionMode.CONCURRENT)
class StalledReadTest {
  private static final String FIXTURE = "a(b(c(h(j k) i) d) e) f(g)";
  private static final Predicate<String> READS =
      n -> n.equals("find") || n.equals("aggregate") || n.equals("count")
          || n.equals("getMore") || n.equals("listIndexes");

  /**
   * Every pattern with the tree's lock and no optimistic claim (every read under the lock), and
   * as a store is opened by default (optimistic claims; lanes where the pattern has them).
   */
  static List<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      cases.add(Arguments.of(pattern, false, false));
      cases.add(Arguments.of(pattern, pattern != TreePattern.NESTED_SETS, true));
    }
    return cases;
  }

  @ParameterizedTest(name = "{0}, lanes {1}, optimistic {2}")
  @MethodSource("cases")
  void aChangeWhoseReadStallsEndsAndTheOthersGoOn(TreePattern pattern, boolean lanes,
      boolean optimistic) throws Exception {
    try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri())) {
      int reads = run(pattern, lanes, optimistic, proxy, 0);
      assertTrue(reads > 0, "the move read nothing through the proxy");
      for (int k = 1; k <= reads; k++) {
        run(pattern, lanes, optimistic, proxy, k);
      }
    }
  }

  /**
   * Moves b (and its subtree) under g through the proxy, the {@code k}-th read stalled (0:
   * none), then inserts a node directly; checks the tree against what the move's call said.
   *
   * @return the reads the move made through the proxy
   */
  private static int run(TreePattern pattern, boolean lanes, boolean optimistic,
      CuttingProxy proxy, int k) {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    Tree fixture = Tree.parse(FIXTURE);
    pattern.open(direct).load(fixture);
    // the driver's defaults: no socket read timeout
    try (MongoClient client = MongoClients.create(
        MongoTestServer.settings("mongodb://127.0.0.1:" + proxy.port()))) {
      MongoCollection<Document> c = client.getDatabase(direct.getNamespace().getDatabaseName())
          .getCollection(direct.getNamespace().getCollectionName());
      TreeStore stalled = pattern.open(c, ServerCapabilities.probing(c).lease(200, 2_000)
          .optimisticChanges(optimistic).subtreeLocks(lanes));
      stalled.children("a");
      if (k == 0) {
        proxy.count(READS);
      } else {
        proxy.arm(CuttingProxy.Cut.STALL, k, READS);
      }
      ChangeInterruptedException.Outcome[] outcome = {null};
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
        try {
          stalled.move("b", Position.lastChildOf("g"));
        } catch (ChangeInterruptedException e) {
          outcome[0] = e.outcome();
        }
      }, () -> pattern + ", read " + k + " stalled: the move did not end");
      int reads = proxy.counted();
      proxy.disarm();
      TreeStore other = pattern.open(direct, ServerCapabilities.probing(direct)
          .lease(200, 10_000).subtreeLocks(lanes));
      assertTimeoutPreemptively(Duration.ofSeconds(30),
          () -> other.insert("z", Position.lastChildOf("g")),
          () -> pattern + ", read " + k + " stalled: the next writer did not get through");
      InMemoryTreeStore expected = new InMemoryTreeStore();
      expected.load(fixture);
      Tree after = pattern.open(direct).snapshot();
      boolean moved = "g".equals(after.get("b").parentId());
      if (outcome[0] == null || outcome[0] == ChangeInterruptedException.Outcome.COMMITTED
          || (outcome[0] == ChangeInterruptedException.Outcome.UNKNOWN && moved)) {
        expected.move("b", Position.lastChildOf("g"));
      }
      expected.insert("z", Position.lastChildOf("g"));
      assertEquals(List.of(), pattern.open(direct).check());
      assertEquals(expected.snapshot(), after, pattern + ", read " + k
          + " stalled, the move said " + (outcome[0] == null ? "applied" : outcome[0]));
      // one read stalled, within the lock wait: made again, the move goes through
      assertEquals(null, outcome[0], pattern + ", read " + k + " stalled");
      return reads;
    }
  }
}
