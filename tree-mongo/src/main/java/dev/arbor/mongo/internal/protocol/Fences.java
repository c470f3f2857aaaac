package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.or;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The statements that keep a stopped holder's writes out of the tree: the <i>fence</i> (an upsert
 * of the lock document filtered by the holder's token, which meets a duplicate key once another
 * caller holds the lock), the <i>claim</i> of an optimistic change, the <i>insert fence</i> that
 * leads an insert command, and the server-clock deadline that bounds a statement on a server that
 * goes on after a failed one; and the time limit of a fenced batch.
 */
final class Fences {
  private final LockDocument lock;
  private final OrderedProbe probe;

  Fences(LockDocument lock, OrderedProbe probe) {
    this.lock = lock;
    this.probe = probe;
  }

  /**
   * The collection with a time limit shorter than the lease: the server stops a batch that would
   * run on after the lease it was fenced with has expired (the fence renews it as the batch
   * starts).
   */
  MongoCollection<BsonDocument> timed() {
    return timed(lock.leaseMillis);
  }

  /** {@link #timed()} for a holder whose lease is {@code leaseMillis} ms. */
  MongoCollection<BsonDocument> timed(long leaseMillis) {
    if (!probe.ordered()) {
      // There every update and delete of a batch is bounded by the server's clock instead (it
      // applies only before its fence's lease ends; an insert is fenced by its insert fence): a
      // slow batch changes nothing late, and needs no time limit of its own.
      return lock.raw;
    }
    return lock.raw.withTimeout(limitMillis(leaseMillis), TimeUnit.MILLISECONDS);
  }

  /**
   * A fence: renews the lease (keeping its length, which the taking of the lock set) and applies
   * {@code more}, or fails with a duplicate key.
   */
  WriteModel<BsonDocument> fence(String token, @Nullable Bson more) {
    return fence(token, null, more, Updates.currentDate(LockDocument.RENEWED));
  }

  /**
   * A fence that renews the lease for at least {@code leaseMillis} ms from now. The lease only
   * grows within a hold ({@code $max}): a fence that arrives late (its answer was lost and it was
   * sent again), or the fence of a later execution that began from the hold's first lease, must
   * not shorten a lease that a command still in flight was given its time limit by, else a caller
   * would take the lock over while that command may still run.
   */
  WriteModel<BsonDocument> fence(String token, @Nullable Bson more, long leaseMillis) {
    return fence(token, null, more, Updates.combine(Updates.currentDate(LockDocument.RENEWED),
        Updates.max(LockDocument.LEASE, leaseMillis)));
  }

  /**
   * A fence that applies {@code more} only while the lock document also matches {@code state},
   * else fails with a duplicate key as a fence does once the lock is lost: for a fence whose
   * effect is not idempotent within one hold. A sending of a fence whose answer was lost may
   * reach the server after the one sent again, and after what the holder wrote next; matched by
   * its owner alone, it would apply its effect over that (the undo journal over a graft's
   * committed one, {@code LateUndoJournalTest}; a replay's completion over the next journal,
   * {@code LateJournalCompletionTest}). Whoever meets the duplicate key reads the lock document to
   * tell an earlier sending that landed from a lost lock.
   */
  WriteModel<BsonDocument> fenceWhile(String token, Bson state, Bson more) {
    return fence(token, state, more, Updates.currentDate(LockDocument.RENEWED));
  }

  /**
   * The fence that ends a replay: clears the journal of change {@code op}, written by {@code
   * origin}, and records it completed ({@link Journal#completedFor}), only while that journal is
   * still the pending one ({@link #fenceWhile}; a journal an earlier build left pending names no
   * writer's token).
   */
  WriteModel<BsonDocument> completion(String token, long op, String origin) {
    return fenceWhile(token, and(eq(LockDocument.OP, op),
        in(LockDocument.OP_TOKEN, origin, BsonNull.VALUE)), Journal.completedFor(origin));
  }

