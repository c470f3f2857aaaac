package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.WriteConcernError;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Timing;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every outcome tells the truth, and a live holder keeps its change: answers lost after the server
 * applied a command (a client-side timeout, a cut connection), write-concern errors without write
 * errors, a lead statement the server refuses, holders whose background renewals stop, scoped
 * journals written in parts, and first users of a new scope that race.
 */
class TruthfulOutcomesTest {
  static final Tree TREE = LinearizabilityTest.randomTree(300, 5);
  static final ServerAddress ADDRESS = new ServerAddress("127.0.0.1", 1);

  /** Sends each batch, then loses its answer the first time (as a client-side timeout does). */
  static final class LosingAnswers implements TreeLock.Sender {
    final java.util.function.Supplier<RuntimeException> loss;
    final AtomicInteger lost = new AtomicInteger();
    private boolean again;

    LosingAnswers(java.util.function.Supplier<RuntimeException> loss) {
      this.loss = loss;
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
      return again(TreeLock.BULK.send(c, batch));
    }

    @Override
    public BsonDocument fence(MongoCollection<BsonDocument> c, Bson filter, Bson update) {
      BsonDocument after = TreeLock.BULK.fence(c, filter, update);
      try {
        return again(after);
      } catch (MongoBulkWriteException e) {
        // a findOneAndUpdate tells a write-concern error so
        throw new com.mongodb.MongoWriteConcernException(e.getWriteConcernError(), null,
            ADDRESS, Set.of());
      }
    }

    private synchronized <T> T again(T answer) {
      again = !again;
      if (again) {
        lost.incrementAndGet();
        throw loss.get();
      }
      return answer;
    }
  }

  private static List<Consumer<TreeStore>> changes() {
    return List.of(
        s -> s.insert("new1", Position.lastChildOf("n0")),
        s -> s.insert("new2", Position.before("n7")),
        s -> s.move("n3", Position.lastChildOf("n250")),
        s -> s.move("n250", Position.firstRoot()),
        s -> s.update("n9", java.util.Map.of("colour", "red")),
        s -> s.delete("n12"),
        s -> s.delete("n2", dev.arbor.core.Deletion.LIFT_CHILDREN),
        s -> s.delete("n1"));
  }

  private static MongoTreeStore open(TreePattern pattern, MongoCollection<Document> c,
      long lease, long wait) {
    return open(pattern, c, lease, wait, TreeLock.BULK);
  }

