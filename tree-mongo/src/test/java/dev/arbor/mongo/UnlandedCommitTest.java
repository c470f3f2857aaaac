package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * On a server that stops an ordered bulk write at its first error (MongoDB), a journaled change
 * whose commit command timed out (its time limit, or the client's) is sent again; when the lock
 * has moved on meanwhile, the lock document tells whether that command landed: a journal that
 * landed is pending under its version or, once completed, among the last 64 done (its writer's
 * release records it there too on this path). So when fewer than 64 changes can have been
 * recorded since, a commit found in neither never landed, and the change is planned again under
 * the lock, not reported {@code UNKNOWN}. Before, it was {@code UNKNOWN}: under leases shorter
 * than a command on a busy machine, 12 of 15 calls of a stress round were.
 */
class UnlandedCommitTest {
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "PARENT_REFERENCES", mode =
      EnumSource.Mode.EXCLUDE) // its move is one update, without journal
  void aCommitThatNeverLandedIsPlannedAgainNotUnknown(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    Tree fixture = Tree.parse("a(b(c d) e) f(g)");
    SwitchableSender sender = new SwitchableSender();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(30_000, 10_000).sender(sender).subtreeLocks(false));
    assertTrue(store.lock.ordered(), "the server's behaviour");
    store.load(fixture);
    store.snapshot(); // a quiet version: the next change is planned without the lock
    MongoTreeStore other = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .subtreeLocks(false));
    AtomicBoolean lose = new AtomicBoolean(true);
    sender.target = new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (lose.getAndSet(false)) {
          // The command never reaches the server; meanwhile another writer changes the tree.
          other.insert("h", Position.lastChildOf("f"));
          throw new MongoOperationTimeoutException("injected: timed out before it was sent");
        }
        return TreeLock.BULK.send(coll, batch);
      }
    };
    store.move("b", Position.firstChildOf("g"));
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.insert("h", Position.lastChildOf("f"));
    expected.move("b", Position.firstChildOf("g"));
    assertEquals(expected.snapshot(), other.snapshot());
    assertEquals(List.of(), other.check());
  }
}
