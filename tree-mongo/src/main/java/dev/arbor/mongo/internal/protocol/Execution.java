package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.bson.Encoded;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The sending of one program, and what became of its change: the program goes in batches of
 * statements of one kind each (the driver sends updates, inserts and deletes as commands of
 * their own), each insert command led by an insert fence; a batch is sent again after an I/O
 * error (its fence makes that safe) until the lock wait runs out, and halved when it ran out of
 * its time. Whether the change is committed, not applied or uncertain is tracked as the answers
 * come, and decided from the lock document when a fence finds the lock lost.
 *
 * <p>How a batch is guarded depends on how the server runs an ordered bulk write ({@link
 * OrderedProbe}): {@link OrderedExecution} on a server that stops at the first error (MongoDB),
 * {@link DeadlineExecution} on one that goes on after a failed statement (mongo-java-server).
 */
abstract sealed class Execution permits OrderedExecution, DeadlineExecution {
  final TreeLock facade;
  final LockDocument lock;
  final Fences fencing;
  final String token;
  final String origin;
  final TreeLock.@Nullable Quiet claim;
  final long v;
  final String what;
  final List<Step> steps;
  final List<TreeLock.Statement> program;
  final int commitPoint;
  final boolean journaled;
  final TreeLock.@Nullable Hold hold;
  boolean committed;
  boolean uncertain;
  long deleted;
  /** Insert fences used by this acquisition so far, when no hold counts them. */
  int insertFences;
  /** The ids of the insert fences this execution inserted. */
  final List<BsonValue> fences = new ArrayList<>();
  /** Whether a command was sent again after an I/O error (the first may still arrive). */
  boolean resent;
  /** Whether the server acknowledged the lead (claim or first fence) of the program. */
  boolean leadAcked;
  /** Whether the single step of a change without journal ran, when its answer said so. */
  @Nullable Boolean stepApplied;
  /** Whether a command carrying the single step of a change without journal was sent. */
  boolean stepSent;
  /**
   * The most statements in the next batch: halved each time a batch runs out of its time (the
   * lease), so that a holder on a slow server or a busy machine still gets through.
   */
  int limit = Integer.MAX_VALUE;
  /**
   * Whether a failure before the commit point frees the lock: not for a replay nor a graft's
   * commit, which leave a journal (the stopped holder's, the graft's undo) to complete.
   */
  boolean freeOnFailure;
  /**
   * The lease this execution renews its hold for, in ms: the hold's, doubled ({@link
   * LockDocument#grown}) each time a batch arrived after it while this caller still held the lock.
   */
  long leaseMillis;
  /** The lease the lock document held for this execution when it began. */
  private final long startLease;
  /**
   * Whether the batch being built renews the lease for {@link #leaseMillis} before its steps (a
   * fence that sets it): only then may its time limit be that lease's, since the server must stop
   * it before anyone may take the lock over. Other batches keep the time limit of the lease the
   * execution began with.
   */
  boolean leased;

  /** When the lease of the last lone fence ends (the server's clock); see {@link #loneFence}. */
  long deadline;
  /** When the last lone fence was sent (local clock), 0: never. */
  private long fencedAt;

  /**
   * The execution of {@code program} on this lock's server.
   *
   * @param token the token of the acquisition that writes
   * @param origin the token of the change's writer, which its journal names
   * @param claim the quiet version an optimistic change claims, or null: the lock is held
   * @param commitPoint the index in {@code program} of the statement that commits the change
   * @param journaled whether the change has a journal (stored by the program or already)
   * @param hold the hold this execution writes under, or null for a claim
   */
  static Execution of(TreeLock facade, String token, String origin,
      TreeLock.@Nullable Quiet claim, long v, String what, List<Step> steps,
      List<TreeLock.Statement> program, int commitPoint, boolean journaled,
      TreeLock.@Nullable Hold hold) {
    return facade.ordered()
        ? new OrderedExecution(facade, token, origin, claim, v, what, steps, program,
            commitPoint, journaled, hold)
        : new DeadlineExecution(facade, token, origin, claim, v, what, steps, program,
            commitPoint, journaled, hold);
  }