  private static MongoTreeStore open(TreePattern pattern, MongoCollection<Document> c,
      long lease, long wait, TreeLock.Sender sender) {
    return (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c).lease(lease, wait)
        .sender(sender));
  }

  /**
   * A local clock whose pauses take no time: a pause returns at once and moves the clock on by
   * its length, so that the clock is never behind the system's. Here the pauses are those before
   * a command whose answer was lost is sent again (a tenth of the lease each, dozens per case):
   * the store's own decisions (when a renewal is due, when to give up) see the time pass, the
   * server's clock, by which leases expire, is not touched.
   */
  static final class SkippingTiming implements Timing {
    private final AtomicLong skipped = new AtomicLong();
    /** The pauses asked for, in ms. */
    final List<Long> waits = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public long nanoTime() {
      return System.nanoTime() + skipped.get();
    }

    @Override
    public void sleep(long millis) {
      waits.add(millis);
      skipped.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
      Thread.yield();
    }
  }

  /** The answers of every command are lost once, after the server applied it. */
  private void everyAnswerLostOnce(TreePattern pattern, boolean ordered, LosingAnswers sender,
      boolean optimistic) {
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(400, 20_000).timing(new SkippingTiming()).sender(sender)
        .loadBatchSize(40)); // a load of several batches
    assertEquals(ordered, store.lock.ordered(), "the server's behaviour");
    store.load(TREE); // every batch's answer lost once: resent, its own fence met, then resolved
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(TREE);
    for (Consumer<TreeStore> change : changes()) {
      if (!optimistic) {
        store.forget();
      }
      change.accept(store);
      change.accept(reference);
    }
    TreeStore fresh = pattern.open(c);
    assertEquals(List.of(), fresh.check());
    assertEquals(reference.snapshot(), fresh.snapshot());
    assertTrue(sender.lost.get() > 10, "answers lost: " + sender.lost.get());
  }

  /**
   * On both server behaviours ({@link ResentStepTest#patternsOnBothServers}): on the one that
   * stops at the first error, as MongoDB does, a change's commit, steps and release travel in one
   * command, which a lost answer sends again whole.
   */
  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void aTimeoutAfterTheServerAppliedABatchIsResolvedNotReportedAsALostLock(TreePattern pattern,
      boolean ordered) {
    everyAnswerLostOnce(pattern, ordered, new LosingAnswers(
        () -> new MongoOperationTimeoutException(
            "injected: the answer came after the client-side timeout")), true);
    everyAnswerLostOnce(pattern, ordered, new LosingAnswers(
        () -> new MongoOperationTimeoutException(
            "injected: the answer came after the client-side timeout")), false);
  }

  /**
   * A connection cut after the server applied a batch, before its answer came: unlike a timeout,
   * the batch is sent again whole, and the answer to the second sending (the single step of a
   * change without journal matching nothing, being applied already; its release meeting a
   * duplicate key, the lock being freed already) must not be taken for the change not being
   * applied.
   */
  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void aCutAfterTheServerAppliedABatchIsResolvedNotReportedAsALostLock(TreePattern pattern,
      boolean ordered) {
    everyAnswerLostOnce(pattern, ordered, new LosingAnswers(
        () -> new com.mongodb.MongoSocketReadException("injected: the connection was cut after"
            + " the server applied the command", ADDRESS)), true);
    everyAnswerLostOnce(pattern, ordered, new LosingAnswers(
        () -> new com.mongodb.MongoSocketReadException("injected: the connection was cut after"
            + " the server applied the command", ADDRESS)), false);
  }

  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void aWriteConcernErrorAloneIsResentNotAnIndexOutOfBounds(TreePattern pattern,
      boolean ordered) {
    everyAnswerLostOnce(pattern, ordered, new LosingAnswers(() -> new MongoBulkWriteException(
        BulkWriteResult.acknowledged(0, 0, 0, 0, List.of(), List.of()), List.of(),
            new WriteConcernError(64,
            "WriteConcernFailed", "injected: waiting for replication timed out",
            new BsonDocument()), ADDRESS, Set.of())), false);
  }

  /**
   * A lead statement refused for a reason other than a duplicate key frees the lock. (On the
   * server that stops as MongoDB does, the lead goes in a bulk write: its refusal comes as the
   * driver gives a write error, with the acknowledged counts of the statements before it.)
   */
  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void aRefusedLeadStatementLeavesTheTreeFree(TreePattern pattern, boolean ordered) {
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    SwitchableSender sender = new SwitchableSender();
    MongoTreeStore store = open(pattern, c, 30_000, 2_000, sender);
    assertEquals(ordered, store.lock.ordered(), "the server's behaviour");
    store.load(TREE);
    AtomicBoolean refuse = new AtomicBoolean(true);
    sender.target = new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (refuse.getAndSet(false)) {
          throw new MongoBulkWriteException(BulkWriteResult.acknowledged(0, 0, 0, 0, List.of(),
              List.of()), List.of(
              new com.mongodb.bulk.BulkWriteError(15, "injected: nesting depth", new BsonDocument(),
                  0)), null, ADDRESS, Set.of());
        }
        return TreeLock.BULK.send(coll, batch);
      }

      @Override
      public BsonDocument fence(MongoCollection<BsonDocument> coll, Bson filter, Bson update) {
        if (refuse.getAndSet(false)) {
          throw new MongoCommandException(new BsonDocument("ok", new BsonInt32(0))
              .append("code", new BsonInt32(15))
              .append("errmsg", new BsonString("injected: nesting depth")), ADDRESS);
        }
        return TreeLock.BULK.fence(coll, filter, update);
      }
    };
    for (boolean optimistic : new boolean[] {true, false}) {
      refuse.set(true);
      if (!optimistic) {
        store.forget();
      }
      TreeException e = assertThrows(TreeException.class,
          () -> store.move("n3", Position.lastChildOf("n250")));
      assertTrue(e.getMessage().contains("nothing was written"), e.getMessage());
      // Not locked for a lease (30 s): another store changes the tree at once.
      TreeStore other = open(pattern, c, 30_000, 2_000);
      other.insert("after" + optimistic, Position.lastRoot());
      assertEquals(List.of(), other.check());
    }
  }

  /** A holder whose background renewals stop and whose batches are slower than its lease. */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aLoneHolderSlowerThanItsLeaseCompletes(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    AtomicInteger calls = new AtomicInteger();
    TreeLock.Sender slow = new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (calls.incrementAndGet() % 3 == 0) {
          pause(150); // a GC pause longer than the lease, before every third command
        }
        return TreeLock.BULK.send(coll, batch);
      }

      @Override
      public BsonDocument fence(MongoCollection<BsonDocument> coll, Bson filter, Bson update) {
        if (calls.incrementAndGet() % 3 == 0) {
          pause(150);
        }
        return TreeLock.BULK.fence(coll, filter, update);
      }
    };
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(100, 20_000).renewals((period, renewal) -> new java.util.concurrent
            .CompletableFuture<>()) // paused: never renews
        .sender(slow).loadBatchSize(60));
    store.load(TREE);
    store.forget();
    store.move("n3", Position.lastChildOf("n250"));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(TREE);
    reference.move("n3", Position.lastChildOf("n250"));
    assertEquals(reference.snapshot(), pattern.open(c).snapshot());
  }

  /** Sleeps {@code millis} ms, keeping the interrupt. */
  static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A scoped tree's journal written in parts is found by the replay after a crash. */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aScopedJournalInPartsIsReplayedAfterACrash(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeOptions acme = TreeOptions.defaults().withScope("tenant", "acme")
        .withLease(java.time.Duration.ofMillis(200));
    SwitchableSender sender = new SwitchableSender();
    pattern.open(c, acme).load(TREE);
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, acme.capabilities(c).sender(sender)
        .inlineJournalBytes(200) // parts of at most 200 bytes
        .keepAlive(false)); // a crashed process renews nothing
    store.forget();
    sender.target = StepwiseSender.crashingAfter(3);
    assertThrows(StepwiseSender.Crash.class, () -> store.delete("n1"));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(TREE);
    reference.delete("n1");
    // The next access, once the crashed holder's lease ran out, replays its journal.
    MongoTreeStore after = (MongoTreeStore) pattern.open(c, acme);
    assertEquals(reference.snapshot(), after.snapshot());
    assertEquals(List.of(), after.check());
    assertEquals(0, c.countDocuments(new Document("_id.arbor", "journal")),
        "journal parts left");
  }

  /**
   * A caller whose lock wait runs out while another holds the tree wrote nothing, and says so:
   * {@code NOT_APPLIED}, as the outcome table promises (before, a bare {@code TreeException} that
   * no outcome explained, which the linearizability check at a 30 ms lease on a loaded machine
   * reported as a violation), for a change and for an isolated read.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aLockWaitThatRunsOutIsNotApplied(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore holder = (MongoTreeStore) pattern.open(c);
    holder.load(TREE);
    TreeLock.Hold hold = holder.lock.acquire("a long change");
    try {
      MongoTreeStore waiter = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
          .lease(30_000, 300));
      dev.arbor.core.ChangeInterruptedException e = assertThrows(
          dev.arbor.core.ChangeInterruptedException.class,
          () -> waiter.insert("late", Position.lastRoot()));
      assertEquals(dev.arbor.core.ChangeInterruptedException.Outcome.NOT_APPLIED, e.outcome(),
          e::getMessage);
      dev.arbor.core.ChangeInterruptedException read = assertThrows(
          dev.arbor.core.ChangeInterruptedException.class, waiter::snapshot);
      assertEquals(dev.arbor.core.ChangeInterruptedException.Outcome.NOT_APPLIED, read.outcome(),
          read::getMessage);
    } finally {
      holder.lock.release(hold);
    }
    assertEquals(TREE, holder.snapshot(), "nothing of the late insert was written");
  }

  /**
   * A store whose client was closed says so, for a change and for a read, before anything is
   * written: the driver's {@code IllegalStateException} "state should be: open" came out raw
   * (a change whose client was closed under it, at its writes, already ended {@code
   * NOT_APPLIED}).
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aClosedClientEndsChangesAndReadsNotAppliedSayingSo(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    pattern.open(c).load(Tree.parse("a(b)"));
    com.mongodb.client.MongoClient own = com.mongodb.client.MongoClients.create(
        MongoTestServer.settings(MongoTestServer.get().uri()));
    TreeStore store = pattern.open(own.getDatabase(c.getNamespace().getDatabaseName())
        .getCollection(c.getNamespace().getCollectionName()));
    assertEquals(List.of("b"), store.children("a"));
    TreeStore empty = pattern.open(own.getDatabase(c.getNamespace().getDatabaseName())
        .getCollection(MongoTestServer.get().freshCollection().getNamespace()
            .getCollectionName()));
    own.close();
    List<org.junit.jupiter.api.function.Executable> calls = List.of(
        () -> store.insert("c", Position.lastChildOf("a")), () -> store.children("a"),
        () -> store.move("b", Position.lastRoot()), store::snapshot, store::check,
        store::repair, store::ensureIndexes, () -> empty.load(Tree.parse("x")),
        () -> pattern.open(own.getDatabase(c.getNamespace().getDatabaseName())
            .getCollection(c.getNamespace().getCollectionName())));
    for (org.junit.jupiter.api.function.Executable call : calls) {
      dev.arbor.core.ChangeInterruptedException e = assertThrows(
          dev.arbor.core.ChangeInterruptedException.class, call);
      assertEquals(dev.arbor.core.ChangeInterruptedException.Outcome.NOT_APPLIED, e.outcome(),
          e::getMessage);
      assertTrue(e.getMessage().contains("its MongoClient is closed: open the store on an open"
          + " client"), e.getMessage());
    }
    assertEquals(Tree.parse("a(b)"), pattern.open(c).snapshot(), "nothing written");
  }

  /** The first users of a new scope create its lock document at once: none of them fails. */
  @Test
  void firstUsersOfANewScopeDoNotRace() throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      for (int round = 0; round < 20; round++) {
        String tenant = "t" + round;
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> users = new ArrayList<>();
        for (int u = 0; u < 8; u++) {
          int user = u;
          users.add(pool.submit(() -> {
            TreeStore s = TreePattern.PARENT_REFERENCES.open(c,
                TreeOptions.defaults().withScope("tenant", tenant));
            go.await();
            s.insert(tenant + "-" + user, Position.lastRoot());
            return null;
          }));
        }
        go.countDown();
        for (Future<?> f : users) {
          f.get(1, TimeUnit.MINUTES);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
