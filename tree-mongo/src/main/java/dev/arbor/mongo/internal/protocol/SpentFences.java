package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.bson.BsonValue;

/**
 * Insert fences that guard nothing any more (every command they guarded was answered), deleted
 * {@value TreeLock#FENCE_SWEEP} or more at a time in one command, so that a change on the
 * embedded server pays no round trip of its own for them. One per writer of fences (the tree's
 * lock, the lanes); a fence left in place is harmless, and skipped by every query of nodes.
 */
final class SpentFences {
  private final LockDocument lock;
  private final ConcurrentLinkedQueue<BsonValue> spent = new ConcurrentLinkedQueue<>();

  SpentFences(LockDocument lock) {
    this.lock = lock;
  }

  /** Adds {@code fences}, and deletes a sweep's worth once there are enough. */
  void add(Collection<BsonValue> fences) {
    spent.addAll(fences);
    if (spent.size() < TreeLock.FENCE_SWEEP) {
      return;
    }
    List<BsonValue> ids = new ArrayList<>();
    for (BsonValue id; ids.size() < 4 * TreeLock.FENCE_SWEEP && (id = spent.poll()) != null; ) {
      ids.add(id);
    }
    if (ids.isEmpty()) {
      return;
    }
    try {
      lock.raw.deleteMany(lock.scoped(in("_id", ids)));
    } catch (MongoException e) {
      // left in place: harmless, and skipped by every query of nodes
    }
  }
}
