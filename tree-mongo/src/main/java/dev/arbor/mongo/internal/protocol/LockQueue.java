package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Taking and freeing the lock: the free lock is taken in one command; otherwise a caller joins the
 * queue in the lock document and polls, in arrival order (a waiting reader before the writers that
 * follow the current holder), until the lock is free or its holder's lease has expired by the
 * server's clock; an expired holder is taken over with a compare-and-set, and the journal it left
 * is replayed ({@link Replay}) before the new holder goes on. Readers wait here too, for a quiet
 * tree.
 */
final class LockQueue {
  /** Lock waits longer than this are logged. */
  static final long LONG_WAIT_MILLIS = 1_000;

  /**
   * The longest pause between two polls of a waiting caller. Pauses start at 1 ms and double
   * while the lock stays as it was; they start again at 1 ms each time the lock changes hands,
   * so that a caller next in line notices its turn within a few ms of a short change.
   */
  static final long MAX_PAUSE_MILLIS = 16;

  private final TreeLock facade;
  private final LockDocument lock;
  private final LeaseScheduler renewals;

  LockQueue(TreeLock facade, LockDocument lock, LeaseScheduler renewals) {
    this.facade = facade;
    this.lock = lock;
    this.renewals = renewals;
  }

  /** A new hold of the lock by {@code token}, whose lease this caller now renews. */
  TreeLock.Hold hold(String token, String epoch, long version, String what) {
    return hold(token, epoch, version, what, lock.leaseMillis);
  }

  /** A new hold, taken for a lease of {@code leaseMillis} ms. */
  TreeLock.Hold hold(String token, String epoch, long version, String what, long leaseMillis) {
    return new TreeLock.Hold(token, epoch, version, what,
        new Lease(lock, token, what, facade.keepAlive, renewals), leaseMillis);
  }

  /**
   * Takes the lock, waiting in line behind earlier callers, taking over an expired holder and
   * finishing its journal.
   *
   * @throws TreeException if the lock is not had within the lock wait, or the tree is stuck
   */
  TreeLock.Hold acquire(String what) {
    String token = LockDocument.newToken();
    long start = lock.timing.nanoTime();
    for (boolean queue = false; !queue; ) {
      try {
        BsonDocument after = lock.raw.findOneAndUpdate(
            and(lock.lockKey(), eq(LockDocument.OWNER, null),
                in(LockDocument.WAITING, BsonNull.VALUE, new BsonDocument()),
                eq(LockDocument.STUCK, null)),
            lock.take(token, what, Updates.inc(LockDocument.VERSION, 1L),
                Updates.setOnInsert(LockDocument.EPOCH, UUID.randomUUID().toString())),
            new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
                .projection(Projections.include(TreeLock.STATE)));
        TreeLock.State taken = new TreeLock.State(after);
        return hold(token, taken.epoch, taken.version, what);
      } catch (MongoException e) {
        if (MongoErrors.duplicateKey(e)) {
          queue = true; // taken, or callers wait: join the line
        } else {
          // Its answer lost: the lock document tells whether the acquisition landed.
          Take take = afterUncertain(e, token, what, null, start);
          if (take.hold() != null) {
            return take.hold();
          }
          if (take.landed()) {
            unregister(token);
            token = LockDocument.newToken(); // see the line's loop below
          }
        }
      }
    }
    long seen = -1;
    try {
      for (int attempt = 0; ; attempt++) {
        TreeLock.State s;
        try {
          s = poll(token, false);
        } catch (MongoException e) {
          retryPause(e, start, what);
          continue;
        }
        if (s.version != seen) {
          seen = s.version; // the line moved: poll soon again, it may be this caller's turn
          attempt = 0;
        }
        long now = s.waiting.get(token).at();
        if (s.stuck != null) {
          throw lock.stuck(s.stuck);
        }
        if ((s.owner != null && !s.expired(now)) || s.liveReaders(now, token)
            || s.liveWriterBefore(token, now)) {
          pause(attempt, start, s);
          continue;
        }
        Take take;
        try {
          take = takeOver(s, token, what, now);
        } catch (MongoException e) {
          take = afterUncertain(e, token, what, s, start);
        }
        if (take.hold() != null) {
          waited(start, what);
          return take.hold();
        }
        if (take.landed()) {
          // This token held the lock and was taken over while it completed another's journal:
          // the caller who took it over took this token's next insert fence, so a hold under
          // it would meet that fence at its first insert command and wait for itself. The next
          // turn is taken under a new token (its place in the line went with the takeover).
          unregister(token);
          token = LockDocument.newToken();
        }
      }
    } catch (RuntimeException e) {
      unregister(token);
      throw e;
    }
  }