  Execution(TreeLock facade, String token, String origin, TreeLock.@Nullable Quiet claim,
      long v,
      String what, List<Step> steps, List<TreeLock.Statement> program, int commitPoint,
      boolean journaled, TreeLock.@Nullable Hold hold) {
    this.facade = facade;
    this.lock = facade.lock;
    this.fencing = facade.fences;
    this.token = token;
    this.origin = origin;
    this.claim = claim;
    this.v = v;
    this.what = what;
    this.steps = steps;
    this.program = program;
    this.commitPoint = commitPoint;
    this.journaled = journaled;
    this.hold = hold;
    this.leaseMillis = hold != null ? hold.leaseMillis : lock.leaseMillis;
    this.startLease = leaseMillis;
  }

  /** Whether the lease grew in this execution (the lock document may not say so yet). */
  boolean grew() {
    return leaseMillis != startLease;
  }

  /**
   * A batch ran past the lease while this caller still held the lock (a busy machine, a slow
   * server): the next fences renew it for twice as long, so that a holder whose every command
   * takes longer than its lease still gets through.
   */
  void outgrewLease() {
    long grown = lock.grown(leaseMillis);
    if (grown != leaseMillis) {
      facade.log.debug("Tree '{}': a command of '{}' arrived after its lease of {} ms; renewing it"
          + " for {} ms", lock.tree, what, leaseMillis, grown);
    }
    leaseMillis = grown; // the hold keeps the lease it was taken for, which the lock holds
  }

