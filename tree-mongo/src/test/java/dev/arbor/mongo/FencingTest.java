package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Outcome;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A live holder slower than its lease never corrupts a tree. Writer A, with a short lease, stalls
 * before sending, or after the answer to, each of its round trips in turn (a GC pause, a stalled
 * network); meanwhile writer B makes a conflicting change, which waits for A's lease to expire by
 * the server's clock and takes the lock over. Then A resumes. Either A's change had been committed
 * (its journal written) and it is in the tree before B's, and A's call returns normally; or it had
 * not, nothing of it was written, and A's call throws {@link LockLostException}. The tree equals
 * the serial replay of the calls that succeeded, B's outcome included, and {@code check()} is
 * empty. A's changes run with batches of three statements, so that they span several round trips.
 *
 * <p>The stalled holders' cases run side by side ({@link Execution @Execution(CONCURRENT)}), each
 * on a collection of its own: most of a case is waiting for a lease to expire by the server's
 * clock, which no fake clock can shorten. The live holders' cases, which hold a holder's
 * renewals to their timing, run apart from the class's other cases ({@link ResourceLock}); other
 * classes of the JVM run beside them, as other test JVMs did on the same cores.
 */
class FencingTest {
  /** Taken shared by the stalled holders' cases, alone by the live holders'. */
  private static final String TIMING = "dev.arbor.mongo.FencingTest.timing";

  private static final String FIXTURE = "a(b(c d(e f)) g(h)) i(j k)";
  private static final long LEASE = 100;

  /** A named operation on a store. */
  record Op(String name, Consumer<TreeStore> run) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** A change of A's, and a conflicting one of B's. */
  record Pair(Op a, Op b) {}

  static final List<Pair> PAIRS = List.of(
      // The two moves that, interleaved, made a cycle.
      new Pair(new Op("move d lastChildOf(i)", s -> s.move("d", Position.lastChildOf("i"))),
          new Op("move i lastChildOf(e)", s -> s.move("i", Position.lastChildOf("e")))),
      // An insert under a node the other deletes.
      new Pair(new Op("delete b", s -> s.delete("b")),
          new Op("insert x lastChildOf(d)", s -> s.insert("x", Position.lastChildOf("d")))));

  /**
   * Stalls before sending its {@code at}-th batch (a lane's claim, gate and renewals count too),
   * or after that batch's answer came back.
   */
  static final class StallingSender implements TreeLock.Sender {
    final int at;
    final boolean after;
    final CountDownLatch stalled = new CountDownLatch(1);
    final CountDownLatch resume = new CountDownLatch(1);
    int calls;

    StallingSender(int at, boolean after) {
      this.at = at;
      this.after = after;
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      int k = calls++;
      if (k == at && !after) {
        stall();
      }
      BulkWriteResult r = TreeLock.BULK.send(collection, batch);
      if (k == at && after) {
        stall();
      }
      return r;
    }

    @Override
    public BsonDocument fence(MongoCollection<BsonDocument> collection,
        org.bson.conversions.Bson filter, org.bson.conversions.Bson update) {
      int k = calls++;
      if (k == at && !after) {
        stall();
      }
      BsonDocument r = TreeLock.BULK.fence(collection, filter, update);
      if (k == at && after) {
        stall();
      }
      return r;
    }

    @Override
    public BsonDocument exchange(MongoCollection<BsonDocument> collection,
        org.bson.conversions.Bson filter, org.bson.conversions.Bson update,
        com.mongodb.client.model.FindOneAndUpdateOptions options) {
      int k = calls++;
      if (k == at && !after) {
        stall();
      }
      BsonDocument r = TreeLock.BULK.exchange(collection, filter, update, options);
      if (k == at && after) {
        stall();
      }
      return r;
    }