  /**
   * After a transient error on an acquisition, whose answer was lost: reads the lock document;
   * if it names {@code token}, the acquisition landed and this caller holds the lock (finishing
   * the journal of the holder it took over from {@code from}, if any).
   *
   * @return the hold, or none to try again (landed: under a new token, see {@link Take})
   * @throws ChangeInterruptedException ({@code NOT_APPLIED}) once the lock wait has run out
   */
  private Take afterUncertain(MongoException e, String token, String what,
      TreeLock.@Nullable State from, long start) {
    if (!MongoErrors.transientError(e)) {
      throw e;
    }
    TreeLock.State now;
    try {
      now = lock.read();
    } catch (MongoException again) {
      retryPause(again, start, what);
      return Take.LOST; // it may have landed: the token is spent (see Take)
    }
    if (!token.equals(now.owner)) {
      retryPause(e, start, what);
      return Take.LOST; // it may have landed and been taken over since: the token is spent
    }
    TreeLock.Hold h = hold(token, now.epoch, now.version, what,
        now.lease > 0 ? now.lease : lock.leaseMillis); // a takeover's may have grown
    if (from != null && from.op >= 0 && now.op == from.op) {
      try {
        if (!facade.replay.replay(h, from.op)) {
          h.close();
          return Take.LOST;
        }
      } catch (RuntimeException failed) {
        h.close();
        throw failed;
      }
    }
    return new Take(h, true);
  }

  /** Pauses before an acquisition's command is sent again; nothing of the change is written. */
  private void retryPause(MongoException e, long start, String what) {
    lock.retryPause(e, start, cause -> new ChangeInterruptedException("Could not take the lock of"
        + " tree '" + lock.tree + "' to do: " + what + " (" + cause.getMessage() + "); nothing of"
        + " it was written", Outcome.NOT_APPLIED, cause));
  }

