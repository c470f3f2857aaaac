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
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A change of one step under the tree's lock whose first sending runs past its lease (its holder
 * paused: the answer says the step matched nothing) and whose second sending lands and releases
 * the lock, its answer lost. The change was applied, so its writer must not be told {@code
 * NOT_APPLIED}. Before, the writer, meeting the released lock when it sent its fence again, took
 * the first sending's answer for the fate of the step; {@code LinearizabilityProcessesTest} with
 * every kind of change behind a flaky network found it as an update applied and told {@code
 * NOT_APPLIED}.
 */
class LostAnswerAfterALateSendingTest {
  private static final Tree FIXTURE = Tree.parse("a(b(c d) e) f(g)");
  private static final long LEASE = 150;

  /**
   * Every pattern, on the embedded server (which goes on after an error in an ordered bulk
   * write: a batch's step and release are bounded by the lease's deadline, and its answer tells
   * whether the step matched). On a server that stops at the first error the late first
   * sending stops at its fence, and the case does not arise.
   */
  static List<Arguments> cases() {
    List<Arguments> out = new java.util.ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      out.add(Arguments.of(pattern, "update",
          (Consumer<TreeStore>) s -> s.update("c", Map.of("x", 1))));
      out.add(Arguments.of(pattern, "delete a leaf",
          (Consumer<TreeStore>) s -> s.delete("d")));
    }
    return out;
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("cases")
  void aStepLandedIsNotToldNotAppliedFromAnEarlierSendingsAnswer(TreePattern pattern,
      String what, Consumer<TreeStore> change) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    AtomicInteger steps = new AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic
        .AtomicBoolean();
    TreeLock.Sender sender = new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (!armed.get() || batch.statements().stream().noneMatch(TreeLock.Statement::isStep)) {
          return TreeLock.BULK.send(coll, batch);
        }
        switch (steps.incrementAndGet()) {
          case 1:
            TruthfulOutcomesTest.pause(LEASE + 100); // the holder pauses past its deadline
            return TreeLock.BULK.send(coll, batch);
          case 2:
            TreeLock.BULK.send(coll, batch);
            // the answer is lost late: the writer's next command is a fence of its own
            TruthfulOutcomesTest.pause(LEASE / 2);
            throw new MongoSocketReadException("injected: the answer was lost",
                new ServerAddress("127.0.0.1", 1));
          default:
            return TreeLock.BULK.send(coll, batch);
        }
      }
    };
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).optimisticChanges(false).subtreeLocks(false).sender(sender));
    store.load(FIXTURE);
    armed.set(true);
    ChangeInterruptedException.Outcome outcome = null;
    try {
      change.accept(store);
    } catch (ChangeInterruptedException e) {
      outcome = e.outcome();
    }
    assertEquals(true, steps.get() >= 2, "the step was sent again after its late sending");
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(FIXTURE);
    change.accept(expected);
    assertEquals(expected.snapshot(), pattern.open(c).snapshot(), "the second sending landed");
    assertEquals(List.of(), pattern.open(c).check());
    org.junit.jupiter.api.Assertions.assertNotEquals(
        ChangeInterruptedException.Outcome.NOT_APPLIED, outcome, "the step landed");
  }
}