    private void stall() {
      stalled.countDown();
      try {
        resume.await(20, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The options of every store of the test; {@link ScopedFencingTest} adds a scope. */
  ServerCapabilities options(ServerCapabilities capabilities) {
    return capabilities;
  }

  /** A store of the tree under test with the default lease. */
  MongoTree open(TreePattern pattern, MongoCollection<Document> c) {
    return pattern.open(c, options(ServerCapabilities.probing(c)));
  }

  /** A fresh collection for one case. */
  MongoCollection<Document> fresh() {
    return MongoTestServer.get().freshCollection();
  }

  /** The node documents of the tree under test. */
  long nodes(MongoCollection<Document> c) {
    return c.countDocuments(MongoTreeStore.NODES);
  }

  /** Checks what else the collection holds after a case; nothing here. */
  void verifyOthers(MongoCollection<Document> c) {}

  private MongoTreeStore slow(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender) {
    return slow(pattern, c, sender, 4);
  }

  private MongoTreeStore slow(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender, int loadBatchSize) {
    return slow(pattern, c, sender, loadBatchSize, v -> {});
  }

  private MongoTreeStore slow(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender, int loadBatchSize, java.util.function.LongConsumer onSettled) {
    return slow(pattern, c, sender, loadBatchSize, onSettled, true);
  }

  /**
   * A stalled holder's store; {@code optimistic} false: a change of a subtree runs in a lane
   * (nested sets: under the tree's lock) rather than first on the optimistic path.
   */
  private MongoTreeStore slow(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender, int loadBatchSize, java.util.function.LongConsumer onSettled,
      boolean optimistic) {
    return (MongoTreeStore) pattern.open(c, options(ServerCapabilities.probing(c))
        .lease(LEASE, 20_000).sender(sender).batchStatements(3).loadBatchSize(loadBatchSize)
        .onSettled(onSettled).optimisticChanges(optimistic)
        .keepAlive(false)); // a stalled holder here is a paused process: nothing renews
  }

  /**
   * The lease of the slow-but-live holders: long enough that a loaded machine still runs their
   * background renewal (every third of it) in time; their round trips are slowed past half of it.
   * (With 400 ms, a renewal held up more than 267 ms by a machine busy with four other processes
   * let another caller take a live holder over, once in five runs. With 1 000 ms, it happened once
   * more at stop 60, to a slow load of parent references, in the suite's one JVM under a JFR
   * profile beside a stress run of four writer processes: renewals held up more than 667 ms.)
   */
  private static final long LIVE_LEASE = 2_000;

  /** A holder that is slow but alive: its lease is renewed in the background. */
  private MongoTreeStore live(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender) {
    MongoTreeStore s = (MongoTreeStore) pattern.open(c, options(ServerCapabilities.probing(c))
        .lease(LIVE_LEASE, 20_000).sender(sender).batchStatements(3).loadBatchSize(4));
    return s;
  }

  /**
   * The threads of the holders A: one each, since a stalled A blocks its thread and the cases run
   * side by side (the common pool may have fewer threads than cases).
   */
  private static final java.util.concurrent.ExecutorService HOLDERS =
      java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fencing-holder");
        t.setDaemon(true);
        return t;
      });

  private static Class<?> outcome(Runnable call) {
    return outcome(call, new java.util.concurrent.atomic.AtomicReference<>());
  }

  /** What {@code call} threw (null if it returned); the exception itself into {@code thrown}. */
  private static Class<?> outcome(Runnable call,
      java.util.concurrent.atomic.AtomicReference<Throwable> thrown) {
    try {
      call.run();
      return null;
    } catch (TreeException e) {
      thrown.set(e);
      return e.getClass();
    }
  }

  @TestFactory
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = TIMING, mode = ResourceAccessMode.READ)
  List<DynamicTest> aStalledHolderLosesItsLockAndNothingInterleaves() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      for (Pair pair : PAIRS) {
        for (boolean optimistic : List.of(false, true)) {
          tests.add(DynamicTest.dynamicTest(pattern + ": A " + pair.a() + ", B " + pair.b()
              + (optimistic ? ", A plans without the lock" : ", A in a lane (nested sets: under"
              + " the tree's lock)"),
              () -> stallEverywhere(pattern, pair, optimistic)));
        }
      }
      tests.add(DynamicTest.dynamicTest(pattern + ": load", () -> stallLoadEverywhere(pattern,
          false)));
      tests.add(DynamicTest.dynamicTest(pattern + ": streamed load, batches of 2, sent ahead",
          () -> stallLoadEverywhere(pattern, true)));
    }
    return tests;
  }

  /** The batches A sends for its change when nobody interferes. */
  private int batches(TreePattern pattern, Pair pair, boolean optimistic) {
    MongoCollection<Document> c = fresh();
    open(pattern, c).load(Tree.parse(FIXTURE));
    SwitchableSender sender = new SwitchableSender();
    MongoTreeStore a = slow(pattern, c, sender, 4, v -> {}, optimistic);
    if (optimistic) {
      a.snapshot();
    }
    StallingSender count = new StallingSender(-1, false);
    sender.target = count;
    pair.a().run().accept(a);
    return count.calls;
  }

  private void stallEverywhere(TreePattern pattern, Pair pair, boolean optimistic)
      throws Exception {
    int total = batches(pattern, pair, optimistic);
    assertTrue(total >= 2, "A's change spans several batches: " + total);
    // Every batch A sends is a stall point, up to the first that a run of A's does not reach:
    // how many A sends depends on the machine (a slow run renews its 100 ms lease on the way,
    // with a command more), so the count of an uncut run is where to stop at the earliest.
    boolean beyondTheLast = false;
    for (int at = 0; at < total || !beyondTheLast; at++) {
      assertTrue(at < total + 20, "A sent batches without end");
      for (boolean after : List.of(false, true)) {
        MongoCollection<Document> c = fresh();
        open(pattern, c).load(Tree.parse(FIXTURE));
        SwitchableSender sender = new SwitchableSender();
        java.util.concurrent.atomic.AtomicLong versionA = new java.util.concurrent.atomic
            .AtomicLong(-1);
        MongoTreeStore a = slow(pattern, c, sender, 4, versionA::set, optimistic);
        if (optimistic) {
          a.snapshot(); // A knows a quiet version: it plans without the lock
        }
        StallingSender stall = new StallingSender(at, after);
        sender.target = stall;
        java.util.concurrent.atomic.AtomicReference<Throwable> failureA =
            new java.util.concurrent.atomic.AtomicReference<>();
        CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
            () -> outcome(() -> pair.a().run().accept(a), failureA), HOLDERS);
        String where = pattern + " " + pair + ", A stalled " + (after ? "after" : "before")
            + " batch " + at + (optimistic ? ", optimistic" : "");
        if (!reached(stall, runA)) {
          if (!runA.isDone() || runA.join() != null) {
            fail("A did not reach batch " + at + (runA.isDone() ? "; it ended with "
                + runA.join() + ": " + failureA.get() : "; it is still running"));
          }
          // A's change returned after fewer batches: alone, it must have made its change.
          InMemoryTreeStore reference = new InMemoryTreeStore();
          reference.load(Tree.parse(FIXTURE));
          pair.a().run().accept(reference);
          assertEquals(reference.snapshot(), a.snapshot(), where + ", not reached");
          assertEquals(List.of(), a.check(), where + ", not reached");
          verifyOthers(c);
          beyondTheLast = true;
          continue;
        }
        long[] versionB = {-1};
        MongoTreeStore b = (MongoTreeStore) pattern.open(c, options(ServerCapabilities.probing(c))
            .onSettled(v -> versionB[0] = v));
        Class<?> outcomeB = outcome(() -> pair.b().run().accept(b));
        stall.resume.countDown();
        Class<?> outcomeA = runA.get(20, TimeUnit.SECONDS);
        assertTrue(outcomeA != dev.arbor.core.ChangeInterruptedException.class,
            () -> where + ": A ended with " + failureA.get());
        // The serial replay, in the order the calls took effect, of A (unless its lock was lost:
        // then nothing of it was written) and B, each with the outcome it had.
        InMemoryTreeStore reference = new InMemoryTreeStore();
        reference.load(Tree.parse(FIXTURE));
        boolean aFirst = versionA.get() < versionB[0];
        String order = where + " (A " + outcomeA + " at version " + versionA.get() + ", B "
            + outcomeB + " at version " + versionB[0] + ")";
        if (outcomeA != LockLostException.class && aFirst) {
          assertEquals(outcomeA, outcome(() -> pair.a().run().accept(reference)), order
              + ": A's outcome");
        }
        assertEquals(outcomeB, outcome(() -> pair.b().run().accept(reference)), where
            + ": B's outcome");
        if (outcomeA != LockLostException.class && !aFirst) {
          assertEquals(outcomeA, outcome(() -> pair.a().run().accept(reference)), order
              + ": A's outcome");
        }
        assertEquals(List.of(), b.check(), where);
        assertEquals(reference.snapshot(), b.snapshot(), where);
        // the tree is usable again, by both (A's lease is 100 ms: on a starved machine it may
        // lose the lock again, which is reported as NOT_APPLIED and writes nothing; it retries)
        insertRetryingLostLocks(a, "z");
        assertEquals(List.of(), b.check(), where);
        verifyOthers(c);
      }
    }
  }

  /**
   * Whether A stalled at its batch: waits up to 10 s, and no longer once A's call has ended
   * without stalling.
   */
  private static boolean reached(StallingSender stall, CompletableFuture<Class<?>> runA)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < end) {
      if (stall.stalled.await(20, TimeUnit.MILLISECONDS)) {
        return true;
      }
      if (runA.isDone()) {
        return stall.stalled.getCount() == 0;
      }
    }
    return false;
  }

  /** Inserts {@code id} as the last root, again after a lost lock, which wrote nothing. */
  private static void insertRetryingLostLocks(MongoTreeStore store, String id) {
    for (int attempt = 1; ; attempt++) {
      try {
        store.insert(id, Position.lastRoot());
        return;
      } catch (LockLostException e) {
        assertEquals(dev.arbor.core.ChangeInterruptedException.Outcome.NOT_APPLIED, e.outcome(),
            e.getMessage());
        if (attempt == 5) {
          throw e;
        }
      }
    }
  }

  /**
   * Stalls a load past its lease at each of its writes while a reader takes the lock over;
   * {@code streamed}: a {@code load(Iterator)} in batches of two, whose commands a thread of
   * their own sends while the next batch is built.
   */
  private void stallLoadEverywhere(TreePattern pattern, boolean streamed) throws Exception {
    Tree.Builder builder = Tree.builder();
    for (int i = 0; i < 14; i++) {
      builder.add("n" + i, i == 0 ? null : "n" + ((i - 1) / 2));
    }
    Tree tree = builder.build();
    StallingSender count = new StallingSender(-1, false);
    int loadBatchSize = streamed ? 2 : 4;
    MongoTreeStore counting = slow(pattern, fresh(), count, loadBatchSize);
    java.util.function.Consumer<MongoTreeStore> load = s -> {
      if (streamed) {
        s.load(tree.entries().iterator());
      } else {
        s.load(tree);
      }
    };
    load.accept(counting);
    int total = count.calls;
    assertTrue(total >= 4, "the load spans several batches: " + total);
    for (int at = 0; at < total; at++) {
      MongoCollection<Document> c = fresh();
      StallingSender stall = new StallingSender(at, false);
      MongoTreeStore a = slow(pattern, c, stall, loadBatchSize);
      CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
          () -> outcome(() -> load.accept(a)), HOLDERS);
      if (!stall.stalled.await(10, TimeUnit.SECONDS)) {
        fail("the load did not reach batch " + at);
      }
      // A reader comes by after the lease: it takes the lock over and undoes the load.
      MongoTreeStore b = (MongoTreeStore) open(pattern, c);
      Tree seen = b.snapshot();
      stall.resume.countDown();
      Class<?> outcomeA = runA.get(20, TimeUnit.SECONDS);
      String where = pattern + (streamed ? " streamed" : "") + " load stalled before batch " + at;
      assertEquals(Tree.empty(), seen, where + ": the reader saw a half-done load");
      assertEquals(LockLostException.class, outcomeA, where);
      assertEquals(Tree.empty(), b.snapshot(), where + ": the load left documents behind");
      assertEquals(0, nodes(c), where);
      assertEquals(List.of(), b.check(), where);
      b.load(tree);
      assertEquals(tree, b.snapshot(), where);
      verifyOthers(c);
    }
  }

  @TestFactory
  @ResourceLock(value = TIMING, mode = ResourceAccessMode.READ_WRITE)
  List<DynamicTest> aLiveHolderKeepsItsLockLongerThanItsLease() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      tests.add(DynamicTest.dynamicTest(pattern + ": a slow load", () -> {
        MongoCollection<Document> c = fresh();
        MongoTreeStore loader = live(pattern, c, new TreeLock.Sender() {
          @Override
          public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch b) {
            if (b.statements().get(0).model() instanceof com.mongodb.client.model.InsertOneModel) {
              sleep(LIVE_LEASE * 3 / 2); // the load's insert batch takes one and a half leases
            }
            return TreeLock.BULK.send(coll, b);
          }
        });
        Tree.Builder builder = Tree.builder();
        for (int i = 0; i < 4; i++) {
          builder.add("n" + i, i == 0 ? null : "n" + ((i - 1) / 3));
        }
        Tree tree = builder.build();
        CompletableFuture<Void> load = CompletableFuture.runAsync(() -> loader.load(tree),
            HOLDERS);
        MongoTreeStore reader = (MongoTreeStore) open(pattern, c);
        List<Tree> seen = new ArrayList<>();
        while (!load.isDone()) {
          seen.add(reader.snapshot());
        }
        load.get(30, TimeUnit.SECONDS);
        assertEquals(0, reader.lock.takeovers.get(), "the reader took a live loader over");
        for (Tree t : seen) {
          assertTrue(t.isEmpty() || t.equals(tree), "a read saw a half-done load");
        }
        assertEquals(tree, reader.snapshot());
      }));
      tests.add(DynamicTest.dynamicTest(pattern + ": slow reads while planning", () -> {
        MongoCollection<Document> base = fresh();
        open(pattern, base).load(Tree.parse(FIXTURE));
        // The holder's first read of nodes by id, made while it holds the lock (a fresh store
        // plans under the lock), takes one and a half leases.
        java.util.concurrent.atomic.AtomicBoolean slowed = new java.util.concurrent.atomic
            .AtomicBoolean();
        com.mongodb.event.CommandListener slowFinds = new com.mongodb.event.CommandListener() {
          @Override
          public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
            if (event.getCommandName().equals("find")
                && event.getCommand().toJson().contains("\"$in\"")
                && slowed.compareAndSet(false, true)) {
              sleep(LIVE_LEASE * 3 / 2);
            }
          }
        };
        try (com.mongodb.client.MongoClient client = com.mongodb.client.MongoClients.create(
            com.mongodb.MongoClientSettings.builder()
                .applyConnectionString(new com.mongodb.ConnectionString(
                    MongoTestServer.get().uri())).addCommandListener(slowFinds).build())) {
          MongoCollection<Document> c = client.getDatabase(base.getNamespace().getDatabaseName())
              .getCollection(base.getNamespace().getCollectionName());
          MongoTreeStore a = live(pattern, c, TreeLock.BULK);
          CompletableFuture<Void> move = CompletableFuture.runAsync(
              () -> a.move("d", Position.lastChildOf("i")), HOLDERS);
          MongoTreeStore b = (MongoTreeStore) open(pattern, base);
          sleep(LIVE_LEASE / 4);
          b.insert("z", Position.lastRoot()); // waits for A, which stays alive
          move.get(30, TimeUnit.SECONDS);
          assertTrue(slowed.get(), "the holder's read was slowed");
          assertEquals(0, b.lock.takeovers.get(), "B took a live holder over");
          InMemoryTreeStore reference = new InMemoryTreeStore();
          reference.load(Tree.parse(FIXTURE));
          reference.move("d", Position.lastChildOf("i"));
          reference.insert("z", Position.lastRoot());
          assertEquals(reference.snapshot(), b.snapshot());
        }
      }));
    }
    return tests;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