  /**
   * Takes the lock from the state {@code s} (free, or held by an expired holder) with a
   * compare-and-set on its version; replays the journal the previous holder left.
   *
   * @return the hold; or none if the state changed meanwhile, or {@link Take#LOST} if this
   *     caller took the lock and was taken over during the replay
   */
  private Take takeOver(TreeLock.State s, String token, String what, long now) {
    List<Bson> updates = new ArrayList<>();
    updates.add(Updates.inc(LockDocument.VERSION, 1L));
    updates.add(Updates.unset(LockDocument.WAITING + "." + token));
    for (TreeLock.Waiter w : s.waiting.values()) {
      if (!w.live(now) && !w.token().equals(token)) {
        updates.add(Updates.unset(LockDocument.WAITING + "." + w.token()));
      }
    }
    // A compare-and-set on the state this caller saw: the version, the holder and, for a holder
    // whose lease it saw expired, the renewal it saw expired. A holder that renewed since (its
    // background renewal, or the fence of its next batch) keeps its lock. (Before the next
    // millisecond, not equal: a server may keep the time of $currentDate finer than BSON's.)
    // The caller who completes the journal of a holder that stopped gets a longer lease than
    // that holder had (LockDocument.grown): when each replay outlives its lease (a lease shorter
    // than one replay on a busy machine), takeovers do not chain for ever.
    long lease = s.owner != null && s.op >= 0 ? lock.grown(s.lease) : lock.leaseMillis;
    Bson unchanged = s.owner == null
        ? and(lock.lockKey(), eq(LockDocument.VERSION, s.version), eq(LockDocument.OWNER, null))
        : and(lock.lockKey(), eq(LockDocument.VERSION, s.version),
            eq(LockDocument.OWNER, s.owner),
            Filters.lt(LockDocument.RENEWED, new BsonDateTime(s.renewed + 1)),
            eq(LockDocument.LEASE, s.lease));
    BsonDocument before = lock.raw.findOneAndUpdate(unchanged,
        lock.take(token, what, lease, updates.toArray(new Bson[0])),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.BEFORE)
            .projection(Projections.include(TreeLock.STATE)));
    if (before == null) {
      return Take.NONE;
    }
    TreeLock.State previous = new TreeLock.State(before);
    TreeLock.Hold h = hold(token, previous.epoch, previous.version + 1, what, lease);
    try {
      if (previous.owner != null) {
        facade.takeovers.incrementAndGet();
        facade.log.warn("Tree '{}': took the lock over from a holder whose lease of {} ms expired"
            + " while doing: {}", lock.tree, previous.lease, previous.what);
        // a stalled holder's insert commands cannot start now, nor still run once waited out
        if (facade.fences.revokeInserts(previous.owner, token)) {
          facade.fences.awaitStartedInserts(previous.lease);
        } else if (facade.ordered() && previous.owner.equals(previous.deleting)) {
          // MongoDB reads $$NOW once, as a command starts: a delete command bounded by the
          // holder's deadline that started before it may run on until its time limit, which is
          // waited out from that deadline (this take renewed the lease: the server's time now).
          // Only a holder whose fence recorded deletes can have sent one.
          facade.fences.awaitStartedCommands(
              previous.renewed + previous.lease - lock.read().renewed, previous.lease);
        }
      }
      if (previous.op >= 0 && !facade.replay.replay(h, previous.op)) {
        h.close(); // another caller took this one over during the replay, and completed it
        return Take.LOST;
      }
      return new Take(h, true);
    } catch (RuntimeException e) {
      h.close();
      throw e;
    }
  }

  /** Joins or stays in the queue: refreshes this caller's entry and reads the lock document. */
  TreeLock.State poll(String token, boolean reader) {
    String entry = LockDocument.WAITING + "." + token;
    BsonDocument d = lock.raw.findOneAndUpdate(lock.lockKey(), Updates.combine(
            Updates.currentDate(entry + ".at"),
            Updates.set(entry + ".r", reader),
            Updates.set(entry + ".l", lock.leaseMillis)),
        new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(TreeLock.STATE)));
    return new TreeLock.State(d);
  }

  /** Leaves the queue. */
  void unregister(String token) {
    try {
      lock.raw.updateOne(lock.lockKey(), Updates.unset(LockDocument.WAITING + "." + token));
    } catch (MongoException e) {
      // best effort: an entry that is not refreshed is skipped once its lease has passed
    }
  }

  private void waited(long start, String what) {
    long millis = TimeUnit.NANOSECONDS.toMillis(lock.timing.nanoTime() - start);
    if (millis > LONG_WAIT_MILLIS && facade.log.isInfoEnabled()) {
      facade.log.info("Tree '{}': waited {} ms for the lock to do: {}", lock.tree, millis, what);
    }
  }

  /**
   * Pauses before the next poll; once the lock wait since {@code start} has run out, throws a
   * {@link ChangeInterruptedException} {@code NOT_APPLIED}: the caller never held the lock, so
   * nothing of its change was written (a journal it was completing for another caller stays
   * committed, for the next access to complete).
   */
  void pause(int attempt, long start, TreeLock.State s) {
    if (lock.timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(lock.waitMillis)) {
      throw new ChangeInterruptedException("Tree '" + lock.tree + "' stayed locked for more than "
          + lock.waitMillis + " ms (" + (s.owner == null ? "waiting for earlier callers"
              : "holder doing: " + s.what) + "); nothing of this call was written",
          ChangeInterruptedException.Outcome.NOT_APPLIED, null);
    }
    lock.sleep(Math.max(1, Math.min(Math.min(MAX_PAUSE_MILLIS, lock.leaseMillis / 4),
        1L << Math.min(attempt, 6))));
  }

  /** Frees the lock, clearing a journal that is not to be completed. */
  void release(TreeLock.Hold h) {
    h.close();
    lock.releaseQuietly(h.token);
  }

  /**
   * Waits, in line as a reader, until no change is in flight, taking over an expired holder and
   * finishing its journal. The caller reads, then {@linkplain #unregister leaves the queue}.
   */
  TreeLock.State awaitQuiet(String token) {
    long start = lock.timing.nanoTime();
    long seen = -1;
    for (int attempt = 0; ; attempt++) {
      TreeLock.State s = poll(token, true);
      if (s.version != seen) {
        seen = s.version;
        attempt = 0;
      }
      if (s.stuck != null) {
        throw lock.stuck(s.stuck);
      }
      if (s.owner == null) {
        waited(start, "read");
        return s;
      }
      if (recoverExpired(s, s.waiting.get(token).at())) {
        continue;
      }
      pause(attempt, start, s);
    }
  }

  /**
   * If the holder in {@code s} has let its lease expire by {@code now} (the server's time),
   * takes the lock over, finishing its journal, and frees it again.
   *
   * @return whether the holder had expired (the lock changed, or someone else took it first)
   */
  boolean recoverExpired(TreeLock.State s, long now) {
    if (!s.expired(now)) {
      return false;
    }
    TreeLock.Hold h = takeOver(s, LockDocument.newToken(), "recover", now).hold();
    if (h != null) {
      release(h);
    }
    return true;
  }

  /**
   * What a try to take the lock gave: the hold, or none; {@code landed} when the lock document
   * named the token at some point (a hold was had, or may have been, and was taken over since).
   * A token that landed is not used for another try: whoever took it over took its next insert
   * fence ({@link Fences#revokeInserts}), which a later hold under the same token would meet
   * (RetakenLockTest).
   */
  private record Take(TreeLock.@Nullable Hold hold, boolean landed) {
    static final Take NONE = new Take(null, false);
    static final Take LOST = new Take(null, true);
  }
}
