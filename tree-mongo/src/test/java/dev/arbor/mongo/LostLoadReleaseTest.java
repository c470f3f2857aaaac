package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A load whose release (its commit) is lost on its way while its loader pauses past its lease;
 * another caller takes the lock over, completes the load's undo journal (the loaded documents
 * go), then makes another load (the tree is empty again) and more than 64 journaled changes
 * before the loader sends its release again, on a server that stops at the first error (where a
 * journaled change's release records it among the journals done). The lock document keeps the
 * last 64 journals done only, so it no longer tells that the undo ran: the load must not be told
 * applied. Before, a lock document whose version had moved on without naming the loader was
 * read as the release landed, and the load returned with its nodes gone.
 */
class LostLoadReleaseTest {
  private static final long LEASE = 150;

  /** The patterns whose move of a node with a child writes more than one document (journaled). */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "PARENT_REFERENCES",
      mode = EnumSource.Mode.EXCLUDE)
  void aLoadUndoneLongAgoIsNotToldApplied(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    AtomicBoolean lost = new AtomicBoolean();
    AtomicReference<MongoTreeStore> other = new AtomicReference<>();
    TreeLock.Sender sender = new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (batch.statements().get(0).model()
            instanceof com.mongodb.client.model.UpdateOneModel<BsonDocument> u
            && u.getUpdate().toBsonDocument().toJson().contains("\"arborLock.version\"")
            && lost.compareAndSet(false, true)) {
          TruthfulOutcomesTest.pause(LEASE + 100); // the loader pauses past its lease
          // another caller takes the lock over (the undo runs), then makes 70 journaled
          // changes, each recorded among the journals done on MongoDB's path
          other.get().load(Tree.parse("p(x(y)) q"));
          for (int i = 0; i < 70; i++) {
            other.get().move("x", Position.lastChildOf(i % 2 == 0 ? "q" : "p"));
          }
          throw new MongoSocketWriteException("injected: the release was lost on its way",
              new ServerAddress("127.0.0.1", 1), null);
        }
        return TreeLock.BULK.send(coll, batch);
      }
    };
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).keepAlive(false).subtreeLocks(false).sender(sender));
    other.set((MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).subtreeLocks(false)));
    boolean returned = false;
    ChangeInterruptedException.Outcome outcome = null;
    try {
      store.load(Tree.parse("a(b(c d) e) f(g)"));
      returned = true;
    } catch (ChangeInterruptedException e) {
      outcome = e.outcome();
    }
    assertTrue(lost.get(), "the load's release was lost");
    Tree stored = pattern.open(c).snapshot();
    assertEquals(List.of(), pattern.open(c).check());
    assertTrue(!stored.contains("a"), "the undo ran: " + stored);
    assertTrue(!returned && outcome != ChangeInterruptedException.Outcome.COMMITTED,
        "the load was undone, yet it " + (returned ? "returned" : "said " + outcome));
  }
}
