package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A change of one step in a lane whose command's answer is lost, and whose command reaches the
 * server later (a connection cut after the command left, a slow network): the change must not
 * be told {@code NOT_APPLIED} while that command can still land. Before, the writer read the
 * document, found the step not applied yet, freed its marks and said {@code NOT_APPLIED}; the
 * command then landed within the lane's lease, and the change stood. Now the command is sent
 * again (its step is guarded: it applies once), and the call returns.
 */
class LateLaneAnswerTest {
  private static final String FIXTURE = "a(b(c d) e) f(g)";

  /** A store of {@code pattern} on {@code c} whose changes go in lanes, loaded with FIXTURE. */
  private static MongoTreeStore inALane(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender) {
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .optimisticChanges(false).sender(sender));
    store.load(Tree.parse(FIXTURE));
    return store;
  }

  /**
   * Loses the answer of the first command {@code which} selects (by default, the first that
   * carries a step), which reaches the server {@code delayMillis} later.
   */
  static final class LateCommand implements TreeLock.Sender {
    final AtomicBoolean armed = new AtomicBoolean(true);
    volatile CompletableFuture<Void> late = CompletableFuture.completedFuture(null);
    private final java.util.function.Predicate<TreeLock.Batch> which;
    private final long delayMillis;

    LateCommand() {
      this(batch -> batch.statements().stream().anyMatch(TreeLock.Statement::isStep), 300);
    }

    LateCommand(java.util.function.Predicate<TreeLock.Batch> which, long delayMillis) {
      this.which = which;
      this.delayMillis = delayMillis;
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
      if (which.test(batch) && armed.getAndSet(false)) {
        late = CompletableFuture.runAsync(() -> {
          TruthfulOutcomesTest.pause(delayMillis);
          try {
            TreeLock.BULK.send(c, batch);
          } catch (com.mongodb.MongoBulkWriteException e) {
            // refused: its insert landed by the sending again, or its fence was taken
          }
        });
        throw new MongoSocketReadException("injected: the connection was cut after the command"
            + " left", new ServerAddress("127.0.0.1", 1));
      }
      return TreeLock.BULK.send(c, batch);
    }
  }

  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aLostAnswerIsNotTakenForAStepNotApplied(TreePattern pattern) throws Exception {
    lostAnswer(pattern, s -> s.update("c", java.util.Map.of("x", 1)));
  }

  /** The same for an insert, sent again behind a new insert fence. */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aLostAnswerToAnInsertIsNotTakenForItNotApplied(TreePattern pattern) throws Exception {
    lostAnswer(pattern, s -> s.insert("z", Position.lastChildOf("c")));
  }

  private static void lostAnswer(TreePattern pattern,
      java.util.function.Consumer<dev.arbor.core.TreeStore> change) throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Tree fixture = Tree.parse(FIXTURE);
    SwitchableSender sender = new SwitchableSender();
    MongoTreeStore store = inALane(pattern, c, sender);
    LateCommand late = new LateCommand();
    sender.target = late;
    ChangeInterruptedException.Outcome outcome = null;
    try {
      change.accept(store);
    } catch (ChangeInterruptedException e) {
      outcome = e.outcome();
    }
    late.late.get(10, TimeUnit.SECONDS);
    sender.target = TreeLock.BULK;
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    if (outcome != ChangeInterruptedException.Outcome.NOT_APPLIED) {
      change.accept(expected);
    }
    assertEquals(expected.snapshot(), pattern.open(c).snapshot(),
        "the call said " + (outcome == null ? "applied" : outcome));
    assertEquals(List.of(), pattern.open(c).check());
    assertEquals(null, outcome, "a step whose command may still land");
  }
  /**
   * The lost command of an insert, sent again and answered, whose first sending reaches the
   * server after the lane ended and the node was deleted: its insert fence must still stop it.
   * Before, the fence of a command sent again was deleted with the lane's spent fences (32 at a
   * time: 31 inserts go first here), and the first sending then passed it and inserted the
   * deleted node again.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void theFenceOfAnInsertSentAgainStaysToStopItsFirstSending(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Tree fixture = Tree.parse(FIXTURE);
    SwitchableSender sender = new SwitchableSender();
    MongoTreeStore store = inALane(pattern, c, sender);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    for (int k = 0; k < TreeLock.FENCE_SWEEP - 1; k++) {
      store.insert("y" + k, Position.lastChildOf("g"));
      expected.insert("y" + k, Position.lastChildOf("g"));
    }
    LateCommand late = new LateCommand();
    sender.target = late;
    store.insert("z", Position.lastChildOf("c"));
    sender.target = TreeLock.BULK;
    store.delete("z"); // before the first sending arrives
    late.late.get(10, TimeUnit.SECONDS);
    assertEquals(expected.snapshot(), store.snapshot(), "the first sending inserted z again");
    assertEquals(List.of(), store.check());
  }

  /**
   * A lane's insert landed, its release ran past the lease (its holder paused), and the answer
   * to the renewal that would let it send the release again was lost: the insert stands, so the
   * call must not be told that nothing was written. Before, the renewal's I/O error ended the
   * call as {@code NOT_APPLIED}; a flaky network in {@code LinearizabilityTest} found it, as a
   * move applied and told so. Now a renewal is sent again while its answer is lost.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aRenewalAfterTheWritesWhoseAnswerIsLostDoesNotUnsayThem(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Tree fixture = Tree.parse(FIXTURE);
    AtomicBoolean inserted = new AtomicBoolean();
    AtomicBoolean released = new AtomicBoolean();
    AtomicBoolean lost = new AtomicBoolean();
    TreeLock.Sender sender = new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (inserted.get() && released.compareAndSet(false, true)) {
          TruthfulOutcomesTest.pause(500); // the holder pauses past its lease before its release
        }
        BulkWriteResult r = TreeLock.BULK.send(coll, batch);
        if (batch.statements().get(0).model() instanceof com.mongodb.client.model.InsertOneModel
            && batch.statements().size() == 2) {
          inserted.set(true);
        }
        return r;
      }

      @Override
      public BsonDocument exchange(MongoCollection<BsonDocument> coll, org.bson.conversions.Bson
          filter, org.bson.conversions.Bson update,
          com.mongodb.client.model.FindOneAndUpdateOptions options) {
        if (released.get() && lost.compareAndSet(false, true)) {
          TreeLock.Sender.super.exchange(coll, filter, update, options);
          throw new MongoSocketReadException("injected: the renewal's answer was lost",
              new ServerAddress("127.0.0.1", 1));
        }
        return TreeLock.Sender.super.exchange(coll, filter, update, options);
      }
    };
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(200, 20_000).optimisticChanges(false).keepAlive(false).sender(sender));
    store.load(fixture);
    ChangeInterruptedException.Outcome outcome = null;
    try {
      store.insert("z", Position.lastChildOf("c"));
    } catch (ChangeInterruptedException e) {
      outcome = e.outcome();
    }
    assertEquals(true, lost.get(), "a renewal's answer was lost after the release ran late");
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.insert("z", Position.lastChildOf("c"));
    assertEquals(expected.snapshot(), pattern.open(c).snapshot());
    assertEquals(null, outcome, "the insert stands");
    assertEquals(List.of(), pattern.open(c).check());
  }

  /**
   * A lane's journal whose command is cut off (an I/O error at once) and reaches the server
   * later, still in time, while its writer pauses past its lease; another writer then takes the
   * lane over and completes the journal. The change was applied, so its writer must not be told
   * {@code NOT_APPLIED}. Before, the writer, finding its lane taken over when it came back to
   * send the journal again, said that nothing of the change was written; a flaky network in
   * {@code LinearizabilityProcessesTest} (every kind of change, 20 ms leases) found it as a leaf
   * deleted and told {@code NOT_APPLIED}.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aJournalThatLandsLateIsNotToldNotApplied(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Tree fixture = Tree.parse(FIXTURE);
    long lease = 200;
    AtomicBoolean cut = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<TreeLock.Batch> held =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicReference<MongoTreeStore> other =
        new java.util.concurrent.atomic.AtomicReference<>();
    TreeLock.Sender sender = new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (carriesTheJournal(batch) && cut.compareAndSet(false, true)) {
          held.set(batch);
          throw new MongoSocketReadException("injected: the connection was cut after the"
              + " journal left", new ServerAddress("127.0.0.1", 1));
        }
        return TreeLock.BULK.send(coll, batch);
      }
    };
    dev.arbor.mongo.internal.protocol.Timing paused = new dev.arbor.mongo.internal.protocol
        .Timing() {
      @Override
      public long nanoTime() {
        return System.nanoTime();
      }

      @Override
      public void sleep(long millis) throws InterruptedException {
        TreeLock.Batch batch = held.getAndSet(null);
        if (batch == null) {
          Thread.sleep(millis);
          return;
        }
        // the journal's first sending lands now, in time; its writer pauses past its lease,
        // and another writer meets the lane's marks and takes them over
        TreeLock.BULK.send(c.withDocumentClass(BsonDocument.class), batch);
        Thread.sleep(lease + 100);
        try {
          other.get().update("d", java.util.Map.of("x", 1));
        } catch (dev.arbor.core.NodeNotFoundException e) {
          // the journal it completed deleted d
        }
      }
    };
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(lease, 20_000).optimisticChanges(false).keepAlive(false).timing(paused)
        .sender(sender));
    store.load(fixture);
    other.set((MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(lease, 20_000).optimisticChanges(false)));
    ChangeInterruptedException.Outcome outcome = null;
    try {
      store.delete("d");
    } catch (ChangeInterruptedException e) {
      outcome = e.outcome();
    }
    assertEquals(true, cut.get(), "the journal's command was cut off");
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.delete("d");
    assertEquals(expected.snapshot(), pattern.open(c).snapshot(), "the journal landed");
    assertEquals(List.of(), pattern.open(c).check());
    org.junit.jupiter.api.Assertions.assertNotEquals(ChangeInterruptedException.Outcome
        .NOT_APPLIED, outcome, "the delete was applied");
  }

  /** Whether {@code batch} stores a lane's journal on its head. */
  private static boolean carriesTheJournal(TreeLock.Batch batch) {
    return batch.statements().stream().anyMatch(s -> s.model()
        instanceof com.mongodb.client.model.UpdateOneModel<BsonDocument> u
        && u.getUpdate() != null && u.getUpdate().toBsonDocument().toJson()
            .contains("\"arborLane.j\""));
  }
}
