package dev.arbor.mongo;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A network between one writer and the server that loses and delays commands, for the
 * linearizability tests: of the commands of the lock protocol (batches, fences, lanes' claims,
 * gates and renewals), about one in {@code 1/p} is lost on its way (an I/O error, never sent),
 * as many have their answer lost (sent, then an I/O error), and as many arrive late (an I/O error
 * at once, the command sent 0 to 300 ms later from another thread, as a connection cut after the
 * command left and a server still reading it would; {@code -Darbor.flaky.lateMillis=N} for up to
 * N ms instead: a few ms land most late commands within the same hold of the lock, after the
 * holder's next commands); one in ten waits up to 150 ms first (a paused process). Seeded, so
 * that a failing round can be run again, though the threads' interleaving is not.
 */
final class FlakyNetwork implements TreeLock.Sender {
  private static final ServerAddress ADDRESS = new ServerAddress("127.0.0.1", 1);
  private final Random random;
  private final double p;
  private final ExecutorService late = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "flaky-network-late");
    t.setDaemon(true);
    return t;
  });

  FlakyNetwork(long seed, double p) {
    this.random = new Random(seed);
    this.p = p;
  }

  @Override
  public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
    return deliver(() -> TreeLock.BULK.send(collection, batch));
  }

  @Override
  public BsonDocument fence(MongoCollection<BsonDocument> collection, Bson filter,
      Bson update) {
    return deliver(() -> TreeLock.Sender.super.fence(collection, filter, update));
  }

  @Override
  public @Nullable BsonDocument exchange(MongoCollection<BsonDocument> collection, Bson filter,
      Bson update, FindOneAndUpdateOptions options) {
    return deliver(() -> TreeLock.Sender.super.exchange(collection, filter, update, options));
  }

  /** How late a late command arrives at most, in ms: {@code -Darbor.flaky.lateMillis}. */
  private static final int LATE_MILLIS = Math.max(1, Integer.getInteger("arbor.flaky.lateMillis",
      300));

  /** The kinds of fault injected: {@code -Darbor.flaky.kinds=lost,answer,late,pause} (all). */
  private static final String KINDS = System.getProperty("arbor.flaky.kinds",
      "lost,answer,late,pause");

  private <T> T deliver(Supplier<T> command) {
    double r;
    int pause;
    int delay;
    synchronized (random) {
      r = random.nextDouble();
      pause = random.nextInt(10) == 0 ? random.nextInt(150) : 0;
      delay = random.nextInt(LATE_MILLIS);
    }
    if (r < p && !KINDS.contains("lost") || r >= p && r < 2 * p && !KINDS.contains("answer")
        || r >= 2 * p && r < 3 * p && !KINDS.contains("late")) {
      r = 1;
    }
    if (!KINDS.contains("pause")) {
      pause = 0;
    }
    if (pause > 0) {
      TruthfulOutcomesTest.pause(pause);
    }
    if (r < p) {
      throw new MongoSocketReadException("injected: lost on its way", ADDRESS);
    }
    if (r < 2 * p) {
      command.get();
      throw new MongoSocketReadException("injected: its answer was lost", ADDRESS);
    }
    if (r < 3 * p) {
      late.execute(() -> {
        TruthfulOutcomesTest.pause(delay);
        try {
          command.get();
        } catch (MongoException e) {
          // refused late: a fence taken, a key met
        }
      });
      throw new MongoSocketReadException("injected: cut after the command left", ADDRESS);
    }
    return command.get();
  }

  /** Stops the late deliveries still waiting, after they ran or within {@code millis}. */
  void drain(long millis) throws InterruptedException {
    late.shutdown();
    late.awaitTermination(millis, TimeUnit.MILLISECONDS);
  }
}