  private WriteModel<BsonDocument> fence(String token, @Nullable Bson state, @Nullable Bson more,
      Bson renewal) {
    Bson update = renewal;
    if (more != null) {
      update = Updates.combine(update, more);
    }
    Bson filter = and(lock.lockKey(), eq(LockDocument.OWNER, token));
    return new UpdateOneModel<>(state == null ? filter : and(filter, state), update,
        new UpdateOptions().upsert(true));
  }

  /**
   * A claim: takes the lock if it is still free at version {@code known}, nobody waits and no
   * change in a lane is in flight ({@link Lanes}: one that passed its gate before the version was
   * seen leaves it as it was until it releases), or if this token already took it (a resent
   * claim); else fails with a duplicate key.
   */
  WriteModel<BsonDocument> claim(TreeLock.Quiet known, String token, long v, String what,
      @Nullable Bson more) {
    Bson free = and(eq(LockDocument.EPOCH, known.epoch()),
        eq(LockDocument.VERSION, known.version()), eq(LockDocument.OWNER, null),
        in(LockDocument.WAITING, BsonNull.VALUE, new BsonDocument()),
        in(LockDocument.IN_FLIGHT, BsonNull.VALUE, new BsonDocument()),
        eq(LockDocument.STUCK, null));
    Bson update = lock.take(token, what, Updates.set(LockDocument.VERSION, v));
    if (more != null) {
      update = Updates.combine(update, more);
    }
    return new UpdateOneModel<>(and(lock.lockKey(), or(free, eq(LockDocument.OWNER, token))),
        update, new UpdateOptions().upsert(true));
  }

  /**
   * The statement that closes a batch on a server that goes on after a failed statement: it
   * fails if the batch ran on past the lease that ends at {@code deadline}, or the lock was lost.
   */
  WriteModel<BsonDocument> closing(String token, long deadline) {
    return new UpdateOneModel<>(before(and(lock.lockKey(),
        eq(LockDocument.OWNER, token)), deadline), Updates.currentDate(LockDocument.RENEWED),
        new UpdateOptions().upsert(true));
  }

  /**
   * The id of the {@code b}-th insert fence of the acquisition {@code token} (a hold of the
   * tree's lock, or a claim): an insert command starts with the insert of the next one, so that a
   * caller who takes the lock over can stop the rest by taking the next number first ({@link
   * #revokeInserts}). Named by the token, which the lock document names while the acquisition
   * holds it, not by the version: the version rises while the lock is held, at each lane's
   * release (RaisedVersionTakeoverTest).
   */
  BsonDocument insertFence(String token, int b) {
    return lock.own("fence").append("t", new BsonString(token))
        .append("b", new BsonInt32(b));
  }

  /** The statement that inserts insert fence {@code b} of the acquisition {@code token}. */
  WriteModel<BsonDocument> insertFenceStatement(String token, int b) {
    return new InsertOneModel<>(insertFenceDocument(insertFence(token, b), token));
  }

  /**
   * The document of the insert fence {@code id} (a change's or a lane's) taken by {@code owner},
   * which {@link #ownsInsertFence} reads back.
   */
  BsonDocument insertFenceDocument(BsonDocument id, String owner) {
    return lock.tagged(new BsonDocument("_id", id).append(INSERT_FENCE_OWNER,
        new BsonString(owner)));
  }

  /**
   * The field of an insert fence that names who took it: the token of the acquisition (or the
   * owner of the lane) whose command it leads, or of the caller who took it to stop that
   * acquisition's or lane's commands.
   */
  static final String INSERT_FENCE_OWNER = "o";

  /**
   * Makes sure the insert fence that led {@code statement} (an insert command whose answer was
   * lost) is stored, so that the next number may be used: a caller who takes the lock over takes
   * the number after the last fence stored, so a number left free would let a later command pass
   * that revocation ({@code LateInsertCommandTest}).
   *
   * @return whether the fence is {@code owner}'s (else another caller took it: the lock is lost)
   */
  boolean settleInsertFence(WriteModel<BsonDocument> statement, String owner) {
    BsonDocument id = ((InsertOneModel<BsonDocument>) statement).getDocument().getDocument("_id");
    return takeInsertFence(id, owner) || ownsInsertFence(id, owner);
  }

