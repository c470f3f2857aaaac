package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.LockLostException;
import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * Sends a lane's plan ({@link Lanes}): the journal into the head's mark (the commit point; none
 * for a plan of one single-document step), the steps in commands of one kind each — updates and
 * deletes bounded by the lane's deadline by the server's clock, inserts led by an insert fence
 * of the lane — then the release, itself bounded: a release that cleared every mark in time
 * proves that every statement before it ran in time. Batches go through the lock's {@link
 * TreeLock.Sender}, so that tests stall and crash lanes as they do the tree's lock.
 */
final class LaneProgram {
  /**
   * The largest journal kept in a head's mark: a node document carries it beside its own fields,
   * under MongoDB's 16 MB; larger plans take the tree's lock, whose journal has room.
   */
  static final int MAX_JOURNAL_BYTES = 256 * 1024;

  private final Lanes lanes;

  LaneProgram(Lanes lanes) {
    this.lanes = lanes;
  }

  /** The plan's journal does not fit in the head's mark: the change takes the tree's lock. */
  static final class TooLarge extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TooLarge() {
      super(null, null, false, false);
    }
  }

  /** Thrown when the lane was lost after its commit point: another caller completes it. */
  static final class Completed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Completed() {
      super(null, null, false, false);
    }
  }

  /**
   * Runs the plan of a lane that holds its marks and passed the gate, and releases it.
   *
   * @return the documents deleted, -1 if another caller completed the change
   */
  long run(Lanes.Lane lane, List<Step> steps, String what) {
    boolean journaled = !PlanRunner.atomic(steps);
    if (journaled) {
      BsonArray journal = new BsonArray();
      for (Step s : steps) {
        journal.add(s.encode());
      }
      if (Encoded.size(new BsonDocument("j", journal)) > Math.min(MAX_JOURNAL_BYTES,
          lanes.tree.inlineJournalBytes)) {
        throw new TooLarge();
      }
      commit(lane, journal, what);
    }
    try {
      return sendAndRelease(lane, steps, journaled, what);
    } catch (Completed c) {
      return -1;
    } catch (MongoException e) {
      if (lane.committed || MongoErrors.transientError(e)) {
        throw e;
      }
      throw new TreeException("Tree '" + lanes.lock.tree + "': the server refused '" + what
          + "': " + e.getMessage() + "; nothing was written", e);
    }
  }

  /**
   * Sends the steps and the release. A lane whose batch ran past its lease but that nobody took
   * over (a lone holder slower than its lease) renews and sends again: every step is guarded or
   * idempotent, so a step that ran is not run twice.
   */
  private long sendAndRelease(Lanes.Lane lane, List<Step> steps, boolean journaled,
      String what) {
    // A committed plan ending with updates or deletes sends its release in their last command:
    // if that command runs late, the journal stays and whoever takes the lane over completes
    // the change, which is committed either way.
    boolean releaseInLast = journaled && !(steps.get(steps.size() - 1) instanceof Step.Insert);
    long half = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(lanes.lock.leaseMillis) / 2;
    for (int round = 0; ; round++) {
      long deleted = send(lane, steps, journaled, lane.token, releaseInLast);
      if (releaseInLast) {
        if (lanes.lock.timing.nanoTime() - lane.renewedAt <= half || !holds(lane)) {
          lane.stop();
          return deleted; // released in time, or completed by whoever took the lane over
        }
      } else if (release(lane)) {
        lane.stop();
        return deleted;
      }
      // Past its lease: taken over, or nobody came and it sends again.
      boolean applied = !journaled && appliedAlone(steps.get(0), lane.token);
      if (round > 20 || !lanes.renew(lane)) {
        lane.stop();
        if (journaled) {
          throw new Completed();
        }
        if (!applied) {
          throw lost(what);
        }
        return deleted;
      }
      if (applied) {
        for (int r = 0; r < 20 && !release(lane) && lanes.renew(lane); r++) {
          // its release again, under its renewed lease
        }
        lane.stop();
        return deleted;
      }
    }
  }

  /** Completes a journal left by a lane that stopped, as the caller who took it over. */
  void replay(Lanes.Lane heir, List<Step> steps) {
    send(heir, steps, true, heir.token, false);
  }

  private void commit(Lanes.Lane lane, BsonArray journal, String what) {
    for (int attempt = 0; attempt < 2; attempt++) {
      lanes.renewIfDue(lane);
      long matched;
      try {
        matched = lanes.raw.updateOne(Fences.before(lane.headFilter(), lane.deadline()),
            Updates.combine(Updates.set(Lanes.J, journal), Updates.set(Lanes.V, lane.version)))
            .getMatchedCount();
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e)) {
          throw e;
        }
        matched = committedAnyway(lane) ? 1 : 0;
      }
      if (matched > 0) {
        lane.committed = true;
        return;
      }
      if (!lanes.renew(lane)) {
        break;
      }
    }
    throw lost(what);
  }

  /** Whether the journal landed though its answer was lost. */
  private boolean committedAnyway(Lanes.Lane lane) {
    BsonDocument d = lanes.raw.find(lane.headFilter()).projection(Projections.include(
        Lanes.FIELD)).first();
    return d != null && d.getDocument(Lanes.FIELD).isArray("j");
  }

  private LockLostException lost(String what) {
    return new LockLostException("Lost the marks of a change in tree '" + lanes.lock.tree
        + "' while doing: " + what + " (its lease of " + lanes.lock.leaseMillis + " ms expired"
        + " and another caller took it over); nothing of this change was written");
  }

  /**
   * Sends the steps in commands of one kind each.
   *
   * @return the documents deleted
   */
  private long send(Lanes.Lane lane, List<Step> steps, boolean journaled, String origin,
      boolean releaseInLast) {
    long deleted = 0;
    int k = 0;
    while (k < steps.size()) {
      boolean inserts = steps.get(k) instanceof Step.Insert;
      int end = k;
      while (end < steps.size() && (steps.get(end) instanceof Step.Insert) == inserts) {
        end++;
      }
      for (int attempt = 0; ; attempt++) {
        if (journaled && !fresh(lane)) {
          throw new Completed();
        }
        try {
          deleted += inserts ? insert(lane, steps, k, end, journaled, origin)
              : write(lane, steps, k, end, journaled, origin,
                  releaseInLast && end == steps.size());
          break;
        } catch (MongoException e) {
          if (!MongoErrors.transientError(e) || attempt > 20) {
            throw e;
          }
          if (releaseInLast && end == steps.size() && !holds(lane)) {
            break; // its release landed, or whoever took the lane over completes it
          }
          if (!journaled) {
            if (!appliedAlone(steps.get(0), origin)) {
              lanes.release(lane);
              throw new ChangeInterruptedException("A command of a change in tree '"
                  + lanes.lock.tree + "' was lost (" + e.getMessage() + "); nothing of it was"
                  + " written", ChangeInterruptedException.Outcome.NOT_APPLIED, e);
            }
            break;
          }
          lanes.lock.sleep(Math.min(100, Math.max(1, lanes.lock.leaseMillis / 10)));
        }
      }
      k = end;
    }
    return deleted;
  }

  /** Whether the lane's head still carries its mark (else it was released or taken over). */
  private boolean holds(Lanes.Lane lane) {
    for (int attempt = 0; ; attempt++) {
      try {
        return lanes.raw.find(lane.headFilter()).first() != null;
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e) || attempt > 20) {
          throw e;
        }
        lanes.lock.sleep(Math.min(100, Math.max(1, lanes.lock.leaseMillis / 10)));
      }
    }
  }

  /** Renews the lane's lease when due; false if the lane was taken over. */
  private boolean fresh(Lanes.Lane lane) {
    try {
      return lanes.renewIfDue(lane);
    } catch (MongoException e) {
      return true; // the bounded statements tell
    }
  }

  private long write(Lanes.Lane lane, List<Step> steps, int from, int to, boolean journaled,
      String origin, boolean release) {
    List<TreeLock.Statement> batch = new ArrayList<>();
    for (int k = from; k < to; k++) {
      batch.add(new TreeLock.Statement(Fences.withDeadline(
          steps.get(k).model(lane.version, k + 1, journaled ? null : origin), lane.deadline()),
          k + 1));
    }
    if (release) {
      batch.addAll(releaseStatements(lane));
    }
    BulkWriteResult r = lanes.tree.sender.send(lanes.raw, new TreeLock.Batch(batch));
    return r.getDeletedCount();
  }

  private long insert(Lanes.Lane lane, List<Step> steps, int from, int to, boolean journaled,
      String origin) {
    List<TreeLock.Statement> batch = new ArrayList<>();
    BsonDocument fence = lanes.insertFence(origin, lane.insertFences++);
    batch.add(new TreeLock.Statement(new InsertOneModel<>(lanes.lock.tagged(
        new BsonDocument("_id", fence))), 0));
    for (int k = from; k < to; k++) {
      batch.add(new TreeLock.Statement(((Step.Insert) steps.get(k)).insertModel(lane.version,
          k + 1, journaled ? null : origin), k + 1));
    }
    try {
      lanes.tree.sender.send(lanes.raw, new TreeLock.Batch(batch));
    } catch (MongoBulkWriteException e) {
      for (BulkWriteError error : e.getWriteErrors()) {
        if (!MongoErrors.duplicateKey(error.getCode())) {
          throw e;
        }
        if (error.getIndex() == 0) {
          throw journaled ? new Completed() : lost("an insert");
        }
        if (!journaled) {
          Step.Insert i = (Step.Insert) steps.get(from + error.getIndex() - 1);
          BsonValue id = i.id();
          throw new DuplicateNodeException(id.isDocument() && id.asDocument().containsKey(
              Scope.NODE) ? id.asDocument().getString(Scope.NODE).getValue()
              : id.isString() ? id.asString().getValue() : String.valueOf(id));
        }
        // a journaled insert sent again: it landed the first time
      }
    }
    lanes.sweep(List.of(fence));
    return 0;
  }

  /**
   * Whether the single step of a change without journal was applied though the answer to its
   * command was lost: told by its document, which the lane's marks keep from anyone else.
   */
  private boolean appliedAlone(Step step, String origin) {
    if (step instanceof Step.Insert i) {
      BsonDocument d = lanes.raw.find(eq("_id", i.id())).projection(Projections.include(
          Step.MARK)).first();
      return d != null && origin.equals(markToken(d));
    }
    if (step instanceof Step.Update u) {
      BsonDocument d = lanes.raw.find(u.filter()).projection(Projections.include(Step.MARK))
          .first();
      return d != null && origin.equals(markToken(d));
    }
    Step.Delete d = (Step.Delete) step;
    return lanes.raw.find(d.filter()).first() == null;
  }

  private static @Nullable String markToken(BsonDocument d) {
    BsonValue m = d.get(Step.MARK);
    return m != null && m.isDocument() ? Lanes.str(m.asDocument(), "t") : null;
  }

  /**
   * The release: the head's mark cleared first (if it is cleared in time, every statement before
   * it ran in time), then the other marks, both bounded by the lease; then the tree's version
   * raised.
   */
  private List<TreeLock.Statement> releaseStatements(Lanes.Lane lane) {
    List<TreeLock.Statement> batch = new ArrayList<>();
    batch.add(new TreeLock.Statement(new UpdateOneModel<>(Fences.before(lane.headFilter(),
        lane.deadline()), Updates.unset(Lanes.FIELD)), 0));
    List<String> others = lane.marked.subList(1, lane.marked.size());
    if (!others.isEmpty()) {
      batch.add(new TreeLock.Statement(new UpdateManyModel<>(Fences.before(lanes.key(and(
          in("_id", others), eq(Lanes.T, lane.token))), lane.deadline()),
          Updates.unset(Lanes.FIELD)), 0));
    }
    batch.add(new TreeLock.Statement(new UpdateOneModel<>(lanes.lock.lockKey(),
        Updates.inc(LockDocument.VERSION, 1L)), 0));
    return batch;
  }

  /**
   * Clears the lane's marks, bounded by its lease, and raises the tree's version.
   *
   * @return whether every mark was cleared in time (else the lane was lost: whoever takes it
   *     over clears them)
   */
  boolean release(Lanes.Lane lane) {
    for (int attempt = 0; ; attempt++) {
      if (!fresh(lane)) {
        return false;
      }
      List<TreeLock.Statement> batch = releaseStatements(lane);
      try {
        BulkWriteResult r = lanes.tree.sender.send(lanes.raw, new TreeLock.Batch(batch));
        // the version's raise always matches: the head's clear is the other match needed (if
        // it missed its deadline, so did every statement after it)
        return r.getMatchedCount() >= 2;
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e) || attempt > 20) {
          throw e;
        }
        lanes.lock.sleep(Math.min(100, Math.max(1, lanes.lock.leaseMillis / 10)));
        try {
          if (!lanes.renew(lane)) {
            // cleared by us (then the head is gone) or taken over
            return lanes.raw.find(lanes.key(eq(Lanes.T, lane.token))).first() == null;
          }
        } catch (MongoException again) {
          // try again
        }
      }
    }
  }
}
