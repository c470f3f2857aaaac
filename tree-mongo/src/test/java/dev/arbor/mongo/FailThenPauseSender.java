package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * A holder's commands of one kind (those {@code chosen} picks) lost or paused: the first such
 * command fails with {@code failure} before it reaches the server (unless there is none), and the
 * next is held (the holder's pause: nothing it sends runs meanwhile) until {@link #go}; every
 * other command goes as it is. {@link #reached} counts down when the command is held.
 */
final class FailThenPauseSender implements TreeLock.Sender {
  final CountDownLatch reached = new CountDownLatch(1);
  final CountDownLatch go = new CountDownLatch(1);
  private final Predicate<TreeLock.Batch> chosen;
  private final Supplier<? extends MongoException> failure;
  /** How many chosen commands were sent (the failed one too). */
  volatile int sendings;

  /**
   * @param failure the error of the first chosen command, or null to hold the first one
   */
  FailThenPauseSender(Predicate<TreeLock.Batch> chosen,
      Supplier<? extends MongoException> failure) {
    this.chosen = chosen;
    this.failure = failure;
  }

  /** An insert command (led by its insert fence) of at least {@code statements}. */
  static Predicate<TreeLock.Batch> insertCommand(int statements) {
    return batch -> batch.statements().size() >= statements
        && batch.statements().get(0).model() instanceof com.mongodb.client.model.InsertOneModel;
  }

  @Override
  public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
    if (!chosen.test(batch)) {
      return TreeLock.BULK.send(collection, batch);
    }
    int sending = sendings++;
    if (sending == 0 && failure != null) {
      throw failure.get();
    }
    if (sending == (failure != null ? 1 : 0)) {
      reached.countDown();
      try {
        assertTrue(go.await(20, TimeUnit.SECONDS), "the holder's pause ended");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return TreeLock.BULK.send(collection, batch);
  }
}
