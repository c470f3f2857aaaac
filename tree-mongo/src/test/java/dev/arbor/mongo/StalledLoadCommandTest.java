package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertOneModel;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A load's insert command that is still running on a server that runs commands side by side
 * (MongoDB) when its holder's lease ends. An insert command cannot renew the lease as it starts
 * (it holds inserts only: the insert fence that leads it stops it only if the fence was taken
 * before it started), so its time limit may end after the lease. The caller who takes the stopped
 * loader over therefore waits out that time limit before it undoes the load; before, it undid the
 * load at once, and the rest of the command landed after the undo: documents of a load that was
 * undone stayed in the tree.
 *
 * <p>The server runs here one command of a collection at a time; the sender plays a server that
 * does not: it sends the command's first documents, waits while the holder's process is paused
 * (nothing renews its lease) and another caller takes the lock over, and sends the rest as the
 * same command would go on, if its time limit has not run out by then.
 */
class StalledLoadCommandTest {
  private static final long LEASE = 600;
  /** Between the computing of the command's time limit and its start: the holder's pause. */
  private static final long BEFORE = 400;
  /** How long the command runs on the server, from its start: within its time limit. */
  private static final long RUNS = 450;

  /** Plays a server that runs the load's first insert command side by side with other commands. */
  private static final class SideBySide implements TreeLock.Sender {
    final CountDownLatch started = new CountDownLatch(1);
    volatile boolean split;

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      List<TreeLock.Statement> all = batch.statements();
      if (split || !(all.get(0).model() instanceof InsertOneModel) || all.size() < 4) {
        return TreeLock.BULK.send(collection, batch);
      }
      split = true;
      Long limit = collection.getTimeout(TimeUnit.MILLISECONDS);
      assertTrue(limit != null && limit >= RUNS, "the command's time limit: " + limit);
      return runsOn(collection, all, all.size() / 2, BEFORE, RUNS, started);
    }
  }

  /**
   * Plays a server that runs an insert command side by side with others: after the holder's
   * pause of {@code before} ms the command starts and its first {@code part} statements land
   * ({@code started} counts down); {@code runs} ms later the server goes on with the same
   * command (its insert fence was passed before), unless its time limit ran out by then.
   */
  private static BulkWriteResult runsOn(MongoCollection<BsonDocument> collection,
      List<TreeLock.Statement> all, int part, long before, long runs, CountDownLatch started) {
    Long limit = collection.getTimeout(TimeUnit.MILLISECONDS);
    TruthfulOutcomesTest.pause(before);
    long start = System.nanoTime();
    BulkWriteResult first = TreeLock.BULK.send(collection,
        new TreeLock.Batch(new ArrayList<>(all.subList(0, part))));
    started.countDown();
    TruthfulOutcomesTest.pause(runs);
    if (limit == null || TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) >= limit) {
      throw new MongoOperationTimeoutException("the command ran out of its time limit");
    }
    BulkWriteResult rest = TreeLock.BULK.send(collection.withTimeout(0, TimeUnit.MILLISECONDS),
        new TreeLock.Batch(new ArrayList<>(all.subList(part, all.size()))));
    return BulkWriteResult.acknowledged(first.getInsertedCount() + rest.getInsertedCount(), 0,
        0, 0, List.of(), List.of());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aStoppedLoadersCommandStillRunningLandsBeforeTheUndo(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    SideBySide sender = new SideBySide();
    MongoTreeStore loader = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).sender(sender).subtreeLocks(false)
        .keepAlive(false)); // a paused process: nothing renews its lease
    assertTrue(loader.lock.ordered(), "the server's behaviour");
    Tree tree = Tree.parse("a(b(c d) e(f g)) h(i j(k))");
    CompletableFuture<Void> load = CompletableFuture.runAsync(() -> loader.load(tree));
    assertTrue(sender.started.await(10, TimeUnit.SECONDS), "the load's command started");
    // Another caller comes by after the loader's lease: it takes the lock over, undoes the load
    // and inserts a node of its own.
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(LEASE, 20_000)
        .subtreeLocks(false));
    other.insert("z", Position.lastRoot());
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
        ExecutionException.class, () -> load.get(20, TimeUnit.SECONDS));
    assertInstanceOf(LockLostException.class, e.getCause(), e::toString);
    assertTrue(sender.split, "the load sent its command in two parts");
    assertOnlyTheTakersNode(other);
  }
  /**
   * A load's insert command that ran out of its time limit is sent again in two halves, behind
   * the next fence numbers. Its own fence's number was left free when the command never reached
   * the server: a caller who took the paused loader over took that number (the one after the
   * last fence stored), and the halves went behind the numbers after it, passed, and inserted
   * documents of a load that caller had undone. The fence of the command that timed out is now
   * stored first, so the halves stop at the fence taken.
   */
  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void aTimedOutLoadCommandSentAgainInHalvesInsertsNothingAfterATakeover(TreePattern pattern,
      boolean ordered) throws Exception {
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    // The load's first insert command times out before it reaches the server; the command that
    // sends the first half of its documents again is held (the holder's pause).
    FailThenPauseSender sender = new FailThenPauseSender(FailThenPauseSender.insertCommand(4),
        () -> new MongoOperationTimeoutException("injected: the command ran out of its time"
            + " limit before it reached the server"));
    MongoTreeStore loader = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(300, 20_000).sender(sender).subtreeLocks(false)
        .keepAlive(false)); // a paused process: nothing renews its lease
    assertEquals(ordered, loader.lock.ordered(), "the server's behaviour");
    Tree tree = Tree.parse("a(b(c d) e(f g)) h(i j(k))");
    CompletableFuture<Void> load = CompletableFuture.runAsync(() -> loader.load(tree));
    assertTrue(sender.reached.await(10, TimeUnit.SECONDS), "the load's command timed out, and"
        + " half of it was sent again");
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(300, 20_000)
        .subtreeLocks(false));
    other.insert("z", Position.lastRoot()); // takes the paused loader over, undoes its load
    sender.go.countDown();
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
        ExecutionException.class, () -> load.get(20, TimeUnit.SECONDS));
    assertInstanceOf(LockLostException.class, e.getCause(), e::toString);
    assertOnlyTheTakersNode(other);
  }

  /**
   * A load's insert command timed out, too small to be halved: the loader renews its lease for
   * longer so that the command sent again has a longer time limit. When that renewal never
   * reached the server, the lock document still named the shorter lease, and the caller who took
   * the paused loader over waited out only that lease's time limit; the loader had already
   * taken the longer one for its command sent again (it set it before the renewal was
   * answered), which was still running when the load was undone, and its documents stayed in
   * the tree. A command's time limit now grows only once the longer lease is stored.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aLongerLeaseThatNeverReachedTheServerLengthensNoCommand(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    UnrecordedGrowth sender = new UnrecordedGrowth();
    MongoTreeStore loader = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(GROWING_LEASE, 20_000).sender(sender).subtreeLocks(false).loadBatchSize(2)
        .keepAlive(false)); // a paused process: nothing renews its lease
    assertTrue(loader.lock.ordered(), "the server's behaviour");
    Tree tree = Tree.parse("a(b(c d) e(f g)) h(i j(k))");
    CompletableFuture<Void> load = CompletableFuture.runAsync(() -> loader.load(tree));
    assertTrue(sender.started.await(10, TimeUnit.SECONDS), "the command sent again started");
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(GROWING_LEASE, 20_000)
        .subtreeLocks(false));
    other.insert("z", Position.lastRoot()); // takes the paused loader over, undoes its load
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
        ExecutionException.class, () -> load.get(30, TimeUnit.SECONDS));
    assertInstanceOf(LockLostException.class, e.getCause(), e::toString);
    assertTrue(sender.growthLost, "the longer lease's renewal was lost");
    assertOnlyTheTakersNode(other);
  }

  private static final long GROWING_LEASE = 1_000;

  /** The tree holds the node {@code z} the taker inserted, and nothing of the undone load. */
  private static void assertOnlyTheTakersNode(TreeStore other) {
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.insert("z", Position.lastRoot());
    assertEquals(expected.snapshot(), other.snapshot(), "nothing of the undone load stays");
    assertEquals(List.of(), other.check());
  }

  /**
   * The load's first insert command times out before it reaches the server; the renewal for a
   * longer lease that follows is lost on its way; the command sent again is paused before it
   * starts (the holder's pause), then runs side by side with the caller who takes the loader
   * over, for longer than the recorded lease's time limit and within the longer one.
   */
  private static final class UnrecordedGrowth implements TreeLock.Sender {
    final CountDownLatch started = new CountDownLatch(1);
    volatile boolean growthLost;
    private int inserts;
    private boolean timedOut;

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      List<TreeLock.Statement> all = batch.statements();
      boolean insert = all.get(0).model() instanceof InsertOneModel;
      if (!insert && timedOut && !growthLost && all.size() == 1) {
        growthLost = true;
        throw new com.mongodb.MongoSocketWriteException("injected: the renewal for a longer"
            + " lease was lost on its way", new com.mongodb.ServerAddress(),
            new java.io.IOException("injected"));
      }
      if (!insert || all.size() < 3) {
        return TreeLock.BULK.send(collection, batch);
      }
      int sending = inserts++;
      if (sending == 0) {
        timedOut = true;
        throw new MongoOperationTimeoutException("injected: the command ran out of its time"
            + " limit before it reached the server");
      }
      if (sending != 1) {
        return TreeLock.BULK.send(collection, batch);
      }
      return runsOn(collection, all, 2, 700, 1_500, started);
    }
  }
}