  /**
   * Stores insert fence {@code id} (a change's or a lane's) for {@code owner}.
   *
   * @return false if it was stored already (by its command, or by another caller)
   */
  boolean takeInsertFence(BsonDocument id, String owner) {
    try {
      lock.raw.insertOne(insertFenceDocument(id, owner));
      return true;
    } catch (MongoWriteException e) {
      if (!MongoErrors.duplicateKey(e)) {
        throw e;
      }
      String index = MongoErrors.otherIndex(e.getError().getMessage());
      if (index != null) {
        throw MongoErrors.refusedByIndex(lock.tree, index, "the insert fence " + id.toJson(), e);
      }
      return false;
    }
  }

  /**
   * Takes back the inserts of a command whose insert fence a unique index of the user's refused
   * ({@link MongoErrors#otherIndex}): a server that goes on after a failed statement ran those
   * after the fence, if {@code result} counts any. Only the documents {@code ids} that this
   * change (version {@code version}) inserted are deleted.
   */
  static void takeBackInserts(MongoCollection<BsonDocument> raw,
      com.mongodb.bulk.BulkWriteResult result, List<BsonValue> ids, long version) {
    if (result.getInsertedCount() > 0) {
      raw.deleteMany(and(in("_id", ids), eq(Step.MARK + ".v", version)));
    }
  }

  /** Whether insert fence {@code id} (a change's or a lane's) is stored and {@code owner}'s. */
  boolean ownsInsertFence(BsonDocument id, String owner) {
    BsonDocument d = lock.raw.find(lock.scoped(Filters.eq("_id", id))).first();
    return d != null && d.isString(INSERT_FENCE_OWNER)
        && owner.equals(d.getString(INSERT_FENCE_OWNER).getValue());
  }

  /**
   * Stops the insert commands that the acquisition {@code holder} (the token the lock document
   * named) may still have in flight: takes the next number of its insert fences, so that its
   * next insert command fails before writing.
   * A command that had passed its insert fence before may still be running; on a server with
   * time limits ({@link #timed}), see {@link #awaitStartedInserts}.
   *
   * @return whether the holder had started insert commands (it took an insert fence)
   */
  boolean revokeInserts(String holder, String owner) {
    return takeNextInsertFence(b -> insertFence(holder, b), owner) > 0;
  }

  /**
   * Takes, for {@code owner}, the insert fence after the last one stored among those {@code
   * fence} numbers (a holder's or a lane's, numbered without gaps): its next insert command
   * fails.
   *
   * @return the number of the fence taken
   */
  int takeNextInsertFence(java.util.function.IntFunction<BsonDocument> fence, String owner) {
    for (int attempt = 0; attempt < 100; attempt++) {
      BsonDocument last = lock.raw.find(lock.scoped(and(
              Filters.gte("_id", fence.apply(Integer.MIN_VALUE)),
              Filters.lte("_id", fence.apply(Integer.MAX_VALUE)))))
          .sort(new BsonDocument("_id", new BsonInt32(-1))).limit(1).first();
      int next = last == null ? 0 : last.getDocument("_id").getInt32("b").getValue() + 1;
      if (takeInsertFence(fence.apply(next), owner)) {
        return next;
      }
    }
    throw new dev.arbor.core.TreeException("Tree '" + lock.tree + "': could not stop the insert"
        + " commands of a holder taken over (its fences, " + fence.apply(0).toJson()
        + " and after, kept moving)");
  }

  /**
   * Waits, after {@link #revokeInserts} found that a stopped holder whose lease was {@code
   * leaseMillis} ms had started insert commands, until none of them can still be running. An
   * insert command cannot renew the lease as it starts (it holds inserts only), so unlike a
   * fenced batch it may run on after the lease; it stops at its time limit, at most that of a
   * batch under the holder's lease, counted from its start, which was before the revocation. On a
   * server without time limits (one that goes on after a failed statement: the embedded server,
   * which runs one command of a collection at a time, so the revocation itself waited for the
   * command) there is nothing to wait for.
   */
  void awaitStartedInserts(long leaseMillis) {
    awaitStartedCommands(0, leaseMillis); // started at the latest now
  }

