package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.LockLostException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * On a server that stops an ordered bulk write at its first error (MongoDB), a holder's delete
 * goes in a command of its own, after the fence that renewed its lease: the driver sends deletes
 * and updates as separate commands. A holder paused between the two (a paused process, a slow
 * network) sends its delete after its lease has ended and another caller took the lock over and
 * changed the tree. The delete must then change nothing, and the holder must not be told its
 * change was applied. Before, the late delete ran (its time limit counts from its own arrival,
 * and its guards only keep it off documents a later change wrote): it deleted a node under which
 * the other caller had inserted a child since, leaving the child without a parent, and the holder
 * was told its delete was applied.
 */
class LateDeleteCommandTest {
  private static final long LEASE = 200;
  /** How long the paused holder waits before it sends a delete command: past its lease. */
  private static final long PAUSE = 3 * LEASE;

  /** Pauses once before the first command of deletes. */
  private static final class PausedBeforeDeletes implements TreeLock.Sender {
    final CountDownLatch paused = new CountDownLatch(1);
    final CountDownLatch resume = new CountDownLatch(1);

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      var first = batch.statements().get(0).model();
      if (paused.getCount() > 0
          && (first instanceof DeleteOneModel || first instanceof DeleteManyModel)) {
        paused.countDown();
        try {
          resume.await(10, TimeUnit.SECONDS);
          Thread.sleep(PAUSE);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return TreeLock.BULK.send(collection, batch);
    }
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aDeleteSentAfterItsLeaseChangesNothingAndIsNotToldApplied(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    PausedBeforeDeletes sender = new PausedBeforeDeletes();
    MongoTreeStore holder = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).sender(sender).subtreeLocks(false)
        .keepAlive(false)); // a paused process: nothing renews its lease
    assertTrue(holder.lock.ordered(), "the server's behaviour");
    Tree fixture = Tree.parse("a(b d)");
    holder.load(fixture);
    CompletableFuture<Class<?>> delete = CompletableFuture.supplyAsync(() -> {
      try {
        holder.delete("b");
        return null;
      } catch (LockLostException e) {
        return e.getClass();
      }
    });
    assertTrue(sender.paused.await(10, TimeUnit.SECONDS), "the holder reached its delete");
    // Another caller takes the lock over once the holder's lease ends, and inserts under b
    // (or finds b deleted, if the holder's journal deleted it first).
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(LEASE, 20_000)
        .subtreeLocks(false));
    Class<?> inserted = null;
    try {
      other.insert("c", Position.lastChildOf("b"));
    } catch (NodeNotFoundException e) {
      inserted = e.getClass();
    }
    sender.resume.countDown();
    Class<?> deleted;
    try {
      deleted = delete.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError(e.getCause());
    }
    assertEquals(List.of(), other.check(), "the tree after the late delete");
    // One order of the two calls explains both outcomes and the tree.
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    if (deleted == null) {
      expected.delete("b");
      assertEquals(NodeNotFoundException.class, inserted, "the delete went first");
    } else {
      assertEquals(null, inserted, "the insert went first, and the delete was not applied");
      expected.insert("c", Position.lastChildOf("b"));
    }
    assertEquals(expected.snapshot(), other.snapshot());
  }
}
