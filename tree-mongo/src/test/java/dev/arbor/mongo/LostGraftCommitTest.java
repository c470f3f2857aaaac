package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoSocketWriteException;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A graft whose documents are in, under its undo journal, and whose commit command is lost on its
 * way while its holder pauses past its lease; another caller takes the lock over and completes
 * the pending journal, the undo, which deletes the grafted documents. The graft must then not
 * return as if it had been applied. Before, the undo's completion recorded the holder's token
 * among the journals done, which the graft, meeting the lock taken when it sent its commit again,
 * read as its commit completed: it returned its count while its nodes were gone (a change that
 * returned, lost). {@code LinearizabilityProcessesTest} with every kind of change behind a flaky
 * network found it.
 */
class LostGraftCommitTest {
  private static final Tree FIXTURE = Tree.parse("a(b(c d) e) f(g)");
  static final long LEASE = 150;

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aGraftUndoneByTheCallerWhoTookItOverIsNotToldApplied(TreePattern pattern) {
    for (boolean ordered : new boolean[] {false, true}) {
      MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
      AtomicBoolean armed = new AtomicBoolean();
      AtomicBoolean lost = new AtomicBoolean();
      AtomicReference<MongoTreeStore> other = new AtomicReference<>();
      AtomicInteger journals = new AtomicInteger();
      TreeLock.Sender sender = new TreeLock.Sender() {
        /**
         * Loses the graft's commit: the second command that stores a journal (the first stores
         * its undo), a lone fence on the embedded server, the lead of a batch on MongoDB's path.
         */
        private void maybeLose(org.bson.conversions.Bson update) {
          if (armed.get() && update.toBsonDocument().toJson().contains("\"arborJournal\"")
              && journals.incrementAndGet() == 2) {
            lost.set(true);
            TruthfulOutcomesTest.pause(LEASE + 100); // its holder pauses past its lease
            other.get().insert("x", Position.lastChildOf("f")); // takes over, completes the undo
            throw new MongoSocketWriteException("injected: the command was lost on its way",
                new ServerAddress("127.0.0.1", 1), null);
          }
        }

        @Override
        public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
          if (batch.statements().get(0).model()
              instanceof com.mongodb.client.model.UpdateOneModel<BsonDocument> u) {
            maybeLose(u.getUpdate());
          }
          return TreeLock.BULK.send(coll, batch);
        }

        @Override
        public BsonDocument fence(MongoCollection<BsonDocument> coll,
            org.bson.conversions.Bson filter, org.bson.conversions.Bson update) {
          maybeLose(update);
          return TreeLock.Sender.super.fence(coll, filter, update);
        }
      };
      graftTakenOver(pattern, c, sender, other, armed, lost::get,
          "the graft's commit was lost", ordered);
    }
  }

  /**
   * Loads the fixture with a store whose commands go through {@code sender} (nothing renews its
   * lease in the background), arms the sender, grafts {@code p(q r)} under {@code c}, which
   * {@code other} takes over once the sender's fault has struck ({@code struck}: {@code what}),
   * and checks the outcome: the tree is the fixture, {@code x} inserted by {@code other} and the
   * graft if it landed, and a graft that did not land was not told applied.
   */
  static void graftTakenOver(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender, AtomicReference<MongoTreeStore> other, AtomicBoolean armed,
      java.util.function.BooleanSupplier struck, String what, boolean ordered) {
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).keepAlive(false).sender(sender));
    store.load(FIXTURE);
    other.set((MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000)));
    armed.set(true);
    Tree grafted = Tree.parse("p(q r)");
    ChangeInterruptedException.Outcome outcome = null;
    boolean returned = false;
    try {
      store.graft("c", grafted);
      returned = true;
    } catch (ChangeInterruptedException e) {
      outcome = e.outcome();
    }
    assertTrue(struck.getAsBoolean(), what + " (ordered " + ordered + ")");
    Tree stored = pattern.open(c).snapshot();
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(FIXTURE);
    expected.insert("x", Position.lastChildOf("f"));
    if (stored.contains("p")) {
      expected.graft("c", grafted);
    }
    assertEquals(expected.snapshot(), stored, "ordered " + ordered);
    assertEquals(List.of(), pattern.open(c).check(), "ordered " + ordered);
    assertTrue(stored.contains("p") || !returned && outcome
        != ChangeInterruptedException.Outcome.COMMITTED, "the graft was undone, yet it "
        + (returned ? "returned" : "said " + outcome) + " (ordered " + ordered + ")");
  }
}
