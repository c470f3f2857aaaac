package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.LockLostException;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * The protocol of a server without transactions, and of changes too large for one: the tree's
 * lock document, held under a lease, and fenced batches ({@link TreeLock}).
 *
 * <p><b>A change</b> is planned first without the lock, on the tree as of the last quiet version
 * the store saw, and sent led by a claim of the lock at that version: one round trip more than
 * its reads when nothing changed meanwhile. If the tree changed, nothing was written, and the
 * change is planned again under the lock, taken in turn ({@link TreeLock#acquire}). A plan of one
 * single-document step is one fenced statement; a longer one is journaled first, so that a crash
 * half-way is completed by the next caller.
 *
 * <p><b>A read</b> is accepted only if no change was in flight from a quiet version seen before it
 * to a check of the lock document after it (folded into the read's own query when that is one
 * query by {@code _id}). While a change is in flight the reader waits in line, before the writers
 * that follow it.
 */
public final class FencedJournalProtocol implements Protocol {
  private final TreeLock lock;
  private final MongoCollection<Document> data;
  private final @Nullable Scope scope;
  private final @Nullable ClientSession session;
  private final boolean isolatedReads;
  private final QuietVersion known;
  private final LongConsumer settled;

  /**
   * @param data the tree's collection, read from the primary
   * @param session the caller's session of a view, or null
   * @param isolatedReads whether reads are isolated ({@link TreeOptions#withIsolatedReads})
   * @param known the quiet version the store and its views share
   * @param settled told the version each change took effect at, or saw the tree at
   */
  public FencedJournalProtocol(TreeLock lock, MongoCollection<Document> data, @Nullable Scope scope,
      @Nullable ClientSession session, boolean isolatedReads, QuietVersion known,
      LongConsumer settled) {
    this.lock = lock;
    this.data = data;
    this.scope = scope;
    this.session = session;
    this.isolatedReads = isolatedReads;
    this.known = known;
    this.settled = settled;
  }

  @Override
  public Outcome change(String what, Planner planner) {
    TreeLock.Quiet k = known.get();
    if (k != null) {
      Outcome o = optimistic(k, what, planner);
      if (o != null) {
        return o;
      }
    }
    return underTheLock(what, planner);
  }

  /**
   * Plans and applies a change under the tree's lock (taken in line behind earlier callers, and
   * after any lanes drained): the path of a change that cannot be made optimistically.
   */
  Outcome underTheLock(String what, Planner planner) {
    TreeLock.Hold h = lock.acquire(what);
    long start = lock.lock.timing.nanoTime();
    Change c;
    for (;;) {
      c = new Change(data, scope, session, h::renewIfDue, h.version,
          lock.lock.commandLimitMillis());
      try {
        planner.plan(c);
        break;
      } catch (RuntimeException e) {
        RuntimeException end = e;
        if (e instanceof MongoException m) {
          // Nothing is written before the plan is sent, and each query renews the hold or
          // finds it lost: a read cut off or timed out (a stalled connection) is made again, as
          // lanes do, until the lock wait runs out.
          try {
            lock.lock.retryPause(m, start, x -> x);
            continue;
          } catch (RuntimeException stop) {
            end = stop;
          }
        }
        if (e instanceof MongoException || e instanceof LockLostException) {
          lock.release(h);
        } else {
          releaseReadUnderIt(h); // a planner's verdict: no such node, a cycle…
        }
        settled.accept(h.version);
        throw end;
      }
    }
    if (c.steps().isEmpty()) {
      releaseReadUnderIt(h); // a no-op
      settled.accept(h.version);
      return Outcome.NONE;
    }
    TreeLock.Result r = lock.run(h, c.steps());
    if (r.deleted() >= 0) {
      known.remember(new TreeLock.Quiet(h.epoch, r.version() + 1)); // its own release
    }
    settled.accept(r.version());
    return new Outcome(r.version(), r.deleted());
  }

  /**
   * Releases {@code h} once a renewal has confirmed that the lock was still its own: what its
   * planner read and concluded without writing (a verdict such as no such node or a cycle, or a
   * no-op) stands only then. A holder slower than its lease may have been taken over while it
   * read, and met another holder's change half-way (the optimistic path and lanes check the same;
   * {@code LostHoldVerdictTest}). Nothing of the change was written.
   *
   * @throws LockLostException if the lock was taken over
   */
  private void releaseReadUnderIt(TreeLock.Hold h) {
    try {
      h.renew();
    } finally {
      lock.release(h);
    }
  }

  /**
   * The optimistic path alone, for a protocol that has another way when it fails ({@link
   * LaneProtocol}): plans on the tree as of the last quiet version seen (read first if there is
   * none, or if {@code refresh}), and sends the plan led by a claim of the lock at that version.
   *
   * @return the outcome, or null if the tree changed meanwhile or a change is in flight (nothing
   *     was written)
   */
  @Nullable Outcome optimistic(String what, Planner planner, boolean refresh) {
    TreeLock.Quiet k = known.get();
    if (k == null || refresh) {
      TreeLock.State s;
      try {
        s = lock.read();
      } catch (MongoException e) {
        if (MongoErrors.transientError(e)) {
          return null; // nothing was written: the locked path reads again, and retries
        }
        throw e;
      }
      if (!s.quiet() || s.lanes) {
        return null;
      }
      k = s.asQuiet();
      known.remember(k);
    }
    return optimistic(k, what, planner);
  }

  /**
   * Plans without the lock, on the tree as of the quiet version {@code k}, and sends the plan led
   * by a claim of the lock at that version.
   *
   * @return the outcome, or null if the tree changed since {@code k} (nothing was written)
   */
  private @Nullable Outcome optimistic(TreeLock.Quiet k, String what, Planner planner) {
    Change c = new Change(data, scope, session, () -> {}, k.version() + 1,
        lock.lock.commandLimitMillis());
    try {
      planner.plan(c);
    } catch (MongoException e) {
      if (MongoErrors.transientError(e)) {
        return null; // nothing was written: planned again under the lock, which retries
      }
      throw e;
    } catch (RuntimeException e) {
      // A planner's verdict (no such node, a cycle…) stands only if its reads saw a quiet tree.
      if (stillQuiet(k)) {
        settled.accept(k.version());
        throw e;
      }
      return null;
    }
    if (c.steps().isEmpty()) {
      if (stillQuiet(k)) {
        settled.accept(k.version());
        return Outcome.NONE;
      }
      return null;
    }
    try {
      TreeLock.Result r = lock.runClaimed(k, what, c.steps());
      if (r.deleted() >= 0) {
        known.remember(new TreeLock.Quiet(k.epoch(), r.version() + 1)); // its own release
      }
      settled.accept(r.version());
      return new Outcome(r.version(), r.deleted());
    } catch (TreeLock.ClaimRefused refused) {
      return null;
    }
  }

  /**
   * Whether the tree is still at {@code k} with no change in flight, in a lane neither (a lane
   * leaves the version as it was until it releases).
   */
  private boolean stillQuiet(TreeLock.Quiet k) {
    TreeLock.State s;
    try {
      s = lock.read();
    } catch (MongoException e) {
      if (MongoErrors.transientError(e)) {
        return false; // unknown: the change is planned again under the lock, which retries
      }
      throw e;
    }
    if (s.quiet()) {
      known.remember(s.asQuiet());
    }
    return k.same(s) && !s.lanes;
  }

  /** Records a quiet version seen with no lane in flight, for the next optimistic try. */
  void remember(TreeLock.Quiet q) {
    known.remember(q);
  }

  /** A read accepted by {@link #readOnce}. */
  record Accepted<T>(@Nullable T value) {}

  /**
   * One try of an isolated read, as {@link #read} makes it (on the last quiet version seen, the
   * lock's check folded into the read's query where it can be), for a protocol that has another
   * way when it fails ({@link LaneProtocol}).
   *
   * @return the read, or null if the tree moved or a change (in a lane too) was in flight
   */
  <T> @Nullable Accepted<T> readOnce(Function<Reads, T> body) {
    TreeLock.Quiet before = known.get();
    if (before == null) {
      return null;
    }
    ReadTry<T> t = ReadTry.run(new Reads(data, scope, session, () -> {}, true), body);
    BsonDocument folded = t.folded();
    TreeLock.State after = folded != null ? new TreeLock.State(folded) : lock.read();
    return t.saw(before, after) ? new Accepted<>(t.outcome()) : null;
  }

  @Override
  public <T> T read(Function<Reads, T> body) {
    if (!isolatedReads) {
      return body.apply(new Reads(data, scope, session, () -> {}, false));
    }
    String waiting = null;
    int laneTries = 0;
    try {
      TreeLock.Quiet before = known.get();
      for (;;) {
        if (before == null) {
          TreeLock.State s = lock.read();
          lock.checkNotStuck(s);
          if (!s.quiet()) {
            waiting = waiting == null ? lock.readerToken() : waiting;
            s = lock.awaitQuiet(waiting);
          }
          before = s.asQuiet();
          known.remember(before);
        }
        ReadTry<T> t = ReadTry.run(new Reads(data, scope, session, () -> {}, true), body);
        BsonDocument folded = t.folded();
        TreeLock.State after = folded != null ? new TreeLock.State(folded) : lock.read();
        if (t.saw(before, after)) {
          return t.outcome();
        }
        if (folded != null && !before.same(after)) {
          after = lock.read(); // the folded copy may predate the query's other documents
        }
        if (after.lanes && before.same(after)) {
          // Lanes of another store in flight (this one has them off): wait for them, and after a
          // few tries queue as a reader, so that no new lane passes the gate until it has read.
          if (++laneTries >= 3 && waiting == null) {
            waiting = lock.readerToken();
            lock.queue.poll(waiting, true);
          }
          lock.lock.sleep(Math.min(laneTries, 10));
        }
        lock.checkNotStuck(after);
        if (after.quiet()) {
          before = after.asQuiet();
          known.remember(before);
        } else {
          waiting = waiting == null ? lock.readerToken() : waiting;
          before = lock.awaitQuiet(waiting).asQuiet();
          known.remember(before);
        }
      }
    } finally {
      if (waiting != null) {
        lock.unregister(waiting);
      }
    }
  }

  /**
   * Waits in line until no change is in flight and returns that quiet version (a stream's start),
   * or null if reads are not isolated.
   */
  public TreeLock.@Nullable Quiet awaitQuiet() {
    if (!isolatedReads) {
      return null;
    }
    TreeLock.State s = lock.read();
    lock.checkNotStuck(s);
    if (!s.quiet()) {
      String waiting = lock.readerToken();
      try {
        s = lock.awaitQuiet(waiting);
      } finally {
        lock.unregister(waiting);
      }
    }
    TreeLock.Quiet q = s.asQuiet();
    known.remember(q);
    return q;
  }

  /**
   * A read context of this protocol's session with no isolation (streams check the lock), whose
   * cursors resume after a cut connection as {@code retry} says.
   */
  public Reads unisolated(Runnable beforeQuery, ReadRetry retry) {
    return new Reads(data, scope, session, beforeQuery, false).retrying(retry);
  }
}
