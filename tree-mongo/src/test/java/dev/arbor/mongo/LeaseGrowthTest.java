package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A lease shorter than one command (a busy machine, a slow server) delays a change; it does not
 * stop it. A live holder whose command arrived after its lease renews it for twice as long and
 * sends the command again; the caller who takes over a journal from a holder that stopped
 * completes it under a longer lease than that holder had. Before, a lone holder whose every batch
 * arrived after its lease sent it again for ever under the tree's lock, claimed its marks again
 * for ever in a lane, and on a server that stops at the first error was halved to one statement
 * and resent until its lock wait ran out; and replays that each outlived their lease were taken
 * over in turn for ever (seen in {@code LinearizabilityTest} with 30 ms leases at a load of 12).
 */
@Execution(ExecutionMode.CONCURRENT)
class LeaseGrowthTest {
  private static final String FIXTURE = "a(b(c d(e f)) g(h)) i(j k)";
  private static final long LEASE = 80;
  /** How late every batch of the slow holder reaches the server: more than its lease. */
  private static final long LATE = 200;

  /** Sends every batch {@link #LATE} ms late; fences and claims go on time. */
  private static final class LateSender implements TreeLock.Sender {
    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      try {
        Thread.sleep(LATE);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return TreeLock.BULK.send(collection, batch);
    }
  }

  /**
   * A server that needs {@link #LATE} ms for every batch: one sent with a shorter time limit runs
   * out of it and changes nothing (as MongoDB may stop an ordered bulk write before its first
   * statement), one with enough time runs.
   */
  private static final class SlowServer implements TreeLock.Sender {
    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      Long limit = collection.getTimeout(TimeUnit.MILLISECONDS);
      if (limit != null && limit < LATE) {
        try {
          Thread.sleep(limit);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new MongoOperationTimeoutException("the server needs " + LATE + " ms, the batch"
            + " had " + limit + " ms");
      }
      return TreeLock.BULK.send(collection, batch);
    }
  }

