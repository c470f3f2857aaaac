package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import java.util.List;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * Whether the server stops an ordered bulk write at its first error <i>within</i> one command,
 * as MongoDB does. mongo-java-server goes on with the statements after a failed one; there the
 * lead (claim or fence) of a batch is sent as a command of its own, one round trip more per
 * change (see {@link Execution}). Probed once on the lock document: a failing fence followed by a
 * harmless update.
 */
final class OrderedProbe {
  private final LockDocument lock;
  private volatile @Nullable Boolean ordered;

  OrderedProbe(LockDocument lock) {
    this.lock = lock;
  }

  /** Skips the probe (tests count the round trips a MongoDB server would get). */
  void assume(boolean ordered) {
    this.ordered = ordered;
  }

  boolean ordered() {
    Boolean known = ordered;
    long start = lock.timing.nanoTime();
    while (known == null) {
      try {
        known = probe();
      } catch (MongoException e) {
        lock.retryPause(e, start, cause -> new ChangeInterruptedException("Could not probe the"
            + " server of tree '" + lock.tree + "' (" + cause.getMessage() + "); nothing was"
            + " written", Outcome.NOT_APPLIED, cause));
      }
    }
    return known;
  }

  /** The probe of {@link #ordered()}: each writes a field of its own, so it can be sent again. */
  private boolean probe() {
    lock.read(); // the lock document exists from here on
    // Each probe writes a field of its own: probes of other stores (or threads) sent at the
    // same time neither hide nor fake this one's harmless update.
    String token = LockDocument.newToken();
    String mine = TreeLock.PROBE + "." + token;
    try {
      lock.raw.bulkWrite(List.of(
          new UpdateOneModel<>(and(lock.lockKey(), eq(LockDocument.OWNER, "probe-" + token)),
              Updates.set(TreeLock.STATE + ".probe", token), new UpdateOptions().upsert(true)),
          new UpdateOneModel<>(lock.lockKey(), Updates.set(mine, true))));
    } catch (MongoBulkWriteException expected) {
      // the fence failed, as intended
    }
    BsonDocument d = lock.raw.find(lock.lockKey()).projection(Projections.include(mine)).first();
    boolean ranOn = d != null && d.isDocument(TreeLock.PROBE) && d.getDocument(TreeLock.PROBE)
        .containsKey(token);
    if (ranOn) {
      lock.raw.updateOne(lock.lockKey(), Updates.unset(mine));
    }
    ordered = !ranOn;
    return !ranOn;
  }
}
