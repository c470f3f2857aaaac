package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.InMemoryTreeStore;
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
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * MongoDB evaluates {@code $$NOW} once per write command, as the command starts ("these constants
 * are applied to each update in the batch", the server's {@code performUpdates}; the embedded
 * server reads the clock at each evaluation instead). A lane's statements are bounded by its
 * deadline through {@code $$NOW}, so on MongoDB they are bounded only by when their command
 * started: a command that started within the lane's lease and ran its statements after it (held
 * behind a lock, a busy server) applied them after the lane was taken over. A lane's commands
 * now carry a time limit within the lease on MongoDB, and whoever takes a lane over waits out
 * that limit, counted from the lane's deadline, before it completes or clears the lane.
 *
 * <p>The sender plays such a server: it holds the lane's command after it started, then runs it
 * with {@code $$NOW} fixed at its start, unless its time limit ran out meanwhile.
 */
class FrozenNowLaneTest {
  private static final long LEASE = 600;

  /**
   * A leaf move in a lane (one update, no journal) whose command started in time and ran after
   * another writer took the lane over and moved the target under the moved node: the late step
   * built a cycle, and its writer was told its move was applied.
   */
  @Test
  void aLanesCommandThatStartedInTimeDoesNotRunOnPastTheLane() throws Exception {
    MongoCollection<Document> c = loaded("a(p(x) q)");
    HeldOnTheServer sender = new HeldOnTheServer();
    MongoTreeStore mover = (MongoTreeStore) TreePattern.PARENT_REFERENCES.open(c,
        ServerCapabilities.probing(c).lease(LEASE, 20_000).sender(sender)
            .optimisticChanges(false) // in a lane
            .keepAlive(false)); // a paused process: nothing renews its lease
    assertTrue(mover.lock.ordered(), "the server's behaviour");
    CompletableFuture<Void> move = CompletableFuture.runAsync(
        () -> mover.move("x", Position.lastChildOf("q")));
    assertTrue(sender.started.await(10, TimeUnit.SECONDS), "the move's command started");
    // Another writer meets the lane's marks, takes the lane over once its lease ended, and
    // moves q under x: no cycle while x is still under p.
    TreeStore other = TreePattern.PARENT_REFERENCES.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).optimisticChanges(false));
    other.move("q", Position.lastChildOf("x"));
    sender.go.countDown();
    assertDidNotLand(move, other, "a(p(x(q)))");
  }

  /**
   * The same under the tree's lock: a leaf delete (one step, no journal) whose holder paused
   * between the fence that renewed its lease and the delete command, which then started within
   * the lease and ran after another caller had taken the lock over and inserted a child under
   * the node: the late delete left that child an orphan. The caller who takes a holder over now
   * waits out the holder's time limit from its deadline before it goes on.
   */
  @Test
  void aHoldersDeleteThatStartedInTimeDoesNotRunOnPastTheLock() throws Exception {
    MongoCollection<Document> c = loaded("a(x)");
    HeldOnTheServer sender = new HeldOnTheServer(HeldOnTheServer::deletesX, 500);
    MongoTreeStore deleter = (MongoTreeStore) TreePattern.PARENT_REFERENCES.open(c,
        ServerCapabilities.probing(c).lease(LEASE, 20_000).sender(sender).subtreeLocks(false)
            .keepAlive(false)); // a paused process: nothing renews its lease
    assertTrue(deleter.lock.ordered(), "the server's behaviour");
    CompletableFuture<Void> delete = CompletableFuture.runAsync(() -> deleter.delete("x"));
    assertTrue(sender.started.await(10, TimeUnit.SECONDS), "the delete's command started");
    TreeStore other = TreePattern.PARENT_REFERENCES.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).subtreeLocks(false));
    other.insert("y", Position.lastChildOf("x")); // takes the paused deleter over
    sender.go.countDown();
    assertDidNotLand(delete, other, "a(x(y))");
  }

  /**
   * The wait above is for deletes alone: a holder of the tree's lock stopped in a move (its
   * update batch led by a fence, which a taker's take of the lock makes fail) sent no command
   * bounded through {@code $$NOW}, and the caller who takes it over goes on once its lease ended,
   * without waiting out a time limit (before, it waited nine tenths of a lease more, for every
   * holder stopped on MongoDB); a holder stopped in a delete is still waited out.
   */
  @Test
  void aTakerWaitsOutTheTimeLimitOfAHolderStoppedInADeleteOnly() throws Exception {
    for (boolean deleting : new boolean[] {false, true}) {
      MongoCollection<Document> c = loaded("a(p(x) q)");
      HeldOnTheServer sender = new HeldOnTheServer(
          deleting ? HeldOnTheServer::deletesX : HeldOnTheServer::writesXUnderQ, 0);
      MongoTreeStore holder = (MongoTreeStore) TreePattern.PARENT_REFERENCES.open(c,
          ServerCapabilities.probing(c).lease(LEASE, 20_000).sender(sender).subtreeLocks(false)
              .keepAlive(false));
      assertTrue(holder.lock.ordered(), "the server's behaviour");
      CompletableFuture<Void> change = CompletableFuture.runAsync(() -> {
        if (deleting) {
          holder.delete("x");
        } else {
          holder.move("x", Position.lastChildOf("q"));
        }
      });
      assertTrue(sender.started.await(10, TimeUnit.SECONDS), "the holder's command started");
      List<Long> waits = new java.util.concurrent.CopyOnWriteArrayList<>();
      TreeStore other = TreePattern.PARENT_REFERENCES.open(c, ServerCapabilities.probing(c)
          .lease(LEASE, 20_000).subtreeLocks(false).timing(new CommandWaits(waits)));
      other.insert("y", Position.lastChildOf("a")); // takes the stopped holder over
      sender.go.countDown();
      assertDidNotLand(change, other, "a(p(x) q y)");
      if (deleting) {
        assertEquals(1, waits.size(), "the taker waited out the deleter's time limit");
      } else {
        assertEquals(List.of(), waits, "no time limit waited out for a holder that sent no"
            + " delete");
      }
    }
  }

  /** The real clock, recording the waits for a stopped holder's commands. */
  private record CommandWaits(List<Long> waits)
      implements dev.arbor.mongo.internal.protocol.Timing {
    @Override
    public long nanoTime() {
      return System.nanoTime();
    }

    @Override
    public void sleep(long millis) throws InterruptedException {
      if (StackWalker.getInstance().walk(f -> f.anyMatch(
          x -> x.getMethodName().equals("awaitStartedCommands")))) {
        waits.add(millis);
      }
      Thread.sleep(millis);
    }
  }

  /** A fresh collection of the server that reads {@code $$NOW} once, holding {@code tree}. */
  private static MongoCollection<Document> loaded(String tree) {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    TreeStore loader = TreePattern.PARENT_REFERENCES.open(c);
    loader.ensureIndexes();
    loader.load(Tree.parse(tree));
    return c;
  }

  /**
   * The held change did not land: its caller was told so, or that it may not have been applied
   * (both true of a change that did not land), and the tree is {@code tree}, whole.
   */
  private static void assertDidNotLand(CompletableFuture<Void> change, TreeStore other,
      String tree) {
    ExecutionException told = org.junit.jupiter.api.Assertions.assertThrows(
        ExecutionException.class, () -> change.get(30, TimeUnit.SECONDS),
        "the change did not land: it cannot return");
    assertTrue(told.getCause() instanceof dev.arbor.core.LockLostException
        || told.getCause() instanceof dev.arbor.core.ChangeInterruptedException, told::toString);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(Tree.parse(tree));
    assertEquals(List.of(), other.check(), "no cycle, no orphan");
    assertEquals(expected.snapshot(), other.snapshot());
  }

  /**
   * Holds the first command that moves {@code x} under {@code q} after it started, until {@link
   * #go}; then runs it as MongoDB would have: with {@code $$NOW} as it was at its start, or not
   * at all if its time limit ran out meanwhile.
   */
  static final class HeldOnTheServer implements TreeLock.Sender {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch go = new CountDownLatch(1);
    private final java.util.function.Predicate<TreeLock.Batch> chosen;
    /** The holder's pause before it sends the command. */
    private final long before;
    private volatile boolean held;

    HeldOnTheServer() {
      this(HeldOnTheServer::movesXUnderQ, 0);
    }

    HeldOnTheServer(java.util.function.Predicate<TreeLock.Batch> chosen, long before) {
      this.chosen = chosen;
      this.before = before;
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      if (held || !chosen.test(batch)) {
        return TreeLock.BULK.send(collection, batch);
      }
      held = true;
      TruthfulOutcomesTest.pause(before);
      Long limit = collection.getTimeout(TimeUnit.MILLISECONDS);
      long start = System.currentTimeMillis(); // the embedded server's clock
      started.countDown();
      try {
        assertTrue(go.await(30, TimeUnit.SECONDS), "released");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (limit != null && limit > 0 && System.currentTimeMillis() - start >= limit) {
        throw new MongoOperationTimeoutException("the server stopped the command at its time"
            + " limit of " + limit + " ms");
      }
      List<TreeLock.Statement> frozen = new ArrayList<>();
      for (TreeLock.Statement s : batch.statements()) {
        frozen.add(new TreeLock.Statement(frozen(s.model(), new BsonDateTime(start)), s.step()));
      }
      return TreeLock.BULK.send(collection.withTimeout(0, TimeUnit.MILLISECONDS),
          new TreeLock.Batch(frozen));
    }

    static boolean deletesX(TreeLock.Batch batch) {
      WriteModel<BsonDocument> first = batch.statements().get(0).model();
      return first instanceof DeleteOneModel<BsonDocument> d
          && String.valueOf(d.getFilter()).contains("\"x\"")
          && String.valueOf(d.getFilter()).contains("$$NOW");
    }

    /** A batch that writes {@code x} under {@code q}, however bounded. */
    static boolean writesXUnderQ(TreeLock.Batch batch) {
      return batch.statements().stream().anyMatch(s -> s.model()
          instanceof UpdateOneModel<BsonDocument> u && u.getUpdate() != null
          && String.valueOf(u.getUpdate()).contains("\"q\"")
          && String.valueOf(u.getFilter()).contains("\"x\""));
    }

    static boolean movesXUnderQ(TreeLock.Batch batch) {
      WriteModel<BsonDocument> first = batch.statements().get(0).model();
      return first instanceof UpdateOneModel<BsonDocument> u
          && String.valueOf(u.getUpdate()).contains("\"q\"")
          && String.valueOf(u.getFilter()).contains("\"x\"")
          && String.valueOf(u.getFilter()).contains("$$NOW");
    }
  }

  /** {@code model} with every {@code $$NOW} of its filter replaced by {@code now}. */
  static WriteModel<BsonDocument> frozen(WriteModel<BsonDocument> model, BsonDateTime now) {
    if (model instanceof UpdateOneModel<BsonDocument> u) {
      return u.getUpdate() != null
          ? new UpdateOneModel<>(replace(u.getFilter(), now), u.getUpdate(), u.getOptions())
          : new UpdateOneModel<>(replace(u.getFilter(), now), u.getUpdatePipeline(),
              u.getOptions());
    }
    if (model instanceof UpdateManyModel<BsonDocument> u) {
      return u.getUpdate() != null
          ? new UpdateManyModel<>(replace(u.getFilter(), now), u.getUpdate(), u.getOptions())
          : new UpdateManyModel<>(replace(u.getFilter(), now), u.getUpdatePipeline(),
              u.getOptions());
    }
    if (model instanceof DeleteOneModel<BsonDocument> d) {
      return new DeleteOneModel<>(replace(d.getFilter(), now), d.getOptions());
    }
    if (model instanceof DeleteManyModel<BsonDocument> d) {
      return new DeleteManyModel<>(replace(d.getFilter(), now), d.getOptions());
    }
    return model;
  }

  private static BsonDocument replace(org.bson.conversions.Bson filter, BsonDateTime now) {
    return (BsonDocument) replaceIn(filter.toBsonDocument(), now);
  }

  private static BsonValue replaceIn(BsonValue v, BsonDateTime now) {
    if (v.isString() && v.asString().getValue().equals("$$NOW")) {
      return now;
    }
    if (v.isDocument()) {
      BsonDocument out = new BsonDocument();
      for (var e : v.asDocument().entrySet()) {
        out.put(e.getKey(), replaceIn(e.getValue(), now));
      }
      return out;
    }
    if (v.isArray()) {
      BsonArray out = new BsonArray();
      for (BsonValue x : v.asArray()) {
        out.add(replaceIn(x, now));
      }
      return out;
    }
    return v;
  }
}
