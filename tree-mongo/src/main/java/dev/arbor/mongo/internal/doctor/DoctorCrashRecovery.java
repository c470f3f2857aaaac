package dev.arbor.mongo.internal.doctor;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Outcome;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.bson.Document;

/**
 * {@link Doctor}'s check of the recovery of a change interrupted half-way, in one pattern: a
 * holder with a short lease dies in the middle of {@code delete 'b'} (its {@link
 * DoctorCrashingSender} throws, leaving the lock held and the journal written), and another
 * store of the same collection must take the lock over once the lease has run out and leave the
 * tree before or the tree after the delete, with no journal left and {@code check()} empty. Then a
 * holder's client is closed half-way instead: the call must throw {@link
 * ChangeInterruptedException} whose outcome the next reader finds.
 */
public final class DoctorCrashRecovery {
  /** The lease of the store that crashes in the recovery run. */
  static final long CRASH_LEASE_MILLIS = 300;

  private static final org.slf4j.Logger QUIET = org.slf4j.helpers.NOPLogger.NOP_LOGGER;

  private final DoctorScratch scratch;

  public DoctorCrashRecovery(DoctorScratch scratch) {
    this.scratch = scratch;
  }

  /** The dead holder's recovery, then the closed client's, in {@code pattern}. */
  public DoctorVerdict run(TreePattern pattern) {
    MongoCollection<Document> c = scratch.fresh();
    Tree before = DoctorScript.fixture();
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(before);
    reference.delete("b");
    Tree after = reference.snapshot();
    DoctorCrashingSender sender = new DoctorCrashingSender(null);
    MongoTreeStore crashing = new MongoTreeStore(pattern, c,
        ServerCapabilities.probing(c).lease(CRASH_LEASE_MILLIS, 60_000).sender(sender).log(QUIET));
    crashing.load(before);
    sender.armed = true;
    try {
      crashing.delete("b");
    } catch (RuntimeException e) {
      if (!sender.crashed) {
        throw e;
      }
      // the holder is dead
    }
    if (!sender.crashed) {
      throw new DoctorMismatch("delete 'b' was not interrupted: it sent no step to crash in");
    }
    // Another process opens the collection, waits for the dead holder's lease, takes the lock
    // over and finishes the journal.
    MongoTreeStore next = new MongoTreeStore(pattern, c, ServerCapabilities.probing(c).log(QUIET));
    long start = System.nanoTime();
    List<Problem> left = next.repair();
    long waited = (System.nanoTime() - start) / 1_000_000;
    if (!left.isEmpty()) {
      throw new DoctorMismatch("repair() after the crash left " + left);
    }
    Tree recovered = next.snapshot();
    if (!recovered.equals(before) && !recovered.equals(after)) {
      throw new DoctorMismatch("after the crash and repair the tree is neither the tree before nor"
          + " the tree after delete 'b': " + recovered);
    }
    List<Problem> problems = next.check();
    if (!problems.isEmpty()) {
      throw new DoctorMismatch("check() after recovery found " + problems);
    }
    Set<String> journals = new LinkedHashSet<>();
    for (Document d : c.find(new Document("_id.arbor", "journal"))) {
      journals.add(String.valueOf(d.get("_id")));
    }
    if (!journals.isEmpty()) {
      throw new DoctorMismatch("journal documents left after recovery: " + journals);
    }
    next.insert("z", Position.lastRoot());
    if (!next.check().isEmpty()) {
      throw new DoctorMismatch("check() after a change following the recovery is not empty");
    }
    String closed = closedClient(pattern, before, after);
    String paused = pausedHolder(pattern, before);
    return DoctorVerdict.passed("delete 'b' stopped " + sender.where + ": dead, taken over after "
        + waited + " ms and " + (recovered.equals(after) ? "finished" : "undone") + "; "
        + closed + "; " + paused + "; check() empty");
  }

