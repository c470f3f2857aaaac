package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertOneModel;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Insert commands that reach the server after their holder lost its lease. An insert cannot be
 * bounded by the server's clock, so an insert command is led by an insert fence, which a caller
 * who takes the lock or a lane over takes first (the number after the last fence stored).
 *
 * <p>A lane's insert command still running on a server that runs commands side by side
 * (MongoDB) when the lane's lease ends ({@link StalledLoadCommandTest} for a lane): its fence
 * stops it only if taken before the command started, so the command carries a time limit within
 * the lane's lease, and the caller who took the lane over waits it out before it goes on.
 * Before, the command had no time limit and that caller went on at once: it deleted the parent,
 * and the rest of the command then inserted the node under a parent that was gone. The server
 * runs here one command of a collection at a time; the sender plays one that does not: it sends
 * the command's insert fence, waits while the holder is paused (nothing renews its lease) and
 * another caller takes the lane over, and sends the node's insert as the same command would go
 * on, if its time limit has not run out by then.
 *
 * <p>An insert command lost on its way (its answer an I/O error), sent again after its holder
 * paused past its lease, in a lane or under the tree's lock: the caller who took over took the
 * fence number of the lost command, and the command sent again went behind the number after it,
 * passed, and inserted the node under a parent that caller had deleted (an orphan, the insert
 * told applied; nested sets' numbering broken). A command sent again now keeps the number of the
 * one it repeats, and moves on only past a fence of its own.
 */
class LateInsertCommandTest {
  private static final long LEASE = 600;
  /** Between the computing of the command's time limit and its start: the holder's pause. */
  private static final long BEFORE = 400;
  /** How long the command runs on the server, from its start: within its time limit. */
  private static final long RUNS = 450;

  /** Plays a server that runs the lane's insert command side by side with other commands. */
  private static final class SideBySide implements TreeLock.Sender {
    final CountDownLatch started = new CountDownLatch(1);
    volatile boolean split;

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      List<TreeLock.Statement> all = batch.statements();
      if (split || all.size() != 2 || !(all.get(0).model() instanceof InsertOneModel)) {
        return TreeLock.BULK.send(collection, batch);
      }
      split = true;
      Long limit = collection.getTimeout(TimeUnit.MILLISECONDS);
      TruthfulOutcomesTest.pause(BEFORE);
      long start = System.nanoTime();
      TreeLock.BULK.send(collection, new TreeLock.Batch(List.of(all.get(0)))); // the fence
      started.countDown();
      TruthfulOutcomesTest.pause(RUNS);
      // The server goes on with the same command (its insert fence was passed before), unless
      // its time limit ran out.
      if (limit != null && limit > 0
          && TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) >= limit) {
        throw new MongoOperationTimeoutException("the command ran out of its time limit");
      }
      TreeLock.BULK.send(collection.withTimeout(0, TimeUnit.MILLISECONDS),
          new TreeLock.Batch(List.of(all.get(1))));
      return BulkWriteResult.acknowledged(2, 0, 0, 0, List.of(), List.of());
    }
  }

  @ParameterizedTest
  @MethodSource("lanePatternsOnBothServers")
  void anInsertSentAgainAfterTheLaneWasTakenOverInsertsNothing(TreePattern pattern,
      boolean ordered) throws Exception {
    Class<?> outcome = lostThenTakenOver(pattern, ResentStepTest.server(ordered), true);
    // An insert of child references is journaled (the node and its parent's array): whoever
    // took its lane over completed it, before deleting c.
    assertEquals(pattern == TreePattern.CHILD_REFERENCES ? null : LockLostException.class,
        outcome, "nothing of it can land");
  }

  /**
   * The same under the tree's lock (lanes off), whose insert fences were numbered the same way:
   * orphans on four patterns and a broken numbering of nested sets before. On the server that
   * stops at the first error (MongoDB's path) the tree's lock sends inserts as upserts led by a
   * fence, so only the server that goes on after errors (the embedded default) is run here.
   * Whatever the call is told (applied, completed by the caller who took the lock over, lost,
   * or, planned again, its parent not found), the tree is the one without c.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void anInsertSentAgainAfterTheTreesLockWasTakenOverInsertsNothing(TreePattern pattern)
      throws Exception {
    assertFalse(MongoTestServer.get() == MongoTestServer.ordered(), "the server's behaviour");
    lostThenTakenOver(pattern, MongoTestServer.get(), false);
  }

  /**
   * A paused holder inserts {@code z} under {@code c}, its first insert command lost on its way;
   * another caller takes its lane or lock over and deletes {@code c}; then the holder sends the
   * command again. The tree must be the one without {@code c}, whatever the holder is told.
   *
   * @return what the holder's call was told: null (applied) or the exception's class
   */
  private static Class<?> lostThenTakenOver(TreePattern pattern, MongoTestServer server,
      boolean lanes) throws Exception {
    MongoCollection<Document> c = server.freshCollection();
    Tree fixture = Tree.parse("a(b(c d) e)");
    pattern.open(c).load(fixture);
    // The insert command is lost on its way; the command sent again is held (the holder's pause).
    FailThenPauseSender sender = new FailThenPauseSender(FailThenPauseSender.insertCommand(2),
        () -> new MongoSocketReadException("injected: the connection was cut before the command"
            + " reached the server", new ServerAddress("127.0.0.1", 1)));
    MongoTreeStore holder = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(300, 20_000).sender(sender).subtreeLocks(lanes).optimisticChanges(!lanes)
        .keepAlive(false)); // a paused process: nothing renews its lease
    assertEquals(server == MongoTestServer.ordered(), holder.lock.ordered(),
        "the server's behaviour");
    CompletableFuture<Class<?>> insert = CompletableFuture.supplyAsync(() -> {
      try {
        holder.insert("z", Position.lastChildOf("c"));
        return null;
      } catch (TreeException e) {
        return e.getClass();
      }
    });
    assertTrue(sender.reached.await(10, TimeUnit.SECONDS), "the insert command was lost, and sent"
        + " again");
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(300, 20_000)
        .subtreeLocks(lanes).optimisticChanges(!lanes));
    other.delete("c"); // takes the lane or the lock over once its lease ended
    sender.go.countDown();
    Class<?> outcome = insert.get(20, TimeUnit.SECONDS);
    assertTrue(sender.sendings >= 2, "the insert command was sent again");
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.delete("c");
    assertEquals(expected.snapshot(), other.snapshot(), "the insert, told " + outcome);
    assertEquals(List.of(), other.check());
    return outcome;
  }

  static Stream<Arguments> lanePatternsOnBothServers() {
    return ResentStepTest.patternsOnBothServers()
        .filter(a -> a.get()[0] != TreePattern.NESTED_SETS);
  }

  private static final String LANE_FIXTURE = "a(b(c d) e)";

  /**
   * Loads {@link #LANE_FIXTURE} into {@code c} (on the server that stops at the first error) and
   * opens a holder of lanes there that sends through {@code sender}, paused: nothing renews its
   * lease.
   */
  private static MongoTreeStore pausedLaneHolder(TreePattern pattern,
      MongoCollection<Document> c, SideBySide sender) {
    pattern.open(c).load(Tree.parse(LANE_FIXTURE));
    MongoTreeStore holder = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).sender(sender).subtreeLocks(true).optimisticChanges(false)
        .keepAlive(false));
    assertTrue(holder.lock.ordered(), "the server's behaviour");
    return holder;
  }

  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aStalledLanesInsertStillRunningLandsBeforeTheCallerWhoTookItOverGoesOn(
      TreePattern pattern) throws Exception {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    Tree fixture = Tree.parse(LANE_FIXTURE);
    SideBySide sender = new SideBySide();
    MongoTreeStore holder = pausedLaneHolder(pattern, c, sender);
    CompletableFuture<ChangeInterruptedException.Outcome> insert = CompletableFuture.supplyAsync(
        () -> {
          try {
            holder.insert("z", Position.lastChildOf("c"));
            return null;
          } catch (ChangeInterruptedException e) {
            return e.outcome();
          }
        });
    assertTrue(sender.started.await(10, TimeUnit.SECONDS), "the lane's insert command started");
    // Another caller needs the lane's mark on c: it takes the lane over once its lease ended,
    // and deletes c with its subtree.
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(LEASE, 20_000)
        .subtreeLocks(true).optimisticChanges(false));
    other.delete("c");
    ChangeInterruptedException.Outcome outcome = insert.get(20, TimeUnit.SECONDS);
    assertTrue(sender.split, "the lane sent its insert command in two parts");
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.delete("c");
    assertEquals(expected.snapshot(), other.snapshot(),
        "the insert, told " + (outcome == null ? "applied" : outcome) + ", is not left behind");
    assertEquals(List.of(), other.check());
  }

  /**
   * The same stalled lane taken over by a caller whose own lease is the default, 30 s: it waits
   * out the stalled lane's insert command, whose time limit is within that lane's lease (600 ms),
   * and goes on. Before, it waited nine tenths of its own lease, grown from 30 s, as if the
   * stalled command had had that time limit: 27 s, and in {@code ConcurrencyTest} (a reader
   * with the default lease, writers with 100 ms) 28 s for a case of about 1.5 s.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aCallerWithALongerLeaseWaitsOutOnlyTheStalledLanesOwnTimeLimit(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    Tree fixture = Tree.parse(LANE_FIXTURE);
    SideBySide sender = new SideBySide();
    MongoTreeStore holder = pausedLaneHolder(pattern, c, sender);
    CompletableFuture<Void> insert = CompletableFuture.runAsync(() -> {
      try {
        holder.insert("z", Position.lastChildOf("c"));
      } catch (ChangeInterruptedException e) {
        // told what became of it; the tree below says the rest
      }
    });
    assertTrue(sender.started.await(10, TimeUnit.SECONDS), "the lane's insert command started");
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c)
        .subtreeLocks(true).optimisticChanges(false)); // the default lease, 30 s
    long start = System.nanoTime();
    other.delete("c");
    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    insert.get(20, TimeUnit.SECONDS);
    assertTrue(took < 10_000, pattern + ": the delete took " + took + " ms");
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.delete("c");
    assertEquals(expected.snapshot(), other.snapshot());
    assertEquals(List.of(), other.check());
  }

  /**
   * A load's insert command whose answer was lost, sent again and answered, and whose first
   * sending reaches the server after the load ended and its first tree was deleted: the load's
   * insert fence must still stop it. Before, a load deleted all its insert fences as it ended,
   * and the first sending then passed and inserted the deleted nodes again.
   */
  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void theFirstSendingOfALoadsCommandSentAgainInsertsNothingAfterTheLoad(TreePattern pattern,
      boolean ordered) throws Exception {
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    LateLaneAnswerTest.LateCommand sender = new LateLaneAnswerTest.LateCommand(
        batch -> batch.statements().get(0).model() instanceof InsertOneModel
            && batch.statements().size() > 2, 500); // a load's first insert command
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .sender(sender).subtreeLocks(false));
    assertEquals(ordered, store.lock.ordered(), "the server's behaviour");
    Tree tree = Tree.parse("a(b) c(d)");
    store.load(tree);
    assertFalse(sender.armed.get(), "the load's command was lost");
    store.delete("a"); // before the first sending arrives
    sender.late.get(10, TimeUnit.SECONDS);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(tree);
    expected.delete("a");
    assertEquals(expected.snapshot(), store.snapshot(), "the first sending inserted a again");
    assertEquals(List.of(), store.check());
  }
}
