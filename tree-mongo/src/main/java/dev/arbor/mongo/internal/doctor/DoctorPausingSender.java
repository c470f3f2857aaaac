package dev.arbor.mongo.internal.doctor;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.WriteModel;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;

/**
 * The sender of {@link dev.arbor.mongo.Doctor}'s paused-holder check: once {@linkplain #armed
 * armed}, it pauses before the first command of deletes until the check {@linkplain #resume
 * resumes} it, then for {@code pauseMillis} more, as a paused process or a slow network would,
 * and sends it late.
 */
final class DoctorPausingSender implements TreeLock.Sender {
  private final long pauseMillis;
  private final CountDownLatch paused = new CountDownLatch(1);
  private final CountDownLatch resumed = new CountDownLatch(1);
  /** Whether it pauses the next command of deletes; until then every batch goes through. */
  volatile boolean armed;

  DoctorPausingSender(long pauseMillis) {
    this.pauseMillis = pauseMillis;
  }

  @Override
  public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
    WriteModel<BsonDocument> first = batch.statements().get(0).model();
    if (armed && (first instanceof DeleteOneModel || first instanceof DeleteManyModel)) {
      armed = false;
      paused.countDown();
      try {
        resumed.await(60, TimeUnit.SECONDS);
        Thread.sleep(pauseMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return TreeLock.BULK.send(collection, batch);
  }

  /** Waits until the holder paused before its delete command; false if it never did. */
  boolean awaitPaused() {
    try {
      return paused.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Lets the paused holder send its delete command, {@code pauseMillis} from now. */
  void resume() {
    resumed.countDown();
  }
}
