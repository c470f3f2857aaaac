package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * The protocol of a server without transactions for the patterns whose changes can hold only
 * what they touch (parent references, child references, array of ancestors, materialized paths):
 * each change runs in a lane of its own ({@link Lanes}), marking the documents of its {@link
 * Footprint}; changes whose footprints do not meet run at the same time. A change without a
 * footprint (the top level) takes the tree's lock, which waits for the lanes to drain.
 *
 * <p><b>Alone, a change pays no more than without lanes.</b> While a store's changes meet no
 * other writer, each is tried first on {@link FencedJournalProtocol}'s optimistic path: planned on
 * the last quiet version seen, and sent led by a claim of the tree's lock at that version, a
 * claim that also requires no lane in flight. Once such a try finds the tree moved (another
 * writer), the store's changes run in lanes for {@link Lanes#CONTENDED_MILLIS}; then the lock
 * document is read again before the next try.
 *
 * <p><b>A change in a lane</b>: its footprint is read, its marks claimed (head first: a mark met is
 * waited for, or taken over if its lease expired), the gate passed (the tree's version raised: the
 * change's version), the footprint read again under the marks, the change planned under them,
 * and its plan sent by {@link LaneProgram}. A conflict releases every mark before waiting, so two
 * changes never wait for each other.
 *
 * <p><b>A read</b> is accepted when the tree's lock showed the same quiet version before and after
 * it and no lane in flight after it (the lock document names the lanes between their gate and
 * their release, with their heads; only when it names some are their heads read, by {@code
 * _id}, to tell live lanes from names left behind): a lane raises the version at
 * its gate and at its release, so a lane that wrote while the read ran either is still in flight
 * or moved the version.
 * A read that keeps meeting lanes joins the lock's queue as a reader: lanes stop passing the gate
 * until it has read.
 */
public final class LaneProtocol implements Protocol {
  private final Lanes lanes;
  private final TreeLock lock;
  private final FencedJournalProtocol fenced;
  private final MongoCollection<Document> data;
  private final @Nullable Scope scope;
  private final boolean isolatedReads;
  private final boolean optimistic;
  private final LongConsumer settled;

  public LaneProtocol(Lanes lanes, FencedJournalProtocol fenced, MongoCollection<Document> data,
      @Nullable Scope scope, boolean isolatedReads, boolean optimistic, LongConsumer settled) {
    this.lanes = lanes;
    this.lock = lanes.tree;
    this.fenced = fenced;
    this.data = data;
    this.scope = scope;
    this.isolatedReads = isolatedReads;
    this.optimistic = optimistic;
    this.settled = settled;
  }

  @Override
  public Outcome change(String what, Planner planner) {
    Outcome o = uncontended(what, planner);
    return o != null ? o : locked(what, planner);
  }

  /**
   * The optimistic path of {@link FencedJournalProtocol} while this store's changes meet no
   * other: planned on the last quiet version seen and sent led by a claim of the tree's lock at
   * that version (which also requires no lane in flight), in as few round trips as without lanes.
   * When it fails (the tree moved meanwhile: another writer), the store's changes go to lanes for
   * {@link Lanes#CONTENDED_MILLIS}, after which the lock document is read again before the next
   * try.
   *
   * @return the outcome, or null: nothing was written, go on in a lane or under the lock
   */
  private @Nullable Outcome uncontended(String what, Planner planner) {
    if (!optimistic) {
      return null;
    }
    long now = lock.lock.timing.nanoTime();
    long until = lanes.contendedUntil;
    if (until != 0 && now - until < 0) {
      return null;
    }
    Outcome o = fenced.optimistic(what, planner, until != 0);
    if (o == null) {
      lanes.contendedUntil = lock.lock.timing.nanoTime()
          + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(Lanes.CONTENDED_MILLIS) | 1;
    } else if (until != 0) {
      lanes.contendedUntil = 0;
    }
    return o;
  }

  @Override
  public Outcome change(String what, Footprint footprint, Planner planner) {
    Outcome uncontended = uncontended(what, planner);
    if (uncontended != null) {
      return uncontended;
    }
    List<String> want;
    try {
      want = footprint.of(new Reads(data, scope, null, () -> {}, false,
          lanes.lock.commandLimitMillis()), false);
    } catch (MongoException e) {
      if (!MongoErrors.transientError(e)) {
        throw e;
      }
      return locked(what, planner); // nothing held nor written: the lock's path retries
    }
    if (want == null || want.isEmpty()) {
      return locked(what, planner);
    }
    long start = lock.lock.timing.nanoTime();
    boolean toLock = false;
    // The lease each try claims its marks for: longer after a try whose commands outlived it (a
    // busy machine, a slow server), so that a lone writer slower than its lease still gets its
    // marks (LockDocument.grown).
    long lease = lock.lock.leaseMillis;
    for (int attempt = 0; !toLock; attempt++) {
      Lanes.Lane lane = lanes.new Lane(lease);
      Change c;
      try {
        Lanes.Met met = lanes.claim(lane, want, what);
        if (met != null) {
          lanes.release(lane);
          if (met.missing()) {
            toLock = true; // the tree's lock tells what is missing
            break;
          }
          if (met.late()) {
            lease = lock.lock.grown(lease);
            lanes.pause(0, start, "the marks of: " + what); // within the lock wait
            continue;
          }
          if (!lanes.resolve(met)) {
            lanes.pause(attempt, start, "the marks of: " + what);
          }
          continue;
        }
        TreeLock.State shut = lanes.gate(lane);
        for (int waits = 0; shut != null && shut.owner != null && shut.stuck == null
            && shut.waiting.isEmpty() && waits < GATE_WAITS; waits++) {
          // A holder of the tree's lock and nobody in its queue: most hold it for one change's
          // program, a command or two (an optimistic change of another store). Queuing behind
          // it would shut the gate to every lane after this one until the queue drains (a
          // convoy); a few short waits at the gate, its marks kept, let it pass once the holder
          // is done. Beyond them, the queue, as before.
          lock.lock.sleep(1);
          shut = lanes.gate(lane);
        }
        if (shut != null) {
          lanes.release(lane);
          if (shut.owner != null || shut.stuck != null) {
            // A holder of the tree's lock (perhaps stalled past its lease, perhaps stuck): its
            // queue waits in line, takes an expired holder over and completes its journal.
            toLock = true;
            break;
          }
          lanes.pause(attempt, start, "the tree's lock, to do: " + what);
          continue;
        }
        c = new Change(data, scope, null, () -> {
          if (!lanes.renewIfDue(lane)) {
            throw new MarksLost(); // what it reads now may be another's change half-way
          }
        }, lane.version, lanes.lock.commandLimitMillis());
        List<String> again = footprint.of(c, true);
        if (again == null || !want.containsAll(again)) {
          lanes.release(lane);
          if (again == null) {
            toLock = true;
            break;
          }
          LinkedHashSet<String> union = new LinkedHashSet<>(want);
          union.addAll(again);
          want = new ArrayList<>(union);
          continue;
        }
        planner.plan(c);
      } catch (MarksLost e) {
        lease = lost(lane, attempt, start, what, lease);
        continue; // nothing of it was written: made again
      } catch (IllegalStateException e) { // the client was closed under the change
        throw new ChangeInterruptedException("The client was closed while doing: " + what
            + "; nothing of it was written", ChangeInterruptedException.Outcome.NOT_APPLIED, e);
      } catch (MongoException e) {
        // Nothing of the change is written before its plan is sent: free the marks and try
        // again after an error that a command sent again may not meet.
        lanes.release(lane);
        if (!MongoErrors.transientError(e)) {
          throw e;
        }
        lanes.pause(attempt, start, "the server, to do: " + what);
        continue;
      } catch (RuntimeException e) {
        // A planner's verdict (no such node, a cycle…) stands only if the lane still held its
        // marks once it was made: a lane taken over while it planned may have read another's
        // change, which took effect after its version.
        if (!stillHeld(lane)) {
          lease = lost(lane, attempt, start, what, lease);
          continue;
        }
        lanes.release(lane);
        settled.accept(lane.version);
        throw e;
      }
      if (c.steps().isEmpty()) {
        if (!stillHeld(lane)) { // a no-op, seen as such only if read under its marks
          lease = lost(lane, attempt, start, what, lease);
          continue;
        }
        lanes.release(lane);
        settled.accept(lane.version);
        return Outcome.NONE;
      }
      long deleted;
      try {
        deleted = lanes.programs.run(lane, c.steps(), what);
      } catch (LaneProgram.TooLarge e) {
        lanes.release(lane);
        return locked(what, planner);
      } catch (IllegalStateException e) { // the client was closed under the change
        throw interrupted(lane, what, "the client was closed", e);
      } catch (MongoException e) {
        // An I/O error the program could not settle: once its journal or a step was sent, the
        // change may have taken effect (a command whose answer was lost may still land within
        // the lane's lease), so it is not told NOT_APPLIED.
        if (!lane.committed) {
          lanes.release(lane);
        }
        if (!lane.committed && !lane.sent && !lane.commitSent) {
          throw e; // nothing of it was sent: NOT_APPLIED, as any driver error before a write
        }
        throw interrupted(lane, what, e.getMessage(), e);
      } catch (RuntimeException e) {
        if (!lane.committed) {
          lanes.release(lane); // nothing of it is written, or one step that tells by itself
        }
        throw e;
      } finally {
        lane.stop();
      }
      settled.accept(lane.version);
      return new Outcome(lane.version, deleted);
    }
    return locked(what, planner);
  }

  /** How many times a lane waits (1 ms) at a gate shut by a holder, before it queues. */
  private static final int GATE_WAITS = 3;

  /** Thrown by a lane's reads once its marks were taken over: the change is planned again. */
  private static final class MarksLost extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MarksLost() {
      super(null, null, false, false);
    }
  }

  /**
   * After a lane was taken over while it planned: frees what it may still mark (bounded by its
   * lease: nothing of another's) and pauses before the change is planned again in a new lane.
   *
   * @return the lease of the next try: longer ({@link LockDocument#grown}), since this one ran
   *     out while the lane's writer was still at work
   */
  private long lost(Lanes.Lane lane, int attempt, long start, String what, long lease) {
    lanes.release(lane);
    lanes.pause(attempt, start, "a lane taken over while it planned: " + what);
    return lock.lock.grown(lease);
  }

  /** Whether the lane still holds its marks (its lease renewed); false if it was taken over. */
  private boolean stillHeld(Lanes.Lane lane) {
    try {
      return lanes.renew(lane);
    } catch (MongoException e) {
      return false; // not known: the change is planned again, which is always sound
    }
  }

  /** A change under the tree's lock, which waits for the lanes to drain. */
  private Outcome locked(String what, Planner planner) {
    return fenced.underTheLock(what, planner);
  }

  /**
   * Until when (the lock's clock, 0: not) reads of a subtree skip the cheap try, which found a
   * change in flight or made meanwhile.
   */
  private volatile long readsMeetChangesUntil;

  /** The tries of a read of a subtree beside lanes elsewhere, before it is read as any other. */
  private static final int APART_TRIES = 3;

  /**
   * A read of {@code top} and of nodes below it, which stands beside lanes elsewhere in the tree
   * ({@link Lanes#apart}): it is accepted when every raise of the version while it ran was a
   * lane's, and none of those lanes marked {@code top} or a node the read returned. A lane
   * writes only the nodes it marks, their children, and new children of the nodes it marks; a
   * change that adds a node below {@code top}, or takes one away, marks its parent, which the
   * read returned (or is {@code top}); so such lanes changed nothing the read returned or
   * missed, and it saw the subtree as it was when it ended. Otherwise, after a few tries, it
   * is read as any other ({@link #read(Function)}).
   */
  @Override
  public <T> T read(String top, Function<Reads, T> body,
      Function<T, java.util.Collection<String>> returned) {
    if (!isolatedReads) {
      return fenced.read(body);
    }
    // While reads of this store keep meeting changes, the cheap try (which stands only if no
    // change at all ran) is skipped for a while: it would read everything twice.
    long now = lock.lock.timing.nanoTime();
    long until = readsMeetChangesUntil;
    if (until == 0 || now - until >= 0) {
      FencedJournalProtocol.Accepted<T> quick = fenced.readOnce(body);
      if (quick != null) {
        readsMeetChangesUntil = 0;
        return quick.value();
      }
      readsMeetChangesUntil = now + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
          Lanes.CONTENDED_MILLIS) | 1;
    }
    TreeLock.State before = lock.read();
    for (int attempt = 0; attempt < APART_TRIES && before.quiet(); attempt++) {
      ReadTry<T> t = ReadTry.run(new Reads(data, scope, null, () -> {}, false), body);
      java.util.Set<String> depends = new java.util.HashSet<>();
      depends.add(top);
      if (t.result() != null) {
        depends.addAll(returned.apply(t.result()));
      }
      TreeLock.State after = lock.read();
      if (lanes.apart(before, after, depends)) {
        return t.outcome();
      }
      before = after; // the next try begins where this one ended
    }
    return readQuiet(body); // the cheap try was made above, or skipped on purpose
  }

  @Override
  public <T> T read(Function<Reads, T> body) {
    if (!isolatedReads) {
      return fenced.read(body);
    }
    // While no lane is in flight, a read costs what it costs without lanes.
    FencedJournalProtocol.Accepted<T> quick = fenced.readOnce(body);
    if (quick != null) {
      return quick.value();
    }
    return readQuiet(body);
  }

  /**
   * A read accepted when the tree's version did not move and no lane was in flight while it
   * ran; after three tries it joins the lock's queue as a reader, and lanes stop passing the
   * gate until it has read.
   */
  private <T> T readQuiet(Function<Reads, T> body) {
    String waiting = null;
    long start = lock.lock.timing.nanoTime();
    try {
      for (int attempt = 0; ; attempt++) {
        TreeLock.State before = waiting == null ? lock.read()
            : lock.queue.poll(waiting, true);
        lock.checkNotStuck(before);
        if (!before.quiet()) {
          waiting = waiting == null ? lock.readerToken() : waiting;
          before = lock.awaitQuiet(waiting);
        }
        ReadTry<T> t = ReadTry.run(new Reads(data, scope, null, () -> {}, false), body);
        // Accepted if the version did not move and no lane was in flight (Lanes.look).
        Lanes.Look look = lanes.look(before.asQuiet(), lock.read());
        Lanes.Met met = look.met();
        if (look.stands()) {
          fenced.remember(before.asQuiet()); // the next read tries on it first
          return t.outcome();
        }
        if (attempt >= 2 && waiting == null) {
          waiting = lock.readerToken(); // lanes stop passing the gate until this read is done
          lock.queue.poll(waiting, true);
        }
        if (met != null && !lanes.resolve(met)) {
          lanes.pause(Math.min(attempt, 3), start, "a change in a subtree to end, to read");
        }
      }
    } finally {
      if (waiting != null) {
        lock.unregister(waiting);
      }
    }
  }
  /**
   * A lane's change that could not go on after its program started: committed if its journal is
   * stored, {@code UNKNOWN} once its journal or a step was sent (a command whose answer was lost
   * may still land within the lane's lease), else {@code NOT_APPLIED}.
   */
  private ChangeInterruptedException interrupted(Lanes.Lane lane, String what, String why,
      RuntimeException cause) {
    ChangeInterruptedException.Outcome outcome = lane.committed
        ? ChangeInterruptedException.Outcome.COMMITTED : lane.sent || lane.commitSent
        ? ChangeInterruptedException.Outcome.UNKNOWN
        : ChangeInterruptedException.Outcome.NOT_APPLIED;
    return new ChangeInterruptedException("Could not complete '" + what + "' on tree '"
        + lanes.lock.tree + "': " + why + switch (outcome) {
          case COMMITTED -> "; the change is committed, and whoever next meets its marks after"
              + " its lease completes it";
          case UNKNOWN -> "; it may or may not have been applied";
          default -> "; nothing of it was written";
        }, outcome, cause);
  }
}
