package dev.arbor.mongo.internal.protocol;

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
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.bson.Scope;
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

  /** A step the server refused: {@code step} (0-based) and the steps after it did not run. */
  static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final MongoException cause;
    final int step;
    /** The id of the node whose insert met another node of that id, or null. */
    final @Nullable BsonValue duplicate;

    Refused(MongoException cause, int step) {
      this(cause, step, null);
    }

    Refused(MongoException cause, int step, @Nullable BsonValue duplicate) {
      super(cause.getMessage(), cause, false, false);
      this.cause = cause;
      this.step = step;
      this.duplicate = duplicate;
    }
  }

  /** Thrown when the lane was lost after its commit point: another caller completes it. */
  static final class Completed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Completed() {
      super(null, null, false, false);
    }
  }

  /** A batch whose closing statement ran past the lane's deadline: some of it may not have run. */
  static final class Late extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /**
     * The documents the batch's statements before the closing one matched, as the server
     * answered: 0 tells that none of them ran in time (a statement after the deadline matches
     * nothing, and the server ran them in order), so that a step whose only sending this was
     * never applies; -1 when not told.
     */
    final long matched;

    Late(long matched) {
      super(null, null, false, false);
      this.matched = matched;
    }
  }

  /**
   * Runs the plan of a lane that holds its marks and passed the gate, and releases it.
   *
   * @return the documents deleted, -1 if another caller completed the change
   */
  long run(Lanes.Lane lane, List<Step> steps, String what) {
    // A delete is journaled even alone: once its lane is taken over, a node found gone may have
    // been deleted by the lane that took its marks next, so only a journal tells (an update or
    // an insert carries the lane's token in its document).
    boolean journaled = !PlanRunner.atomic(steps) || steps.get(0) instanceof Step.Delete;
    try {
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
      return sendAndRelease(lane, steps, journaled, what);
    } catch (Completed c) {
      return -1;
    } catch (Refused r) {
      Step refused = steps.get(r.step);
      boolean single = refused instanceof Step.Insert
          || (refused instanceof Step.Update u && !u.multi());
      if (r.step > 0 || !single) {
        // steps before it ran, or documents of its first: the journal stays, and the tree is
        // stuck until repair() completes it
        if (!journaled) {
          throw r.cause; // cannot be: a plan without journal is one single-document step
        }
        throw lanes.stuck(lane, what, r, steps.size());
      }
      if (lane.committed) {
        // Nothing ran: the change is withdrawn before anyone could see it.
        lanes.raw.updateOne(lane.headFilter(), Updates.combine(Updates.unset(Lanes.J),
            Updates.unset(Lanes.V)), new com.mongodb.client.model.UpdateOptions()
                .collation(Reads.SIMPLE));
        lane.committed = false;
      }
      if (r.duplicate != null) {
        throw new DuplicateNodeException(nodeId(r.duplicate));
      }
      throw new TreeException("Tree '" + lanes.lock.tree + "': the server refused '" + what
          + "': " + r.cause.getMessage() + "; nothing was written", r.cause);
    } catch (MongoException e) {
      if (lane.committed || MongoErrors.transientError(e)) {
        throw e;
      }
      throw new TreeException("Tree '" + lanes.lock.tree + "': the server refused '" + what
          + "': " + e.getMessage() + "; nothing was written", e);
    }
  }

  /** Completes a journal left by a lane that stopped, as the caller who took it over. */
  void replay(Lanes.Lane heir, List<Step> steps) {
    sendSteps(heir, steps, true, heir.token, false);
  }

  /**
   * The statement that closes a batch: it meets a duplicate key (the lock document exists) when
   * the server runs it past the lane's deadline, which tells that statements before it may not
   * have run. (Bounded statements after a deadline match nothing; the takeover of a lane only
   * happens after its deadline.)
   */
  private TreeLock.Statement closing(long deadline) {
    return new TreeLock.Statement(new UpdateOneModel<>(Fences.before(lanes.lock.lockKey(),
        deadline), Updates.inc(LockDocument.VERSION, 0L),
        new com.mongodb.client.model.UpdateOptions().upsert(true)), 0);
  }

  /**
   * Sends a batch closed by {@link #closing}. Every statement of the batch is bounded by the same
   * {@code deadline}, read once from the lane before the batch was built: the lane's lease is
   * renewed in the background meanwhile, and a closing bounded by a later deadline than a step
   * before it could run in time after the step ran late, and tell a step that never ran applied.
   *
   * @throws Late if its closing statement ran past the deadline
   */
  private BulkWriteResult sendClosed(Lanes.Lane lane, List<TreeLock.Statement> statements,
      long deadline) {
    List<TreeLock.Statement> batch = new ArrayList<>(statements);
    batch.add(closing(deadline));
    try {
      // On MongoDB, with a time limit within the lane's lease: MongoDB reads $$NOW once, as a
      // command starts, so the deadline bounds when the command starts, not when its statements
      // run; the limit bounds the rest, and whoever takes the lane over waits it out from the
      // lane's deadline (LaneTakeover.resolve; FrozenNowLaneTest).
      return lanes.tree.sender.send(lanes.tree.fences.timed(lane.leaseMillis),
          new TreeLock.Batch(batch));
    } catch (MongoBulkWriteException e) {
      boolean late = false;
      for (BulkWriteError error : e.getWriteErrors()) {
        if (error.getIndex() == batch.size() - 1 && MongoErrors.duplicateKey(error.getCode())) {
          late = true;
        } else {
          throw e;
        }
      }
      if (late) {
        throw new Late(e.getWriteResult().wasAcknowledged()
            ? e.getWriteResult().getMatchedCount() : -1);
      }
      throw e;
    }
  }

  private void commit(Lanes.Lane lane, BsonArray journal, String what) {
    // Whether a sending of the journal may have landed unseen (its answer was lost): it may
    // still land within the lane's lease, and whoever takes the lane over then completes it.
    boolean doubt = false;
    for (int attempt = 0; attempt < 20; attempt++) {
      if (!lanes.renewIfDue(lane)) {
        break;
      }
      long deadline = lane.deadline(); // one for the whole batch: see sendClosed
      List<TreeLock.Statement> batch = List.of(new TreeLock.Statement(new UpdateOneModel<>(
          Fences.before(lane.headFilter(), deadline), Updates.combine(
              Updates.set(Lanes.J, journal), Updates.set(Lanes.V, lane.version)),
          new com.mongodb.client.model.UpdateOptions().collation(Reads.SIMPLE)), 0));
      long matched;
      lane.commitSent = true;
      try {
        matched = sendClosed(lane, batch, deadline).getMatchedCount();
      } catch (Late late) {
        // The journal's statement ran in time if it matched (its closing did not), or an
        // earlier sending whose answer was lost stored it: the change is committed either way,
        // and whoever took the lane over completes it.
        if (late.matched >= 1 || committedAnyway(lane)) {
          lane.committed = true;
          return;
        }
        if (!lanes.renewLonger(lane)) {
          break;
        }
        continue;
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e)) {
          throw e;
        }
        if (committedAnyway(lane)) {
          lane.committed = true;
          return;
        }
        doubt = true;
        outgrown(lane, e);
        lanes.lock.pause();
        continue;
      }
      if (matched >= 2) { // the journal, and the closing statement
        lane.committed = true;
        return;
      }
      break; // in time but not ours: taken over
    }
    if (!doubt) {
      throw lost(what);
    }
    if (!committedAnyway(lane)) {
      // Its lane was taken over (or the tries ran out) after a sending whose answer was lost:
      // that sending may have stored the journal in time, after the head was last read, and
      // whoever took the lane over completed the change; the head, rewritten since, no longer
      // tells (LateLaneAnswerTest).
      throw new ChangeInterruptedException("Could not tell whether '" + what + "' on tree '"
          + lanes.lock.tree + "' was applied: the answer to its journal's command was lost and"
          + " its lane was taken over; read the tree",
          ChangeInterruptedException.Outcome.UNKNOWN, null);
    }
    lane.committed = true;
  }

  /**
   * Whether the journal landed though its answer was lost or came late: the head still carries
   * this lane's mark (whoever owns it now) with the journal of this lane's version.
   */
  private boolean committedAnyway(Lanes.Lane lane) {
    BsonDocument d = lanes.raw.find(lanes.key(and(eq("_id", lane.head), eq(Lanes.T,
        lane.token)))).projection(Projections.include(Lanes.FIELD)).collation(Reads.SIMPLE)
        .first();
    if (d == null || !d.getDocument(Lanes.FIELD).isArray("j")) {
      return false;
    }
    BsonValue v = d.getDocument(Lanes.FIELD).get("v");
    return v != null && v.isNumber() && v.asNumber().longValue() == lane.version;
  }

  private LockLostException lost(String what) {
    return new LockLostException("Lost the marks of a change in tree '" + lanes.lock.tree
        + "' while doing: " + what + " (its lease of " + lanes.lock.leaseMillis + " ms expired"
        + " and another caller took it over); nothing of this change was written");
  }

  /**
   * Sends the steps, then the release. A batch that ran past the lane's lease is sent again
   * under a renewed lease if nobody took the lane over (a lone holder slower than its lease):
   * every step is guarded or idempotent, so a step that ran is not run twice.
   */
  private long sendAndRelease(Lanes.Lane lane, List<Step> steps, boolean journaled,
      String what) {
    // A committed plan whose last command is of updates or deletes carries its release: if that
    // command runs late, it is sent again under a renewed lease, or whoever took the lane over
    // completes the change, which is committed either way.
    // So does a change of one update without journal: if its command runs late, the step ran
    // in time or not at all (appliedAlone tells), and the release is sent again alone. (A batch
    // of deletes ends with its closing update: the release shares that command.)
    int last = steps.size() % Math.max(1, lanes.tree.batchStatements - 1);
    boolean releaseInLast = !(steps.get(steps.size() - 1) instanceof Step.Insert)
        && (last == 0 ? lanes.tree.batchStatements - 1 : last) + 4 <= lanes.tree.batchStatements;
    long deleted;
    try {
      Sent sent = sendSteps(lane, steps, journaled, lane.token, releaseInLast);
      deleted = sent.deleted;
      if (sent.released) {
        lane.stop();
        return deleted;
      }
    } catch (Late late) {
      // an atomic step whose lane was taken over: applied in time, or not at all (a sending
      // whose answer matched nothing is the step not applied: see sendSteps)
      if (late.matched != 0) {
        // a sending in doubt that started within the lease (which has ended by now: the lane
        // was taken over) may still run until its time limit
        lanes.tree.fences.awaitStartedCommands(0, lane.leaseMillis);
      }
      if (late.matched == 0 || !appliedAlone(lane, steps.get(0), lane.token)) {
        lane.stop();
        throw lost(what);
      }
      lane.stop();
      return 0;
    }
    for (int attempt = 0; ; attempt++) {
      try {
        long deadline = lane.deadline();
        sendClosed(lane, releaseStatements(lane, deadline), deadline);
        lane.stop();
        return deleted;
      } catch (Late late) {
        if (attempt > 20 || !lanes.renewLonger(lane)) {
          lane.stop();
          if (journaled) {
            throw new Completed(); // whoever took it over completes it
          }
          return deleted; // its step ran in time; whoever took it over cleared its marks
        }
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e) || attempt > 20) {
          throw e;
        }
        outgrown(lane, e);
        lanes.lock.pause();
        if (!holds(lane)) {
          lane.stop();
          return deleted; // its release landed, or whoever took it over completes it
        }
      }
    }
  }

  /**
   * Sends the steps in batches of one kind each, at most the lock's batch size.
   *
   * @return the documents deleted, and whether the release went with the last batch, in time
   * @throws Late for a change of one step that ran past its lease and was taken over
   */
  private Sent sendSteps(Lanes.Lane lane, List<Step> steps, boolean journaled, String origin,
      boolean releaseInLast) {
    long deleted = 0;
    boolean released = false;
    int per = Math.max(1, lanes.tree.batchStatements - 1);
    int k = 0;
    while (k < steps.size()) {
      boolean inserts = steps.get(k) instanceof Step.Insert;
      int end = k;
      while (end < steps.size() && end - k < per
          && (steps.get(end) instanceof Step.Insert) == inserts) {
        end++;
      }
      // Whether an earlier sending of this command may still land or may have landed unseen
      // (its answer was lost): then only the document can tell whether its step applied.
      boolean doubt = false;
      for (int attempt = 0; ; attempt++) {
        if (journaled && !fresh(lane)) {
          throw new Completed();
        }
        lane.sent = true;
        try {
          boolean withRelease = releaseInLast && end == steps.size();
          deleted += inserts ? insert(lane, steps, k, end, journaled, origin)
              : write(lane, steps, k, end, journaled, origin, withRelease);
          released = withRelease;
          break;
        } catch (InsertLanded landed) {
          break; // its one insert landed by an earlier sending, before the lane was taken over
        } catch (Late late) {
          // ran past its lease: again under a renewed one, unless it was taken over. A step
          // without journal whose every sending was answered matching nothing never ran, and
          // never will: its document, which the lane that took the marks over may have
          // rewritten since, need not be read.
          boolean notApplied = !journaled && !doubt && late.matched == 0;
          if (!journaled && !notApplied && appliedAlone(lane, steps.get(0), origin)) {
            break;
          }
          if (attempt > 20 || !lanes.renewLonger(lane)) {
            if (journaled) {
              throw new Completed();
            }
            throw new Late(notApplied ? 0 : -1);
          }
        } catch (MongoException e) {
          if (!MongoErrors.transientError(e) || attempt > 20) {
            throw e;
          }
          outgrown(lane, e);
          if (!journaled && appliedAlone(lane, steps.get(0), origin)) {
            break; // its one step landed; the answer was lost
          }
          doubt = true;
          // Sent again, its step guarded (it applies once): a command whose answer was lost may
          // still reach the server within the lane's lease, so a document that does not show
          // the step yet does not tell that it will not land.
          lanes.lock.pause();
        }
      }
      k = end;
    }
    return new Sent(deleted, released);
  }

  /** What {@link #sendSteps} did: the documents deleted; whether the release landed with them. */
  private record Sent(long deleted, boolean released) {}

  /**
   * After a command of the lane ran out of its time limit (a busy machine, a slow server): renews
   * the lane's lease for longer, so that the command sent again has a longer limit. A lane taken
   * over meanwhile is left as it is: the command sent again tells.
   */
  private void outgrown(Lanes.Lane lane, MongoException e) {
    if (!MongoErrors.timedOut(e)) {
      return;
    }
    try {
      lanes.renewLonger(lane);
    } catch (MongoException again) {
      // not known: the command sent again tells
    }
  }

  /** Whether the lane's head still carries its mark (else it was released or taken over). */
  private boolean holds(Lanes.Lane lane) {
    for (int attempt = 0; ; attempt++) {
      try {
        return lanes.raw.find(lane.headFilter()).collation(Reads.SIMPLE).first()
            != null;
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e) || attempt > 20) {
          throw e;
        }
        lanes.lock.pause();
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
    long deadline = lane.deadline(); // one for the whole batch: see sendClosed
    List<TreeLock.Statement> batch = new ArrayList<>();
    for (int k = from; k < to; k++) {
      batch.add(new TreeLock.Statement(Fences.withDeadline(
          steps.get(k).model(lane.version, k + 1, journaled ? null : origin), deadline),
          k + 1));
    }
    if (release) {
      batch.addAll(releaseStatements(lane, deadline));
    }
    try {
      return sendClosed(lane, batch, deadline).getDeletedCount();
    } catch (MongoBulkWriteException e) {
      // a step the server refuses (a unique index, a validator, a document too large)
      int index = e.getWriteErrors().isEmpty() ? -1 : e.getWriteErrors().get(0).getIndex();
      if (index >= 0 && index < to - from) {
        throw new Refused(e, from + index);
      }
      throw e;
    }
  }

  /**
   * Sends inserts {@code from} to {@code to}, led by the lane's next insert fence. The fences of a
   * lane are numbered without gaps: a command whose answer was lost is sent again behind the same
   * number, and the number moves on only once a fence of it is known to be this owner's (its
   * document names {@link Lanes.Lane#owner}). So a caller who takes the lane over, taking the
   * number after the last fence stored, stops every command of this owner that had not passed
   * its fence, in flight or sent again later; before, a command sent again behind the next
   * number passed a revocation that had taken the number of a command lost on its way
   * ({@code LateInsertCommandTest}).
   */
  private long insert(Lanes.Lane lane, List<Step> steps, int from, int to, boolean journaled,
      String origin) {
    while (true) {
      int b = lane.insertFences;
      boolean resent = lane.fenceSent == b;
      lane.fenceSent = b;
      BsonDocument fence = lanes.insertFence(origin, b);
      List<TreeLock.Statement> batch = new ArrayList<>();
      batch.add(new TreeLock.Statement(new InsertOneModel<>(
          lanes.tree.fences.insertFenceDocument(fence, lane.owner)), 0));
      for (int k = from; k < to; k++) {
        batch.add(new TreeLock.Statement(((Step.Insert) steps.get(k)).insertModel(lane.version,
            k + 1, journaled ? null : origin), k + 1));
      }
      try {
        // On a server that runs commands side by side (MongoDB), with a time limit within the
        // lane's lease: whoever takes the lane over waits it out before going on (Lanes.finish).
        lanes.tree.sender.send(lanes.tree.fences.timed(lane.leaseMillis),
            new TreeLock.Batch(batch));
        lane.insertFences = b + 1;
      } catch (MongoBulkWriteException e) {
        boolean fenced = e.getWriteErrors().stream().anyMatch(error -> error.getIndex() == 0);
        if (!fenced) {
          lane.insertFences = b + 1; // it passed its fence
        }
        BulkWriteError first = e.getWriteErrors().isEmpty() ? null : e.getWriteErrors().get(0);
        if (fenced && first != null && first.getIndex() == 0
            && MongoErrors.otherIndex(first.getMessage()) != null) {
          // The fence, one of Arbor's own documents, was refused by a unique index of the
          // user's (created after the store last read the indexes, UniqueIndexes). On a server
          // that goes on after a failed statement the inserts after it may have run: they are
          // taken back, and the step is refused as one the server refused (the change withdrawn
          // and told not written if nothing of it ran before, else the tree stuck for repair(),
          // whose replay inserts them again).
          List<BsonValue> ids = new ArrayList<>();
          for (int k = from; k < to; k++) {
            ids.add(((Step.Insert) steps.get(k)).id());
          }
          Fences.takeBackInserts(lanes.raw, e.getWriteResult(), ids, lane.version);
          throw new Refused(e, from);
        }
        for (BulkWriteError error : e.getWriteErrors()) {
          if (!MongoErrors.duplicateKey(error.getCode())) {
            throw error.getIndex() == 0 ? e : new Refused(e, from + error.getIndex() - 1);
          }
          if (error.getIndex() == 0) {
            if (lanes.tree.fences.ownsInsertFence(fence, lane.owner)) {
              // an earlier sending of this command passed this fence: on behind the next one
              lane.insertFences = b + 1;
              lane.insertsPassed = true;
              break;
            }
            if (journaled) {
              throw new Completed();
            }
            throw revoked(lane, (Step.Insert) steps.get(from), origin);
          }
          if (!MongoErrors.duplicateId(error)) {
            throw new Refused(e, from + error.getIndex() - 1); // another unique index refused it
          }
          if (!journaled) {
            Step.Insert i = (Step.Insert) steps.get(from + error.getIndex() - 1);
            if (appliedAlone(lane, i, origin)) {
              continue; // inserted by an earlier sending of this command, whose answer was lost
            }
            throw new DuplicateNodeException(nodeId(i.id()));
          }
          // A journaled insert meets its id: sent before, it landed then (the node bears this
          // change's version); else another change inserted a node of that id since this one
          // was planned (two lanes inserting one new id under two parents: their marks do not
          // meet), and this insert is refused as a duplicate: the journal, whose first step it
          // is, is withdrawn; in a replay, the tree is stuck with the server's message.
          Step.Insert dup = (Step.Insert) steps.get(from + error.getIndex() - 1);
          if (lanes.raw.find(com.mongodb.client.model.Filters.and(
              com.mongodb.client.model.Filters.eq("_id", dup.id()),
              com.mongodb.client.model.Filters.eq(Step.MARK + ".v", lane.version)))
              .projection(new BsonDocument("_id", new org.bson.BsonInt32(1))).first() == null) {
            throw new Refused(e, from + error.getIndex() - 1, dup.id());
          }
        }
        if (fenced && lane.insertFences == b + 1) {
          continue; // sent again behind the next fence
        }
      }
      // (An answer lost, the error goes to the caller, which sends the command again behind the
      // same number: whether it passed its fence is not known.) A fence whose command went once
      // and was answered guards nothing now; one sent again stays, since the first sending may
      // still arrive: the fence stops it (as under the tree's lock, PlanRunner).
      if (!resent) {
        lanes.sweep(List.of(fence));
      }
      return 0;
    }
  }

  /**
   * The insert of a change without journal met its fence taken by another owner: its lane was
   * taken over, and no command of it that had not passed a fence can insert. No sending of it
   * passed this fence number (the fence is another's), so if none passed an earlier one, it was
   * not applied. Else the sending that did may still be running (on a server that runs commands
   * side by side, until its time limit, which is waited out) and its node tells, unless it is
   * gone: then the caller who took the lane over may have deleted it, and it cannot be told.
   */
  private RuntimeException revoked(Lanes.Lane lane, Step.Insert insert, String origin) {
    if (!lane.insertsPassed) {
      return lost("an insert");
    }
    lanes.tree.fences.awaitStartedInserts(lane.leaseMillis);
    if (appliedAlone(lane, insert, origin)) {
      return new InsertLanded();
    }
    return new ChangeInterruptedException("Could not tell whether an insert in tree '"
        + lanes.lock.tree + "' was applied: its command's answer was lost, its lane was taken"
        + " over, and its node '" + nodeId(insert.id()) + "' is not there now; read the tree",
        ChangeInterruptedException.Outcome.UNKNOWN, null);
  }

  /** The node's id as the caller named it, from the {@code _id} of its document. */
  private static String nodeId(BsonValue id) {
    return id.isDocument() && id.asDocument().containsKey(Scope.NODE)
        ? id.asDocument().getString(Scope.NODE).getValue()
        : id.isString() ? id.asString().getValue() : String.valueOf(id);
  }

  /** The insert of a change without journal landed by an earlier sending: the change applied. */
  static final class InsertLanded extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InsertLanded() {
      super(null, null, false, false);
    }
  }

  /**
   * Whether the single step of a change without journal was applied though the answer to its
   * command was lost or came late: told by its document, which the lane's marks keep from anyone
   * else until the lane is taken over.
   *
   * @throws ChangeInterruptedException {@code UNKNOWN} if the lane was taken over and a later
   *     change rewrote or deleted the document since: it cannot tell
   */
  private boolean appliedAlone(Lanes.Lane lane, Step step, String origin) {
    if (step instanceof Step.Insert i) {
      BsonDocument d = lanes.raw.find(eq("_id", i.id())).projection(Projections.include(
          Step.MARK)).collation(Reads.SIMPLE).first();
      return d != null && origin.equals(markToken(d));
    }
    if (step instanceof Step.Update u) {
      BsonDocument d = lanes.raw.find(u.filter()).projection(Projections.include(Step.MARK))
          .collation(Reads.SIMPLE).first();
      if (d != null && origin.equals(markToken(d))) {
        return true;
      }
      if (d == null || Step.markVersion(d) > lane.version) {
        throw new ChangeInterruptedException("Could not tell whether a change in tree '"
            + lanes.lock.tree + "' was applied: its lane was taken over and a later change"
            + " rewrote the document it writes, " + u.filter().toJson() + "; read the tree",
            ChangeInterruptedException.Outcome.UNKNOWN, null);
      }
      return false;
    }
    throw new IllegalStateException("a delete in a lane is journaled: " + step);
  }

  private static @Nullable String markToken(BsonDocument d) {
    BsonValue m = d.get(Step.MARK);
    return m != null && m.isDocument() ? Lanes.str(m.asDocument(), "t") : null;
  }

  /**
   * The release, bounded by the lease: first the tree's version raised and the lane's name
   * taken off the lock document, then the marks cleared (a reader that finds no mark after it
   * read then finds the version moved, see {@link LaneProtocol#read}).
   */
  private List<TreeLock.Statement> releaseStatements(Lanes.Lane lane, long deadline) {
    List<TreeLock.Statement> batch = new ArrayList<>();
    batch.add(new TreeLock.Statement(new UpdateOneModel<>(Fences.before(lanes.lock.lockKey(),
        deadline), Updates.combine(Lanes.bump(lane.token, null),
        Updates.unset(LockDocument.IN_FLIGHT + "." + lane.token))), 0));
    batch.add(new TreeLock.Statement(new UpdateOneModel<>(Fences.before(lane.headFilter(),
        deadline), Updates.unset(Lanes.FIELD), new com.mongodb.client.model.UpdateOptions()
            .collation(Reads.SIMPLE)), 0));
    List<String> others = lane.marked.subList(1, lane.marked.size());
    if (!others.isEmpty()) {
      batch.add(new TreeLock.Statement(new UpdateManyModel<>(Fences.before(lanes.key(and(
          in("_id", others), eq(Lanes.T, lane.token))), deadline),
          Updates.unset(Lanes.FIELD), new com.mongodb.client.model.UpdateOptions()
              .collation(Reads.SIMPLE)), 0));
    }
    return batch;
  }
}