  /**
   * On a server that runs commands side by side (MongoDB), waits until the commands of a holder
   * whose lease ended {@code deadlineFromNow} ms from now (negative: that long ago, by the
   * server's clock) can no longer run: MongoDB reads {@code $$NOW} once, as a command starts, so
   * a command bounded by that deadline that started before it may run on until its time limit.
   * {@link #LONG_PAST}: nothing of the holder can still run.
   */
  void awaitStartedCommands(long deadlineFromNow, long leaseMillis) {
    if (probe.ordered()) {
      long wait = deadlineFromNow + limitMillis(leaseMillis);
      if (wait > 0) {
        lock.sleep(wait);
      }
    }
  }

  /** A deadline so long past ({@link #awaitStartedCommands}) that nothing waits for it. */
  static final long LONG_PAST = Long.MIN_VALUE / 2;

  /** The time limit of a batch under a lease of {@code leaseMillis} ms. */
  private static long limitMillis(long leaseMillis) {
    return Math.max(1, leaseMillis - Math.max(1, leaseMillis / 10));
  }

  /** The kind of command the driver sends a statement in: 0 update, 1 insert, 2 delete. */
  static int kind(TreeLock.Statement s) {
    WriteModel<BsonDocument> m = s.model();
    return m instanceof InsertOneModel ? 1
        : m instanceof DeleteManyModel || m instanceof DeleteOneModel ? 2 : 0;
  }

  /** {@code filter}, matching only while the server's clock is before {@code deadline}. */
  static BsonDocument before(Bson filter, long deadline) {
    return new BsonDocument("$and", new BsonArray(List.of(
        filter.toBsonDocument(BsonDocument.class, com.mongodb.MongoClientSettings
            .getDefaultCodecRegistry()),
        new BsonDocument("$expr", new BsonDocument("$lt", new BsonArray(List.of(
            new BsonString("$$NOW"), new BsonDateTime(deadline))))))));
  }

  /** A statement that applies only while the server's clock is before {@code deadline}. */
  static WriteModel<BsonDocument> withDeadline(WriteModel<BsonDocument> m, long deadline) {
    if (m instanceof UpdateOneModel<BsonDocument> u) {
      if (u.getOptions().isUpsert() && isInsert(u.getFilter())) {
        return u; // an insert of a node: runs once whatever the clock (see TreeLock's javadoc)
      }
      return u.getUpdatePipeline() != null
          ? new UpdateOneModel<>(before(u.getFilter(), deadline), u.getUpdatePipeline(),
              u.getOptions())
          : new UpdateOneModel<>(before(u.getFilter(), deadline), u.getUpdate(), u.getOptions());
    }
    if (m instanceof UpdateManyModel<BsonDocument> u) {
      return u.getUpdatePipeline() != null
          ? new UpdateManyModel<>(before(u.getFilter(), deadline), u.getUpdatePipeline(),
              u.getOptions())
          : new UpdateManyModel<>(before(u.getFilter(), deadline), u.getUpdate(),
              u.getOptions());
    }
    if (m instanceof DeleteManyModel<BsonDocument> d) {
      return new DeleteManyModel<>(before(d.getFilter(), deadline), d.getOptions());
    }
    if (m instanceof DeleteOneModel<BsonDocument> d) {
      return new DeleteOneModel<>(before(d.getFilter(), deadline), d.getOptions());
    }
    return m;
  }

  /** Whether an upsert's filter is that of an insert step: {@code _id} of a node alone. */
  private static boolean isInsert(Bson filter) {
    BsonDocument f = filter.toBsonDocument(BsonDocument.class,
        com.mongodb.MongoClientSettings.getDefaultCodecRegistry());
    if (!f.containsKey("_id") || f.size() > 2) {
      return false;
    }
    BsonValue id = f.get("_id");
    boolean node = !id.isDocument()
        || id.asDocument().containsKey(Scope.NODE) && !id.asDocument().containsKey("arbor");
    // a scoped tree's insert also carries the scope equality
    return node && (f.size() == 1 || f.keySet().stream().allMatch(k -> !k.startsWith("$")));
  }
}
