package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * What became of a change whose fence (or claim) met a duplicate key, the lock no longer naming
 * its caller: decided from what its {@link Execution} learnt from the answers it had (committed,
 * uncertain, the single step's own answer), the lock document (the pending journal's version and
 * token, the journals completed by others) and, for a change of one step, the mark of the
 * document it writes. It ends the execution: {@link Execution.Completed} when the change is done,
 * else the exception that tells the caller what became of it.
 */
final class Settlement {
  /** The execution whose fence met the duplicate key, and what it learnt from its answers. */
  private final Execution x;

  Settlement(Execution x) {
    this.x = x;
  }

  /**
   * A fence or the claim met a duplicate key: the lock document no longer names this caller's
   * token. What became of the change is decided from the lock document (the pending journal's
   * version and token, the tokens of journals completed by others) and, for a change of one
   * step, from the mark of the document it writes; never from the version alone, which another
   * change may share with a claim that did not land.
   */
  int settle() {
    if (x.claim != null && !x.leadAcked && x.uncertain && closedTheClaim()) {
      throw new TreeLock.ClaimRefused(); // no sending of the claim landed, and none can now
    }
    if (x.journaled) {
      TreeLock.State s = x.lock.read();
      if (s.op == x.v && x.origin.equals(s.opToken)) {
        if (!x.replaying()) {
          x.facade.replay.awaitCompletion(x.v, x.origin, x.what);
        }
        // A replay taken over in turn: the caller who took it over completes the journal, and
        // the wait for that is the one of the caller that started this replay (awaitCompletion
        // or the acquisition that took over), not a new one nested in it.
        throw new Execution.Completed();
      }
      if (s.done.contains(x.origin)) {
        // its commit went through; the caller who took over completed it
        throw new Execution.Completed();
      }
      if (x.committed) {
        // Its journal was stored and is no longer pending: a journal is only ever cleared by
        // completing it (or stuck, which the read above would have shown as pending).
        throw new Execution.Completed();
      }
      if (x.uncertain && !neverLanded(s)) {
        // The answer to a command that carried its commit was lost: that command may have
        // landed, and the change been completed since, beyond what the lock document still
        // records (its last 64 done). Neither planned again nor said not applied.
        throw new ChangeInterruptedException("Could not tell whether '" + x.what + "' on tree"
            + " '" + x.lock.tree + "' was applied: the answer to its commit was lost and the"
            + " lock document no longer tells; read the tree", Outcome.UNKNOWN, null);
      }
      if (x.claim != null && !x.leadAcked) {
        throw new TreeLock.ClaimRefused(); // the claim never landed: nothing was written
      }
      throw x.lock.lostTo(x.what, s);
    }
    // What the answer to its command said, else (and for an insert told refused, to be sure)
    // what its document says.
    // A step never sent was not applied, whatever a later change wrote over its document since.
    Boolean applied = !x.stepSent ? Boolean.FALSE
        : Boolean.TRUE.equals(x.stepApplied) ? Boolean.TRUE
        : x.stepApplied != null && !(x.steps.get(0) instanceof Step.Insert) ? Boolean.FALSE
        : null;
    if (applied == null) {
      if (x.steps.get(0) instanceof Step.Delete && x.deadline != 0 && x.facade.ordered()) {
        // A delete command whose answer was lost may still be running on MongoDB until its time
        // limit, counted from a start before its deadline (MongoDB reads $$NOW once, as a
        // command starts): its document tells only once that has passed. (An update or an
        // insert as an upsert is led by a fence that renewed the lease as it started: the lock
        // could not be taken over before it ended.)
        x.facade.fences.awaitStartedCommands(x.deadline - x.lock.read().renewed,
            x.leaseMillis);
      }
      applied = appliedAlone();
    }
    if (x.committed || Boolean.TRUE.equals(applied)) {
      // committed: the batch with the single step was acknowledged whole, so the step ran
      // inside the lease (on a server that goes on after errors, the batch's closing deadline
      // fence matched after it).
      throw new Execution.Completed();
    }
    if (applied == null) {
      throw new ChangeInterruptedException("Could not tell whether '" + x.what + "' on tree '"
          + x.lock.tree + "' was applied: the lock was taken over and a later change rewrote"
          + " the document it writes; read the tree", Outcome.UNKNOWN, null);
    }
    if (x.claim != null && !x.leadAcked) {
      throw new TreeLock.ClaimRefused(); // nothing was written: plan again under the lock
    }
    throw x.lock.lostTo(x.what, x.lock.read());
  }

  /**
   * Makes sure that no sending of this change's claim whose answer was lost lands from now on: a
   * claim matches the free lock at the version it claims whenever it arrives (nothing bounds it
   * in time), so a sending delivered late could take the lock with this change, its journal and
   * its first steps after this caller concluded that it never landed and planned the change
   * again (LateClaimTest: a leaf delete told {@code NodeNotFoundException}, its node gone).
   * Raises that version while the lock is still free at it.
   *
   * @return true if it was (no sending had landed, and none can now); false if the lock moved
   *     on since (a sending may have landed: the lock document, read next, tells)
   */
  private boolean closedTheClaim() {
    TreeLock.Quiet k = x.claim;
    return k != null && x.lock.raw.updateOne(and(x.lock.lockKey(),
            eq(LockDocument.EPOCH, k.epoch()), eq(LockDocument.VERSION, k.version()),
            eq(LockDocument.OWNER, null)),
        Updates.inc(LockDocument.VERSION, 1L)).getModifiedCount() == 1;
  }

  /**
   * Whether the lock document {@code s} proves that no command carrying this journaled change's
   * commit landed, though one's answer was lost: on a server that stops at the first error, every
   * journal that landed is, until {@value LockDocument#DONE_KEPT} more are recorded, either
   * pending under its version or among those done (completed by another caller, or released by
   * its writer: {@link Journal#releasedBy}); and each recorded since raised the version at least
   * once. (On a server that goes on after errors a writer's release does not record it.)
   */
  private boolean neverLanded(TreeLock.State s) {
    return x.facade.ordered() && s.keepsDoneSince(x.v) && s.op != x.v
        && !s.done.contains(x.origin);
  }

  /**
   * Whether the single step of an unjournaled change is in the tree: true if the document
   * bears its mark (with this change's token), false if it bears an earlier one, null if a
   * later change rewrote (or deleted) it since.
   */
  private @Nullable Boolean appliedAlone() {
    Step step = x.steps.get(0);
    BsonDocument filter = step instanceof Step.Insert i ? i.key()
        : step instanceof Step.Update u ? u.filter() : ((Step.Delete) step).filter();
    BsonDocument d = x.lock.raw.find(filter).first();
    if (step instanceof Step.Delete) {
      return d == null ? null : Boolean.FALSE;
    }
    if (d == null) {
      return step instanceof Step.Insert ? Boolean.FALSE : null;
    }
    BsonDocument mark = d.isDocument(Step.MARK) ? d.getDocument(Step.MARK) : new BsonDocument();
    long marked = Step.markVersion(d);
    if (marked == x.v && mark.isString("t")) {
      return x.origin.equals(mark.getString("t").getValue()) ? Boolean.TRUE
          : x.uncertain ? null : Boolean.FALSE;
    }
    return marked > x.v ? null : Boolean.FALSE;
  }
}