  /** Ends an execution whose change was completed, by this caller or by another. */
  static final class Completed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Completed() {
      super(null, null, false, false);
    }
  }

  private int nextInsertFence() {
    return hold != null ? hold.insertFences++ : insertFences++;
  }

  /**
   * The insert fence of an insert command whose answer was lost, stored (settled) before the
   * next number is used: a caller who takes the lock over takes the number after the last fence
   * stored, so a number left free by a command lost on its way would let the command sent again
   * behind the next number pass that revocation and insert after the takeover
   * ({@code LateInsertCommandTest}, under the tree's lock: orphans on every pattern).
   */
  private @Nullable WriteModel<BsonDocument> unsettledFence;

  /**
   * Before the batch that starts at {@code next} (of statements of {@code kind}): sends what the
   * server needs as a command of its own.
   *
   * @return the program index to go on from
   */
  abstract int beforeBatch(int next, int kind, long start);

  /**
   * Adds the statements that lead a batch of updates or deletes starting at {@code next}.
   *
   * @return the program index to go on from
   */
  abstract int lead(List<TreeLock.Statement> batch, List<Integer> index, int next, int kind);

  /** Statement {@code s} of the program (an update or a delete) as it is sent in a batch. */
  abstract TreeLock.Statement bounded(TreeLock.Statement s);

  /** Adds what closes a batch of statements of {@code kind}, if anything. */
  abstract void close(List<TreeLock.Statement> batch, List<Integer> index, int kind);

  /**
   * Whether the single step of a change without journal ran, from the answer to the command
   * that carried it (at {@code index.indexOf(1)}), whose statement {@code i} failed.
   */
  abstract boolean stepRan(MongoBulkWriteException e, List<Integer> index, int i);

  /** Whether the statement at program index {@code at} (-2: none) closed its batch. */
  abstract boolean closingFence(int at);

  /** Whether a lone fence was sent less than a third of the lease ago. */
  boolean freshFence() {
    return fencedAt != 0 && lock.timing.nanoTime() - fencedAt
        < TimeUnit.MILLISECONDS.toNanos(lock.leaseMillis) / 3;
  }

  /**
   * Sends the lead (at the start) or a renewal as a command of its own ({@code findOneAndUpdate})
   * and learns from it until when the lease holds ({@link #deadline}): what bounds the statements
   * of a batch that no fence in its own command can guard.
   *
   * @return the program index to go on from
   */
  int loneFence(int next, long start) {
    return loneFence(next, start, false);
  }

  /**
   * {@link #loneFence(int, long)}; {@code deletes}: a batch of deletes follows, which the fence
   * records in the lock document ({@link LockDocument#DELETING}) before any is sent.
   */
  int loneFence(int next, long start, boolean deletes) {
    UpdateOneModel<BsonDocument> m = (UpdateOneModel<BsonDocument>) (next == 0
        ? program.get(0).model() : fencing.fence(token, null, leaseMillis));
    Bson update = deletes
        ? Updates.combine(m.getUpdate(), Updates.set(LockDocument.DELETING, token))
        : m.getUpdate();
    for (;;) {
      try {
        fencedAt = lock.timing.nanoTime();
        BsonDocument after = facade.sender.fence(fencing.timed(leaseMillis), m.getFilter(),
            update);
        TreeLock.State s = new TreeLock.State(after);
        deadline = s.renewed + (s.lease > 0 ? s.lease : leaseMillis);
        if (hold != null) {
          hold.renewed();
        }
        if (next == 0) {
          leadAcked = true;
          if (commitPoint == 0) {
            committed = true;
          }
          return 1;
        }
        return next;
      } catch (MongoCommandException | MongoWriteException e) {
        if (!MongoErrors.duplicateKey(e)) {
          throw e;
        }
        if (next == 0 && claim != null && !uncertain) {
          throw new TreeLock.ClaimRefused();
        }
        return settleLost();
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e)) {
          throw e;
        }
        if (next == 0) {
          uncertain = true; // the lead may have gone through
        }
        retryAfter(e, start);
      } catch (IllegalStateException e) { // the client was closed under the change
        throw interrupted(e, next == 0 && commitPoint == 0);
      }
    }
  }


  /**
   * Whether the single step of a change without journal ran, from the answer to the command
   * that carried it bounded by its deadline: the batch held the step and the release (or a
   * closing fence), which failed, so the counts are the step's. (A statement before the failed
   * one did run, but a step bounded by a deadline that had passed matched nothing.)
   */
  boolean ranAlone(MongoBulkWriteException e, int at) {
    Step step = steps.get(0);
    if (step instanceof Step.Insert) {
      // led by its insert fence, which the server counts too: the insert ran unless refused
      for (BulkWriteError error : e.getWriteErrors()) {
        if (error.getIndex() <= at) {
          return false;
        }
      }
      return true;
    }
    BulkWriteResult r = e.getWriteResult();
    return step instanceof Step.Update ? r.getMatchedCount() > 0 : r.getDeletedCount() > 0;
  }

  long execute() {
    long start = lock.timing.nanoTime();
    int next = 0;
    while (next < program.size()) {
      int kind = Fences.kind(program.get(next));
      next = beforeBatch(next, kind, start);
      if (next >= program.size()) {
        break;
      }
      kind = Fences.kind(program.get(next));
      List<TreeLock.Statement> batch = new ArrayList<>();
      List<Integer> index = new ArrayList<>();
      leased = false;
      if (kind == 1 && unsettledFence != null) {
        WriteModel<BsonDocument> lost = unsettledFence;
        unsettledFence = null;
        if (!fencing.settleInsertFence(lost, token)) {
          int resume = settleLost(); // another caller took the lock over and the fence
          if (resume >= 0) {
            next = resume;
          }
          continue;
        }
      }
      if (kind == 1) {
        // An insert command is led by an insert fence, which a caller who took the lock over
        // has taken first: then the command stops before its first insert.
        BsonDocument fenceId = fencing.insertFence(token, nextInsertFence());
        fences.add(fenceId);
        batch.add(new TreeLock.Statement(new InsertOneModel<>(fencing.insertFenceDocument(
            fenceId, token)), 0));
        index.add(-1);
      } else {
        next = lead(batch, index, next, kind);
      }
      long bytes = 0;
      int led = batch.size();
      while (next < program.size() && batch.size() < facade.batchStatements
          && (batch.size() - led < limit || batch.size() == led)
          && Fences.kind(program.get(next)) == kind) {
        TreeLock.Statement s = program.get(next);
        long size = s.isStep() ? steps.get(s.step() - 1).size() : 1_024;
        if (batch.size() > 1 && bytes + size > Encoded.MAX_BATCH) {
          break;
        }
        batch.add(kind == 1 ? s : bounded(s));
        index.add(next);
        bytes += size;
        next++;
      }
      if (kind == 2 && next == program.size() - 1) {
        // the release follows the last deletes in the same call (a command of its own), and
        // closes the batch
        batch.add(bounded(program.get(next)));
        index.add(next);
        next++;
      }
      close(batch, index, kind);
      int resume = send(batch, index, start);
      if (resume >= 0) {
        next = resume;
      }
      if (hold != null) {
        hold.renewed();
      }
    }
    return deleted;
  }

  void retryAfter(MongoException e, long start) {
    resent = true;
    if (lock.timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(lock.waitMillis)) {
      throw interrupted(e, false);
    }
    lock.pause();
  }

  /**
   * Sends one batch.
   *
   * @return the program index to go on from, or -1 to go on after the batch
   */
  private int send(List<TreeLock.Statement> batch, List<Integer> index, long start) {
    int first = -1;
    for (int i : index) {
      if (i >= 0) {
        first = i;
        break;
      }
    }
    int last = -1;
    for (int i : index) {
      last = Math.max(last, i);
    }
    stepSent |= carriesTheSingleStep(index);
    try {
      BulkWriteResult r = facade.sender.send(fencing.timed(leased ? leaseMillis : startLease),
          new TreeLock.Batch(batch));
      deleted += r.getDeletedCount();
      if (index.contains(0)) {
        leadAcked = true;
      }
      if (last >= commitPoint) {
        committed = true;
      }
      return -1;
    } catch (MongoBulkWriteException e) {
      deleted += e.getWriteResult().getDeletedCount();
      if (e.getWriteErrors().isEmpty()) {
        // A write-concern error alone (a primary stepping down during the majority wait):
        // every statement ran on the primary, but may be rolled back. Sent again behind its
        // fence: what ran is guarded or idempotent.
        if (last >= commitPoint || carriesTheSingleStep(index)) {
          uncertain = true;
        }
        doubtTheStep(index);
        retryAfter(e, start);
        return first;
      }
      BulkWriteError error = e.getWriteErrors().get(0);
      int i = error.getIndex();
      int at = index.get(i);
      if (!journaled && index.contains(1)) {
        // The single step of a change without journal was in this command: its answer says
        // whether it ran, which its document may no longer tell once a later change rewrote it.
        // Once an earlier sending of the step may have landed (its answer was lost), an answer
        // that it did not run says nothing: a step sent again matches nothing when it is
        // applied already, or when it reached the server past its deadline. Its document tells.
        stepApplied = Boolean.TRUE.equals(stepApplied) || stepRan(e, index, i) ? Boolean.TRUE
            : uncertain ? null : Boolean.FALSE;
      }
      if (index.subList(0, i).contains(0)) {
        leadAcked = true;
      }
      if (at > commitPoint && journaled) {
        committed = true;
      }
      if (replaying() && at == program.size() - 1 && MongoErrors.duplicateKey(error.getCode())
          && completionStored()) {
        // a replay ends with its completion (Fences#completion), which an earlier sending,
        // whose answer was lost, made
        return -1;
      }
      if (closingFence(at)) {
        // The closing fence of a batch on a server that goes on after errors: the batch ran
        // past the lease (its late statements changed nothing) or the lock was lost.
        if (MongoErrors.duplicateKey(error.getCode()) && stillHeld()) {
          outgrewLease();
          return first; // behind a new fence, all of it again: its steps are guarded
        }
        if (!MongoErrors.duplicateKey(error.getCode())) {
          throw e;
        }
        return settleLost();
      }
      if (i == 0 && at == -1 && Fences.kind(batch.get(0)) == 1) {
        if (!MongoErrors.duplicateKey(error.getCode())) {
          throw e;
        }
        String other = MongoErrors.otherIndex(error.getMessage());
        if (other != null) {
          return fenceRefusedByIndex(other, batch, e);
        }
        return settleLost(); // the insert fence was taken: another caller took the lock over
      }
      if (i == 0 && (at == 0 || at == -1)) {
        if (at == 0 && claim != null && !uncertain && MongoErrors.duplicateKey(error.getCode())) {
          throw new TreeLock.ClaimRefused();
        }
        if (!MongoErrors.duplicateKey(error.getCode())) {
          throw e;
        }
        return settleLost();
      }
      TreeLock.Statement s = batch.get(i);
      if (!s.isStep()) {
        if (MongoErrors.duplicateKey(error.getCode())) {
          return settleLost(); // the release after the steps: the change is done
        }
        throw e;
      }
      if (Fences.kind(s) == 1 && MongoErrors.duplicateKey(error.getCode())
          && (uncertain || replaying())) {
        return at + 1; // inserted by an earlier send, or by the change being replayed
      }
      return failStep(s.step(), error, e);
    } catch (MongoException e) {
      if (!MongoErrors.transientError(e)) {
        throw e;
      }
      if (last >= commitPoint || carriesTheSingleStep(index)) {
        uncertain = true; // its answer is lost: the change may have taken effect
      }
      doubtTheStep(index);
      if (Fences.kind(batch.get(0)) == 1 && index.get(0) == -1) {
        unsettledFence = batch.get(0).model(); // settled before the next insert command
      }
      if (MongoErrors.timedOut(e)) {
        if (batch.stream().filter(TreeLock.Statement::isStep).count() <= 1) {
          outgrewLease(); // one step alone outlasted the lease: halving cannot help
        }
        limit = Math.max(1, (batch.size() - 1) / 2);
      }
      retryAfter(e, start);
      return first;
    } catch (IllegalStateException e) { // the client was closed under the change
      throw interrupted(e, last >= commitPoint);
    }
  }

  /**
   * A driver error the execution does not handle: what became of the change is what this caller
   * knows of it. Before its commit point nothing was written, and the lock is freed.
   */
  RuntimeException failed(MongoException e) {
    if (committed || uncertain) {
      return interrupted(e, false);
    }
    if (freeOnFailure && (leadAcked || hold != null)) {
      lock.releaseQuietly(token);
    }
    if (MongoErrors.transientError(e)) {
      return interrupted(e, false);
    }
    return new TreeException("Tree '" + lock.tree + "': the server refused '" + what + "': "
        + e.getMessage() + "; nothing was written", e);
  }

  /** The change cannot go on: says what became of it, as far as this caller can tell. */
  ChangeInterruptedException interrupted(RuntimeException e, boolean sentCommit) {
    Outcome outcome = committed ? Outcome.COMMITTED
        : uncertain || sentCommit ? Outcome.UNKNOWN : Outcome.NOT_APPLIED;
    return new ChangeInterruptedException("Could not complete '" + what + "' on tree '"
        + lock.tree + "': " + e.getMessage() + (outcome == Outcome.COMMITTED
            ? "; its journal is stored and the next access to the tree completes it" : ""),
        outcome, e);
  }

  /**
   * The answer to a command that carried the single step of a change without journal was lost:
   * an earlier sending's answer that the step did not run (it ran past its deadline) no longer
   * tells its fate, since this sending may have run it (LostAnswerAfterALateSendingTest).
   */
  private void doubtTheStep(List<Integer> index) {
    if (carriesTheSingleStep(index) && !Boolean.TRUE.equals(stepApplied)) {
      stepApplied = null;
    }
  }

  /**
   * Whether a batch carries the single step of a change without journal: that step is the
   * change, so once the batch's answer is lost the change may have taken effect.
   */
  private boolean carriesTheSingleStep(List<Integer> index) {
    return !journaled && index.contains(1);
  }

  /** Whether this caller's token still holds the lock (its lease may have run out). */
  private boolean stillHeld() {
    BsonDocument d = lock.raw.find(lock.lockKey())
        .projection(Projections.include(LockDocument.OWNER))
        .first();
    return d != null && new TreeLock.State(d).owner != null
        && new TreeLock.State(d).owner.equals(token);
  }

  /**
   * Whether this caller still holds the lock and the journal this program completes is no
   * longer pending: while it holds the lock, only its completion clears that journal.
   */
  private boolean completionStored() {
    TreeLock.State s = lock.read();
    return token.equals(s.owner)
        && !(s.op == v && (s.opToken == null || origin.equals(s.opToken)));
  }

  /**
   * Whether this execution replays a journal stored by another holder (its program ends with the
   * {@linkplain Fences#completion completion} of that journal, not with the release): it runs
   * under a hold, at the stored change's version, not the hold's.
   */
  boolean replaying() {
    return claim == null && hold != null && hold.version != v;
  }

  /**
   * A fence or the claim met a duplicate key: what became of the change ({@link Settlement}).
   *
   * @return the program index to go on from (never: it throws what became of the change)
   */
  int settleLost() {
    return new Settlement(this).settle();
  }

  /**
   * The insert fence that leads {@code batch} was refused by a unique index of the user's (one
   * created after the store last read the indexes, {@code UniqueIndexes}): the lock is still
   * this change's. A change without journal (a single insert) is undone and told not written:
   * on a server that goes on after a failed statement its insert may have run, and is deleted
   * (guarded by this change's version, under the lock it holds). A journaled change cannot go
   * on: the tree is stuck with the server's message, and {@code repair()} completes it once the
   * index is fixed.
   */
  private int fenceRefusedByIndex(String index, List<TreeLock.Statement> batch,
      MongoBulkWriteException e) {
    if (journaled || replaying()) {
      String why = MongoErrors.refusedByIndex(lock.tree, index, "the insert fence of '" + what
          + "'", e).getMessage();
      return stick(0, why, why);
    }
    List<BsonValue> ids = new ArrayList<>();
    for (TreeLock.Statement s : batch) {
      if (s.isStep() && s.model() instanceof InsertOneModel<BsonDocument> insert) {
        ids.add(insert.getDocument().get("_id"));
      }
    }
    Fences.takeBackInserts(lock.raw, e.getWriteResult(), ids, v);
    lock.release(token);
    throw MongoErrors.refusedByIndex(lock.tree, index, "the insert fence of '" + what
        + "' (nothing of the change was written)", e);
  }

  /** A step the server refuses. */
  private int failStep(int step, BulkWriteError error, MongoBulkWriteException e) {
    String reason = "step " + step + " of " + steps.size() + " of '" + what + "' was refused"
        + " by the server: " + error.getMessage();
    if (!journaled) {
      lock.release(token);
      throw new TreeException("Tree '" + lock.tree + "': " + reason + "; nothing was written", e);
    }
    Step s = steps.get(step - 1);
    boolean single = s instanceof Step.Insert || (s instanceof Step.Update u && !u.multi());
    if (step == 1 && single && !uncertain && !replaying()) {
      lock.release(token); // clears the journal: nothing of the change was written
      throw new TreeException("Tree '" + lock.tree + "': " + reason + "; nothing was written", e);
    }
    return stick(step, reason, error.getMessage());
  }

  /**
   * Marks the tree stuck at {@code step} (0: before the first) with the server's {@code error},
   * frees the lock, logs {@code reason} and throws: whoever meets the mark is told, and {@code
   * repair()} completes the change once the cause is removed.
   */
  private int stick(int step, String reason, String error) {
    BsonDocument stuck = new BsonDocument("v", new BsonInt64(v))
        .append("what", new BsonString(what)).append("step", new BsonInt32(step))
        .append("steps", new BsonInt32(steps.size()))
        .append("error", new BsonString(error));
    lock.raw.updateOne(and(lock.lockKey(), eq(LockDocument.OWNER, token)), Updates.combine(
        Updates.set(LockDocument.STUCK, stuck), Updates.set(LockDocument.OWNER, null),
        Updates.inc(LockDocument.VERSION, 1L)));
    facade.log.error("Tree '{}' is stuck: {}; repair() completes it once the cause is removed",
        lock.tree, reason);
    throw lock.stuck(stuck);
  }
}
