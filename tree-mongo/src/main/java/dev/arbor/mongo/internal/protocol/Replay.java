package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.TreeException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.jspecify.annotations.Nullable;

/**
 * The completion of a change whose holder stopped after its commit point: the caller who takes
 * the lock over replays the stored journal from its first step (every step is guarded, so a
 * replay finishes the change exactly), a caller whose change was committed waits for that, and
 * {@code repair()} completes a journal the server had refused (a stuck tree).
 */
final class Replay {
  private final TreeLock facade;
  private final LockDocument lock;
  private final Journal journal;

  Replay(TreeLock facade, LockDocument lock, Journal journal) {
    this.facade = facade;
    this.lock = lock;
    this.journal = journal;
  }

  /**
   * Replays the journal of change {@code op} under the hold, then clears it.
   *
   * @return whether this caller completed it (else another caller took this one over during the
   *     replay, and completed it)
   */
  boolean replay(TreeLock.Hold h, long op) {
    BsonDocument stored = journal.stored();
    if (stored == null || !stored.isNumber("v") || stored.getNumber("v").longValue() != op) {
      lock.raw.updateOne(and(lock.lockKey(), eq(LockDocument.OWNER, h.token)), Updates.combine(
          Updates.unset(LockDocument.OP), Updates.unset(LockDocument.OP_TOKEN)));
      return true;
    }
    facade.log.info("Tree '{}': completing the journal of '{}' (change {}), left by a holder"
        + " that stopped", lock.tree, stored.get("what") instanceof BsonString w ? w.getValue()
        : "?", op);
    List<Step> steps = journal.steps(stored, op);
    int parts = stored.getInt32("parts", new BsonInt32(0)).getValue();
    String what = stored.getString("what", new BsonString("a change")).getValue();
    String origin = stored.getString("t", new BsonString("")).getValue();
    boolean mine = facade.plans.run(h.token, origin, null, op, what, steps, false, false, h)
        .deleted() >= 0;
    if (parts > 0) {
      journal.deleteParts(op, parts);
    }
    return mine;
  }

  /**
   * Waits until the journal of change {@code v} is no longer pending, finishing it if its holder
   * stopped.
   */
  void awaitCompletion(long v, String origin, String what) {
    long start = lock.timing.nanoTime();
    String token = LockDocument.newToken();
    LockQueue queue = facade.queue;
    try {
      for (int attempt = 0; ; attempt++) {
        TreeLock.State s = queue.poll(token, true);
        if (s.stuck != null && s.stuck.isNumber("v") && s.stuck.getNumber("v").longValue() == v) {
          throw lock.stuck(s.stuck);
        }
        if (s.op != v || !origin.equals(s.opToken)) {
          return;
        }
        if (queue.recoverExpired(s, s.waiting.get(token).at())) {
          continue; // its holder stopped too: this caller completed the journal itself
        }
        if (lock.timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(lock.waitMillis)) {
          throw new ChangeInterruptedException("'" + what + "' on tree '" + lock.tree + "' is"
              + " committed but another caller is still completing it", Outcome.COMMITTED, null);
        }
        queue.pause(attempt, start, s);
      }
    } finally {
      queue.unregister(token);
    }
  }

  /**
   * Completes a stuck journal if the server now accepts its steps.
   *
   * @return null when the tree is not (or no longer) stuck, else what still stops it
   */
  @Nullable String retryStuck() {
    TreeLock.State s = lock.read();
    if (s.stuck == null) {
      return null;
    }
    String token = LockDocument.newToken();
    BsonDocument before = lock.raw.findOneAndUpdate(
        and(lock.lockKey(), eq(LockDocument.VERSION, s.version), eq(LockDocument.OWNER, null)),
        lock.take(token, "repair", Updates.inc(LockDocument.VERSION, 1L)),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.BEFORE)
            .projection(Projections.include(TreeLock.STATE)));
    if (before == null) {
      return "the lock document changed while repair() ran; call it again";
    }
    TreeLock.Hold h = facade.queue.hold(token, s.epoch, s.version + 1, "repair");
    try {
      Lanes lanes = facade.lanes;
      if (s.stuck.isDocument("lane") && lanes != null) {
        try {
          lanes.completeStuck(s.stuck.getDocument("lane")); // a lane's journal, in its head
        } catch (TreeException e) {
          lock.release(token); // still stuck (recorded again), and the lock free for a retry
          throw e;
        }
      } else {
        replay(h, s.op);
      }
    } catch (TreeException e) {
      return e.getMessage();
    } finally {
      h.close();
    }
    lock.raw.updateOne(and(lock.lockKey(), eq(LockDocument.OWNER, token)), Updates.combine(
        Updates.unset(LockDocument.STUCK), LockDocument.releaseUpdate()));
    return null;
  }
}
