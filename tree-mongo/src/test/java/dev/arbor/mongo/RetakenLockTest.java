package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.LeaseScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A caller that took the tree's lock over from a holder that stopped, and was itself taken over
 * while it completed that holder's journal, waits in line again and takes the lock under a token
 * of its own, not the one the caller after it revoked. Before, it took the freed lock again under
 * the same token, and its change's first insert command met the insert fence that the caller
 * after it had taken from that token: a change of one document was told that it lost the lock
 * "to another caller" doing the same change (itself: {@code LockLostException}, {@code
 * NOT_APPLIED}, from a live holder), and a journaled change (child references, nested sets) held
 * the lock, renewed in the background, while it waited for "another caller" to complete its own
 * journal, every writer and reader of the tree waiting with it until its lock wait ran out
 * ({@code COMMITTED}, "another caller is still completing it"). Seen in {@code
 * LinearizabilityTest} with 30 ms leases on a busy machine: a round of nested sets about 60 s
 * longer than the others (the lock document named the waiting caller as its holder, with its own
 * journal pending, and its first insert fence was the other caller's).
 */
@Execution(ExecutionMode.CONCURRENT)
class RetakenLockTest {
  private static final String FIXTURE = "a(b(c d(e f)) g(h)) i(j k)";
  private static final long LEASE = 300;
  /** The lock wait of the caller taken over: its change must end well within it. */
  private static final long WAIT = 8_000;

  /** The JVM's renewals, skipped while {@link #paused} (a paused process renews nothing). */
  private static final class PausableRenewals implements LeaseScheduler {
    volatile boolean paused = true;

    @Override
    public Future<?> every(long periodMillis, Runnable renewal) {
      return LeaseScheduler.SYSTEM.every(periodMillis, () -> {
        if (!paused) {
          renewal.run();
        }
      });
    }
  }

  @TestFactory
  List<DynamicTest> aCallerTakenOverInItsReplayTakesTheLockAgainUnderANewToken() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      tests.add(DynamicTest.dynamicTest(pattern.toString(), () -> run(pattern)));
    }
    return tests;
  }

  private static void run(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    // A holder stops after its commit, holding the lock with its journal pending.
    SwitchableSender crash = new SwitchableSender();
    MongoTreeStore stopped = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 60_000).subtreeLocks(false).sender(crash));
    stopped.load(Tree.parse(FIXTURE));
    crash.target = StepwiseSender.crashingAfter(2);
    assertThrows(StepwiseSender.Crash.class, () -> stopped.delete("d"));
    // The first caller takes it over and is held in its replay, its lease not renewed (a paused
    // process), until the second caller has taken it over in turn and done its own change.
    // its first command held until go
    FailThenPauseSender held = new FailThenPauseSender(batch -> true, null);
    PausableRenewals renewals = new PausableRenewals();
    MongoTreeStore first = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, WAIT).subtreeLocks(false).renewals(renewals).sender(held));
    RecordingLogger log = new RecordingLogger();
    MongoTreeStore second = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 60_000).subtreeLocks(false).log(log));
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Long> inserting = pool.submit(() -> {
        long start = System.nanoTime();
        first.insert("y", Position.lastChildOf("i"));
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      });
      assertTrue(held.reached.await(30, TimeUnit.SECONDS), "the first caller never replayed");
      second.move("h", Position.lastChildOf("c"));
      assertTrue(log.lines.stream().anyMatch(l -> l.contains("took the lock over")
          && l.contains("doing: insert 'y'")), pattern + ": " + log.lines);
      renewals.paused = false; // the process goes on: its holds are renewed again
      held.go.countDown();
      long took = inserting.get(60, TimeUnit.SECONDS);
      assertTrue(took < WAIT / 2, pattern + ": the insert took " + took + " ms");
    } finally {
      held.go.countDown();
      pool.shutdownNow();
    }
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(Tree.parse(FIXTURE));
    expected.delete("d");
    expected.move("h", Position.lastChildOf("c"));
    expected.insert("y", Position.lastChildOf("i"));
    assertEquals(expected.snapshot(), second.snapshot(), pattern.toString());
    assertEquals(List.of(), second.check(), pattern.toString());
  }
}
