package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.LockDocument;
import dev.arbor.mongo.internal.protocol.Outcome;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A change of one step without journal whose batch (the step and the release) the server
 * applied, and whose answer a cut connection lost: the batch is sent again at once, behind the
 * fence it still has, and the second answer (the step matching nothing, being applied already;
 * the release meeting a duplicate key, the lock being free already) must not be taken for the
 * change not being applied. {@code CutConnectionTest} showed it on a loaded machine: an
 * optimistic move cut after its last write, sent again in time by the client's clock but run by
 * the server past its fence's deadline, told {@code LockLostException} ({@code NOT_APPLIED})
 * though it was in the tree. The second test fails on the code before the fix.
 *
 * <p>Each case runs on both server behaviours: the embedded server as it is, which goes on after
 * a failed statement ({@code DeadlineExecution}), and the embedded server that stops an ordered
 * bulk write at its first error as MongoDB does ({@link MongoTestServer#ordered()}, {@code
 * OrderedExecution}). On the second, the step travels with the claim and the release in one
 * command: sent again, its claim meets the lock freed by the first sending, and a change with a
 * journal was told {@code LockLostException} or planned again (a {@code DuplicateNodeException})
 * though it was in the tree, before its release recorded its writer among those done.
 *
 * <p>The patterns run side by side ({@link Execution @Execution(CONCURRENT)}), each on
 * collections of its own: the first test spends its time in the server's delay, which is real
 * (the server judges the fence's deadline by its own clock). The class as a whole runs alone.
 */
class ResentStepTest {
  /** Loses the answer of the first batch that carries a step of a plan. */
  static final class LosingTheStepsAnswer implements TreeLock.Sender {
    final AtomicInteger lost = new AtomicInteger();

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
      BulkWriteResult r = TreeLock.BULK.send(c, batch);
      if (lost.get() == 0 && batch.statements().stream().anyMatch(TreeLock.Statement::isStep)) {
        lost.incrementAndGet();
        throw new MongoSocketReadException("injected: the connection was cut after the server"
            + " applied the batch", new ServerAddress("127.0.0.1", 1));
      }
      return r;
    }

    @Override
    public BsonDocument fence(MongoCollection<BsonDocument> c, Bson filter, Bson update) {
      return TreeLock.BULK.fence(c, filter, update);
    }
  }

  /**
   * Loses the answer of the first batch that carries a step and, before it is sent again, clears
   * the lock document's record of the changes done: as if 64 later changes had been completed
   * meanwhile, pushing this one's token out.
   */
  static final class LosingTheAnswerAndTheRecord implements TreeLock.Sender {
    final MongoTreeStore store;
    final AtomicInteger lost = new AtomicInteger();

    LosingTheAnswerAndTheRecord(MongoTreeStore store) {
      this.store = store;
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
      BulkWriteResult r = TreeLock.BULK.send(c, batch);
      if (lost.get() == 0 && batch.statements().stream().anyMatch(TreeLock.Statement::isStep)) {
        lost.incrementAndGet();
        // as the changes that push a record out of the last 64 would: each raises the version
        c.updateOne(store.lock.lock.lockKey(), com.mongodb.client.model.Updates.combine(
            com.mongodb.client.model.Updates.unset(LockDocument.DONE),
            com.mongodb.client.model.Updates.inc(TreeLock.STATE + ".version",
                (long) LockDocument.DONE_KEPT)));
        throw new MongoSocketReadException("injected: the connection was cut after the server"
            + " applied the batch", new ServerAddress("127.0.0.1", 1));
      }
      return r;
    }

    @Override
    public BsonDocument fence(MongoCollection<BsonDocument> c, Bson filter, Bson update) {
      return TreeLock.BULK.fence(c, filter, update);
    }
  }

  /**
   * Loses the answer of the first batch that carries a step, and lets the batch sent again reach
   * the server only after {@code delayMillis}: a loaded server that queued the command, so that
   * it runs past the deadline its fence set although the client sent it in time.
   */
  static final class LateAfterTheLostAnswer implements TreeLock.Sender {
    final long delayMillis;
    final AtomicInteger stepBatches = new AtomicInteger();

    LateAfterTheLostAnswer(long delayMillis) {
      this.delayMillis = delayMillis;
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
      boolean step = batch.statements().stream().anyMatch(TreeLock.Statement::isStep);
      int n = step ? stepBatches.incrementAndGet() : 0;
      if (n == 2) {
        try {
          Thread.sleep(delayMillis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      BulkWriteResult r = TreeLock.BULK.send(c, batch);
      if (n == 1) {
        throw new MongoSocketReadException("injected: the connection was cut after the server"
            + " applied the batch", new ServerAddress("127.0.0.1", 1));
      }
      return r;
    }

    @Override
    public BsonDocument fence(MongoCollection<BsonDocument> c, Bson filter, Bson update) {
      return TreeLock.BULK.fence(c, filter, update);
    }
  }

  /**
   * As above, the second sending running after its fence's deadline: its step matches nothing
   * and its release fails whether or not the first sending landed, so neither answer says
   * whether the change is applied; the step's document does.
   */
  @ParameterizedTest
  @MethodSource("patternsOnBothServers")
  @Execution(ExecutionMode.CONCURRENT)
  void aSingleStepResentPastItsDeadlineAfterItsAnswerWasLostIsReportedApplied(
      TreePattern pattern, boolean ordered) {
    for (Consumer<TreeStore> change : changes()) {
      MongoCollection<Document> c = server(ordered).freshCollection();
      SwitchableSender switchable = new SwitchableSender();
      MongoTreeStore store = (MongoTreeStore) pattern.open(c,
          ServerCapabilities.probing(c).lease(600, 20_000).sender(switchable));
      assertEquals(ordered, store.lock.ordered(), "the server's behaviour");
      store.load(TruthfulOutcomesTest.TREE);
      store.size(); // sees the tree quiet: the change claims optimistically
      InMemoryTreeStore reference = new InMemoryTreeStore();
      reference.load(TruthfulOutcomesTest.TREE);
      LateAfterTheLostAnswer sender = new LateAfterTheLostAnswer(900);
      switchable.target = sender;
      change.accept(store); // returns: the change is applied
      change.accept(reference);
      switchable.target = TreeLock.BULK;
      assertEquals(reference.snapshot(), pattern.open(c).snapshot(), pattern.toString());
      assertEquals(List.of(), pattern.open(c).check());
    }
  }

  /**
   * On the server that stops at the first error, a change whose one command (lead, journal,
   * steps, release) landed, whose answer was lost, and whose record among the changes done is
   * gone by the time the command is sent again: its lead meets the lock freed, and nothing in the
   * lock document tells. It is applied; the call must not say {@code NOT_APPLIED} nor plan it
   * again: it returns (a change of one document, told by its mark) or says {@code UNKNOWN}.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  @Execution(ExecutionMode.CONCURRENT)
  void aJournaledChangeWhoseRecordIsGoneIsUnknownNotLost(TreePattern pattern) {
    for (Consumer<TreeStore> change : changes()) {
      for (boolean optimistic : new boolean[] {true, false}) {
        MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
        SwitchableSender switchable = new SwitchableSender();
        MongoTreeStore store = (MongoTreeStore) pattern.open(c,
            ServerCapabilities.probing(c).lease(30_000, 20_000).sender(switchable));
        assertTrue(store.lock.ordered(), "the server's behaviour");
        store.load(TruthfulOutcomesTest.TREE);
        InMemoryTreeStore reference = new InMemoryTreeStore();
        reference.load(TruthfulOutcomesTest.TREE);
        if (!optimistic) {
          store.forget();
        }
        switchable.target = new LosingTheAnswerAndTheRecord(store);
        try {
          change.accept(store);
        } catch (dev.arbor.core.ChangeInterruptedException e) {
          assertEquals(dev.arbor.core.ChangeInterruptedException.Outcome.UNKNOWN, e.outcome(),
              pattern + ": " + e);
        }
        change.accept(reference);
        switchable.target = TreeLock.BULK;
        assertEquals(reference.snapshot(), pattern.open(c).snapshot(), pattern.toString());
        assertEquals(List.of(), pattern.open(c).check());
      }
    }
  }

  /** Every pattern, on the embedded server as it is and on the one that stops as MongoDB does. */
  static Stream<Arguments> patternsOnBothServers() {
    return Stream.of(false, true).flatMap(ordered -> Stream.of(TreePattern.values())
        .map(p -> Arguments.of(p, ordered)));
  }

  /** The server that stops an ordered bulk write at its first error, or the one that goes on. */
  static MongoTestServer server(boolean ordered) {
    return ordered ? MongoTestServer.ordered() : MongoTestServer.get();
  }

  private static List<Consumer<TreeStore>> changes() {
    return List.of(
        s -> s.move("n3", Position.lastChildOf("n250")),
        s -> s.update("n9", java.util.Map.of("colour", "red")),
        s -> s.insert("new1", Position.lastChildOf("n0")),
        s -> s.delete("n12"));
  }

  @ParameterizedTest
  @MethodSource("patternsOnBothServers")
  @Execution(ExecutionMode.CONCURRENT)
  void aSingleStepResentAfterItsAnswerWasLostIsReportedApplied(TreePattern pattern,
      boolean ordered) {
    for (Consumer<TreeStore> change : changes()) {
      for (boolean optimistic : new boolean[] {true, false}) {
        MongoCollection<Document> c = server(ordered).freshCollection();
        // a long lease: the batch is sent again well within a third of it, without a new fence
        SwitchableSender switchable = new SwitchableSender();
        MongoTreeStore store = (MongoTreeStore) pattern.open(c,
            ServerCapabilities.probing(c).lease(30_000, 20_000).sender(switchable));
        assertEquals(ordered, store.lock.ordered(), "the server's behaviour");
        store.load(TruthfulOutcomesTest.TREE);
        InMemoryTreeStore reference = new InMemoryTreeStore();
        reference.load(TruthfulOutcomesTest.TREE);
        if (!optimistic) {
          store.forget();
        }
        LosingTheStepsAnswer sender = new LosingTheStepsAnswer();
        switchable.target = sender;
        change.accept(store); // returns: the change is applied
        change.accept(reference);
        switchable.target = TreeLock.BULK;
        assertEquals(reference.snapshot(), pattern.open(c).snapshot(), pattern.toString());
        assertEquals(List.of(), pattern.open(c).check());
        assertTrue(sender.lost.get() <= 1);
      }
    }
  }
}
