package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Lanes;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * A holder that deletes a node and stops right after its commit landed (its answer lost),
 * leaving its journal pending, until {@link #resume}.
 */
final class StoppedHolder {
  final CountDownLatch stopped = new CountDownLatch(1);
  final CountDownLatch resume = new CountDownLatch(1);
  /**
   * Whether the commit the holder stopped after landed (a lane's, bounded by the lane's deadline,
   * may have reached the server after it on a busy machine: then the change is not committed).
   */
  volatile boolean committed;
  /** What the delete returned, or the exception it ended with. */
  final AtomicReference<Object> outcome = new AtomicReference<>();
  private Thread thread;

  static StoppedHolder deleting(TreePattern pattern, MongoCollection<Document> c,
      ServerCapabilities capabilities, String id, String where) {
    StoppedHolder h = new StoppedHolder();
    TreeStore holder = pattern.open(c, capabilities.sender(h.sender()));
    h.thread = new Thread(() -> {
      try {
        h.outcome.set(holder.delete(id));
      } catch (RuntimeException e) {
        h.outcome.set(e);
      }
    });
    h.thread.start();
    try {
      assertTrue(h.stopped.await(20, TimeUnit.SECONDS), "the holder committed: " + where);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    return h;
  }

  /** Lets the holder go on, and waits until its delete ended. */
  void resume() {
    resume.countDown();
    try {
      thread.join(30_000);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Whether {@code update} stores a pending journal: a change's commit under the tree's lock,
   * or in a lane (its head's journal).
   */
  static boolean commits(Bson update) {
    BsonDocument set = update.toBsonDocument().getDocument("$set", new BsonDocument());
    return set.containsKey(TreeLock.JOURNAL) || set.containsKey(Lanes.FIELD + ".j");
  }

  private TreeLock.Sender sender() {
    return new TreeLock.Sender() {
      private final AtomicBoolean done = new AtomicBoolean();

      /** After the commit landed: the holder stops, its answer lost. */
      private void stop() {
        done.set(true);
        stopped.countDown();
        try {
          resume.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new MongoSocketReadException("injected: the holder stopped",
            new ServerAddress("127.0.0.1", 1));
      }

      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (!done.get() && commits(LandedHookSender.firstUpdate(batch))) {
          BulkWriteResult r;
          try {
            r = TreeLock.BULK.send(coll, new TreeLock.Batch(batch.statements().subList(0, 1)));
          } catch (com.mongodb.MongoBulkWriteException e) {
            r = e.getWriteResult();
          }
          // a lane's journal statement matches only before the lane's deadline
          committed = r.getMatchedCount() > 0 || r.getUpserts().size() > 0;
          stop();
        }
        return TreeLock.BULK.send(coll, batch);
      }

      @Override
      public BsonDocument fence(MongoCollection<BsonDocument> coll, Bson filter, Bson update) {
        BsonDocument d = TreeLock.Sender.super.fence(coll, filter, update);
        if (!done.get() && commits(update)) {
          committed = true;
          stop();
        }
        return d;
      }
    };
  }
}