  /**
   * A holder paused past its lease just before it sends the delete command of {@code delete
   * 'c'} (a paused process, a slow network: a delete command cannot carry the fence that renews
   * the lease), while another store takes the lock over and inserts under {@code c}. The late
   * delete must change nothing (no orphan), and the outcomes of the two calls must be those of
   * one order of them: the delete told applied and the insert refused (its journal completed by
   * the caller who took it over), or the insert applied and the delete told it lost its lock.
   */
  private String pausedHolder(TreePattern pattern, Tree before) {
    MongoCollection<Document> c = scratch.fresh();
    DoctorPausingSender sender = new DoctorPausingSender(3 * CRASH_LEASE_MILLIS);
    MongoTreeStore holder = new MongoTreeStore(pattern, c, ServerCapabilities.probing(c)
        .lease(CRASH_LEASE_MILLIS, 60_000).sender(sender).subtreeLocks(false)
        .keepAlive(false) // a paused process: nothing renews its lease
        .log(QUIET));
    holder.load(before);
    sender.armed = true;
    java.util.concurrent.CompletableFuture<RuntimeException> delete =
        new java.util.concurrent.CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        holder.delete("c");
        delete.complete(null);
      } catch (RuntimeException e) {
        delete.complete(e);
      }
    }, "arbor-doctor-paused-holder");
    t.setDaemon(true);
    t.start();
    if (!sender.awaitPaused()) {
      throw new DoctorMismatch("delete 'c' sent no delete command to pause before");
    }
    MongoTreeStore other = new MongoTreeStore(pattern, c, ServerCapabilities.probing(c)
        .log(QUIET));
    boolean inserted;
    try {
      other.insert("z", Position.lastChildOf("c"));
      inserted = true;
    } catch (dev.arbor.core.NodeNotFoundException e) {
      inserted = false;
    } finally {
      sender.resume();
    }
    RuntimeException outcome;
    try {
      outcome = delete.get(60, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new DoctorMismatch("the paused holder's delete 'c' did not end: " + e);
    }
    List<Problem> problems = other.check();
    if (!problems.isEmpty()) {
      throw new DoctorMismatch("a holder paused past its lease before its delete command, then"
          + " sent it: check() found " + problems);
    }
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(before);
    if (inserted) {
      if (!(outcome instanceof dev.arbor.core.LockLostException)) {
        throw new DoctorMismatch("another caller inserted under 'c' after taking a paused"
            + " holder's lock over, but the holder's delete 'c' said "
            + (outcome == null ? "applied" : DoctorVerdict.describe(outcome)));
      }
      expected.insert("z", Position.lastChildOf("c"));
    } else {
      if (outcome != null) {
        throw new DoctorMismatch("'c' was gone for another caller, but the paused holder's"
            + " delete 'c' said " + DoctorVerdict.describe(outcome));
      }
      expected.delete("c");
    }
    Tree now = other.snapshot();
    if (!now.equals(expected.snapshot())) {
      throw new DoctorMismatch("after a holder's late delete 'c' the tree is " + now);
    }
    return "a delete sent after its lease: " + (inserted
        ? "changed nothing, the holder told it lost its lock"
        : "completed by the caller who took it over");
  }

  /**
   * Closes the client of a store half-way through {@code delete 'b'}: the call throws {@link
   * ChangeInterruptedException} saying what became of the change, and the next access (after
   * the closed client's lease) finds the tree that outcome says.
   */
  private String closedClient(TreePattern pattern, Tree before, Tree after) {
    MongoCollection<Document> c = scratch.fresh();
    ChangeInterruptedException.Outcome outcome;
    DoctorCrashingSender sender;
    try (MongoClient own = scratch.newClient()) {
      MongoCollection<Document> mine = scratch.collection(own);
      sender = new DoctorCrashingSender(own::close);
      MongoTreeStore closing = new MongoTreeStore(pattern, mine,
          ServerCapabilities.probing(mine).lease(CRASH_LEASE_MILLIS, 60_000).sender(sender)
              .log(QUIET));
      closing.load(before);
      sender.armed = true;
      try {
        closing.delete("b");
        throw new DoctorMismatch("delete 'b' went through although its client was closed"
            + " half-way");
      } catch (ChangeInterruptedException e) {
        outcome = e.outcome();
      } catch (DoctorMismatch e) {
        throw e;
      } catch (RuntimeException e) {
        throw new DoctorMismatch("a client closed half-way through delete 'b': "
            + DoctorVerdict.describe(e) + " instead of ChangeInterruptedException");
      }
    }
    MongoTreeStore next = new MongoTreeStore(pattern, c, ServerCapabilities.probing(c).log(QUIET));
    Tree now = next.snapshot();
    boolean right = switch (outcome) {
      case NOT_APPLIED -> now.equals(before);
      case COMMITTED -> now.equals(after);
      case UNKNOWN -> now.equals(before) || now.equals(after);
    };
    if (!right) {
      throw new DoctorMismatch("a client closed half-way through delete 'b' (" + sender.where
          + ") said " + outcome + ", but the next reader found " + now);
    }
    List<Problem> problems = next.check();
    if (!problems.isEmpty()) {
      throw new DoctorMismatch("check() after a client closed half-way found " + problems);
    }
    return "its client closed: " + outcome + ", and so it was";
  }
}