  /**
   * On a server that stops an ordered bulk write at its first error (MongoDB's path: each batch
   * carries a time limit shorter than the lease, and is halved when it runs out of it), a step
   * alone that needs longer than the lease is sent again under a longer lease, whose time limit
   * lets it run. Before, it was halved down to one statement and sent again until the lock wait
   * ran out.
   */
  @TestFactory
  List<DynamicTest> aStepAloneSlowerThanItsLeaseOnAServerThatStopsAtTheFirstError() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      tests.add(DynamicTest.dynamicTest(pattern.toString(), () -> {
        SwitchableSender sender = new SwitchableSender();
        MongoTreeStore store = onAServerThatStops(pattern, sender, 60_000);
        store.load(Tree.parse(FIXTURE));
        movesGetThrough(store, sender, new SlowServer());
      }));
    }
    return tests;
  }

  /**
   * A store of {@code pattern} under the tree's lock, with the lease {@value #LEASE} ms and the
   * lock wait {@code waitMillis}, on a fresh collection of the server that stops an ordered bulk
   * write at its first error.
   */
  private static MongoTreeStore onAServerThatStops(TreePattern pattern, SwitchableSender sender,
      long waitMillis) {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, waitMillis).subtreeLocks(false).sender(sender));
    assertTrue(store.lock.ordered(), "the server's behaviour");
    return store;
  }

  /**
   * On a server that stops at the first error, a load whose every command needs longer than its
   * lease (its batches halved down to three statements still run out of their time limit) renews
   * its lease for longer, whose time limit lets them run. Before, the smallest batch was sent
   * again with the same time limit until the lock wait ran out.
   */
  @TestFactory
  List<DynamicTest> aLoadSlowerThanItsLeaseOnAServerThatStopsAtTheFirstError() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      tests.add(DynamicTest.dynamicTest(pattern.toString(), () -> {
        SwitchableSender sender = new SwitchableSender();
        MongoTreeStore store = onAServerThatStops(pattern, sender, 10_000);
        store.ensureIndexes();
        sender.target = new SlowServer();
        Tree tree = Tree.parse(FIXTURE);
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> store.load(tree),
            "a load slower than its lease never got through");
        sender.target = TreeLock.BULK;
        assertEquals(tree, store.snapshot());
        assertEquals(List.of(), store.check());
      }));
    }
    return tests;
  }

  @TestFactory
  List<DynamicTest> aLoneHolderWhoseBatchesArriveAfterItsLeaseStillCompletesItsChanges() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      for (boolean lanes : pattern == TreePattern.NESTED_SETS ? new boolean[] {false}
          : new boolean[] {true, false}) {
        tests.add(DynamicTest.dynamicTest(pattern + (lanes ? ", in a lane" : ", tree's lock"),
            () -> {
              MongoCollection<Document> c = MongoTestServer.get().freshCollection();
              SwitchableSender sender = new SwitchableSender();
              MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities
                  .probing(c).lease(LEASE, 60_000).subtreeLocks(lanes)
                  .optimisticChanges(!lanes).sender(sender)); // uncontended, lanes only so
              store.load(Tree.parse(FIXTURE));
              movesGetThrough(store, sender, new LateSender());
            }));
      }
    }
    return tests;
  }

  /**
   * Two moves on {@code store} (loaded with the fixture) through {@code slow} end within 30 s and
   * leave the tree they should: one of a leaf (one update in most patterns) and one of a subtree
   * (a journal).
   */
  private static void movesGetThrough(MongoTreeStore store, SwitchableSender sender,
      TreeLock.Sender slow) {
    sender.target = slow;
    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      store.move("h", Position.lastChildOf("c"));
      store.move("d", Position.firstChildOf("j"));
    }, "a lone holder slower than its lease never got its changes through");
    sender.target = TreeLock.BULK;
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(Tree.parse(FIXTURE));
    expected.move("h", Position.lastChildOf("c"));
    expected.move("d", Position.firstChildOf("j"));
    assertEquals(expected.snapshot(), store.snapshot());
    assertEquals(List.of(), store.check());
  }

  /**
   * A writer stops after its commit; the caller who takes it over stops too, in its replay; the
   * third caller finds that caller's lease twice the configured one.
   */
  @Test
  void aReplayTakenOverHadALongerLeaseThanTheHolderItCompleted() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    SwitchableSender sender = new SwitchableSender();
    MongoTreeStore crashing = (MongoTreeStore) TreePattern.NESTED_SETS.open(c,
        ServerCapabilities.probing(c).lease(300, 60_000).sender(sender));
    crashing.load(Tree.parse(FIXTURE));
    sender.target = StepwiseSender.crashingAfter(1);
    assertThrows(StepwiseSender.Crash.class, () -> crashing.delete("b"));
    // The second caller takes the stopped holder over and stops in its replay, before a write.
    SwitchableSender second = new SwitchableSender();
    second.target = StepwiseSender.crashingAfter(0);
    MongoTreeStore replaying = (MongoTreeStore) TreePattern.NESTED_SETS.open(c,
        ServerCapabilities.probing(c).lease(300, 60_000).sender(second));
    assertThrows(StepwiseSender.Crash.class,
        () -> replaying.insert("y", Position.lastRoot()));
    RecordingLogger log = new RecordingLogger();
    MongoTreeStore third = (MongoTreeStore) TreePattern.NESTED_SETS.open(c,
        ServerCapabilities.probing(c).lease(300, 60_000).log(log));
    long start = System.nanoTime();
    third.insert("z", Position.lastRoot());
    assertTrue(System.nanoTime() - start >= 500_000_000L, "waited for the replay's lease");
    List<String> warnings = log.lines.stream().filter(l -> l.startsWith("WARN ")).toList();
    assertEquals(1, warnings.size(), log.lines.toString());
    assertTrue(warnings.get(0).contains("took the lock over from a holder whose lease of 600 ms"),
        warnings.get(0));
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(Tree.parse(FIXTURE));
    expected.delete("b");
    expected.insert("z", Position.lastRoot());
    assertEquals(expected.snapshot(), third.snapshot());
    assertEquals(List.of(), third.check());
  }
}
