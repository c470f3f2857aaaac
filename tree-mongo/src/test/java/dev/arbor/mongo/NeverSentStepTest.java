package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;

/**
 * A change of one step whose holder lost the lock before it sent the step was not applied, and
 * says so ({@link LockLostException}, nothing written), even when a later change has rewritten
 * the document the step writes since: its mark then no longer tells, but the step was never sent.
 * Before, such a change was told {@code UNKNOWN} ({@code ConcurrencyTest}, under load, in CI).
 */
class NeverSentStepTest {
  @Test
  void aStepNeverSentIsNotAppliedThoughALaterChangeRewroteItsDocument() throws Exception {
    MongoCollection<org.bson.Document> c = MongoTestServer.get().freshCollection();
    CountDownLatch fencing = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    SwitchableSender sender = new SwitchableSender();
    // A paused process: nothing renews its lease, and its first fence waits for the test.
    MongoTreeStore paused = (MongoTreeStore) TreePattern.PARENT_REFERENCES.open(c,
        ServerCapabilities.probing(c).lease(200, 20_000).subtreeLocks(false).keepAlive(false)
            .sender(sender));
    paused.load(Tree.parse("a(b c) d"));
    sender.target = new TreeLock.Sender() {
      @Override
      public com.mongodb.bulk.BulkWriteResult send(MongoCollection<BsonDocument> collection,
          TreeLock.Batch batch) {
        return TreeLock.BULK.send(collection, batch);
      }

      @Override
      public BsonDocument fence(MongoCollection<BsonDocument> collection, Bson filter,
          Bson update) {
        fencing.countDown();
        try {
          resume.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return TreeLock.BULK.fence(collection, filter, update);
      }
    };
    paused.forget(); // its change takes the lock first, then plans and sends its lone fence
    CompletableFuture<Void> move = CompletableFuture.runAsync(
        () -> paused.move("b", Position.lastChildOf("d")));
    fencing.await(20, TimeUnit.SECONDS);
    // Another writer takes the expired lock over and moves the same node: it rewrites b.
    MongoTreeStore other = (MongoTreeStore) TreePattern.PARENT_REFERENCES.open(c,
        ServerCapabilities.probing(c).lease(200, 20_000).subtreeLocks(false));
    other.move("b", Position.firstChildOf("c"));
    resume.countDown();
    java.util.concurrent.ExecutionException e = assertThrows(
        java.util.concurrent.ExecutionException.class, () -> move.get(20, TimeUnit.SECONDS));
    assertEquals(LockLostException.class, e.getCause().getClass(), e.getCause().toString());
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(Tree.parse("a(b c) d"));
    expected.move("b", Position.firstChildOf("c"));
    assertEquals(expected.snapshot(), other.snapshot());
    assertEquals(List.of(), other.check());
  }
}
