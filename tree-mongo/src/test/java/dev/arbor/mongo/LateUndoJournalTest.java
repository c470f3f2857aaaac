package dev.arbor.mongo;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.Position;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A graft stores its undo journal with a fence; the answer to that fence is lost, the fence is
 * sent again and lands, and the first sending reaches the server late (a connection cut after the
 * command left, a server still reading it) — after the graft's commit replaced the undo with the
 * graft's own journal. Matched by its owner alone, the late fence stored the undo again over the
 * committed journal; the graft's holder then paused past its lease, and the caller who took it
 * over completed the pending journal, the undo: a graft told applied was gone, and on nested
 * sets the first of its steps, run before the pause, stayed (intervals shifted on one side:
 * {@code LinearizabilityProcessesTest}, four writer processes with 5 ms leases behind a flaky
 * network, found it). The undo is now stored only while no journal is pending.
 */
class LateUndoJournalTest {
  private static final long LEASE = LostGraftCommitTest.LEASE;

  /** Patterns whose graft commits with a journal of its own (steps on existing documents). */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"NESTED_SETS", "CHILD_REFERENCES"})
  void aLateUndoNeverReplacesACommittedGraftsJournal(TreePattern pattern) {
    for (boolean ordered : new boolean[] {false, true}) {
      MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
      AtomicBoolean armed = new AtomicBoolean();
      AtomicReference<TreeLock.Batch> lateUndo = new AtomicReference<>();
      AtomicBoolean delivered = new AtomicBoolean();
      AtomicReference<MongoTreeStore> other = new AtomicReference<>();
      TreeLock.Sender sender = new LandedHookSender() {
        /** After the graft's commit landed: the undo's first sending arrives, then a pause. */
        @Override
        void landed(MongoCollection<BsonDocument> coll, Bson update) {
          String json = update.toBsonDocument().toJson();
          if (!armed.get() || lateUndo.get() == null || delivered.get()
              || !json.contains("\"arborJournal\"") || json.contains("/undo")) {
            return;
          }
          delivered.set(true);
          try {
            TreeLock.BULK.send(coll, lateUndo.get());
          } catch (MongoException e) {
            // refused: the journal pending is not the load's undo any more
          }
          TruthfulOutcomesTest.pause(LEASE + 100); // its holder pauses past its lease
          other.get().insert("x", Position.lastChildOf("f")); // takes over, completes the journal
        }

        @Override
        void before(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
          if (armed.get() && lateUndo.get() == null && LandedHookSender.firstUpdate(batch)
              .toBsonDocument().toJson().contains("/undo")) {
            lateUndo.set(batch); // its answer is lost; the command arrives later
            throw new MongoSocketWriteException("injected: the connection was cut after the"
                + " command left", new ServerAddress("127.0.0.1", 1), null);
          }
        }
      };
      LostGraftCommitTest.graftTakenOver(pattern, c, sender, other, armed, delivered::get,
          "the undo arrived late, after the commit", ordered);
    }
  }
}
