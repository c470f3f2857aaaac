package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import dev.arbor.core.LockLostException;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Where a tree's lock document is and what its fields are (the picture is in {@link TreeLock}):
 * its filter, its reading, the updates that take and free it, the errors that name its state, and
 * the pace of the commands sent to it again. Every part of the protocol writes through it.
 */
public final class LockDocument {
  static final String EPOCH = TreeLock.STATE + ".epoch";
  static final String VERSION = TreeLock.STATE + ".version";
  static final String OWNER = TreeLock.STATE + ".owner";
  public static final String LEASE = TreeLock.STATE + ".lease";
  static final String RENEWED = TreeLock.STATE + ".renewed";
  static final String WHAT = TreeLock.STATE + ".what";
  static final String OP = TreeLock.STATE + ".op";
  static final String WAITING = TreeLock.STATE + ".waiting";
  static final String STUCK = TreeLock.STATE + ".stuck";
  public static final String DONE = TreeLock.STATE + ".done";
  /** How many tokens of journals done the lock document keeps (the last ones). */
  public static final int DONE_KEPT = 64;
  /** The token of the change whose journal is pending (with {@link #OP}, its version). */
  static final String OP_TOKEN = TreeLock.STATE + ".opt";
  /**
   * The tokens of the lanes that passed the gate and have not released ({@link Lanes}), as
   * {@code {token: <the id of the lane's head>}}; a lane that stopped may leave its token
   * behind.
   */
  static final String IN_FLIGHT = TreeLock.STATE + ".inflight";
  /**
   * How many times lanes raised the version ({@link Lanes#bump}): each lane's gate and release,
   * each with an entry in {@link #LANE_LOG}, in the same update as the version.
   */
  static final String LANE_BUMPS = TreeLock.STATE + ".laneBumps";
  /**
   * The latest {@value Lanes#LOG} raises of the version by lanes, oldest first: {@code {t: token,
   * m: [ids]}} for a gate (the lane's marks; null when they are many), {@code {t: token}} for a
   * release.
   */
  static final String LANE_LOG = TreeLock.STATE + ".laneLog";
  /**
   * The token of the holder whose lone fence went before a batch of deletes on a server that
   * reads {@code $$NOW} once per command (MongoDB): a caller who takes that holder over waits
   * out its time limit from its deadline ({@link Fences#awaitStartedCommands}); cleared by the
   * release. A holder that sent no delete command leaves nothing to wait for.
   */
  static final String DELETING = TreeLock.STATE + ".deleting";

  /** The tree's collection, every command bounded by {@link #commandLimit}. */
  final MongoCollection<BsonDocument> raw;
  final @Nullable Scope scope;
  private final BsonDocument lockId;
  /** The tree's name in messages and logs. */
  final String tree;
  final long leaseMillis;
  final long waitMillis;
  public final Timing timing;

  /**
   * @param raw the tree's collection, with majority write concern and primary reads
   * @param scope the tree of the collection this lock is of, or null: the collection holds one
   */
  public LockDocument(MongoCollection<BsonDocument> raw, @Nullable Scope scope, long leaseMillis,
      long waitMillis, Timing timing) {
    // Every command of the protocol is bounded (CSOT: the driver sends the server a time limit
    // and gives up waiting for the answer), so that a majority write on a replica set that cannot
    // reach a majority, or a stalled connection, ends in an error the protocol resolves (see
    // Execution) instead of blocking forever. Fenced batches are bounded tighter, by the lease.
    this.raw = raw.withTimeout(commandLimit(leaseMillis, waitMillis), TimeUnit.MILLISECONDS);
    this.scope = scope;
    this.lockId = scope == null ? TreeLock.LOCK_ID : scope.ownKey("lock");
    this.tree = raw.getNamespace().getFullName()
        + (scope == null ? "" : " [" + scope + "]");
    this.leaseMillis = leaseMillis;
    this.waitMillis = waitMillis;
    this.timing = timing;
  }

  /**
   * The time limit of one command of the protocol, {@link #commandLimit}: also of each read a
   * change makes (each batch of its cursors), so that a read whose reply never comes (a stalled
   * connection, a client without a socket timeout) ends the change rather than hold the lock,
   * its lease renewed in the background, for ever.
   */
  public long commandLimitMillis() {
    return commandLimit(leaseMillis, waitMillis);
  }

  /**
   * The time limit of one command of the protocol: shorter than the lock wait (so that a caller
   * resends it, or gives up, within its wait), and at least a lease.
   */
  public static long commandLimit(long leaseMillis, long waitMillis) {
    return Math.max(leaseMillis, Math.min(waitMillis / 2, 10_000));
  }

  /**
   * The lease after {@code lease} ran out under a live holder: twice as long, up to {@value
   * #MAX_GROWTH} times the configured lease and no more than a minute (unless the configured
   * lease is longer). A holder whose command arrived after its lease (a busy machine, a slow
   * server) sends it again under the longer lease, and the caller who takes over a journal whose
   * holder stopped completes it under a longer lease than that holder had: a lease shorter than
   * one command, or than one replay, delays a change without stopping it for ever.
   */
  long grown(long lease) {
    long cap = Math.max(leaseMillis, Math.min(MAX_GROWTH * leaseMillis, 60_000));
    return Math.min(cap, Math.max(leaseMillis, 2 * lease));
  }

  /** How many times the configured lease a lease grows to at most ({@link #grown}). */
  static final long MAX_GROWTH = 64;

  /** The filter of the lock document (with the scope equality for a scoped tree). */
  public Bson lockKey() {
    return scoped(eq("_id", lockId));
  }

  /** {@code filter} restricted to the tree's documents (itself for an unscoped tree). */
  Bson scoped(Bson filter) {
    return scope == null ? filter : and(eq(scope.field(), scope.value()), filter);
  }

  /** The {@code _id} of one of the tree's own documents of this kind. */
  BsonDocument own(String kind) {
    return scope == null ? new BsonDocument("arbor", new BsonString(kind)) : scope.ownKey(kind);
  }

  /** One of the tree's own documents, carrying the scope field in a scoped tree. */
  BsonDocument tagged(BsonDocument d) {
    return scope == null ? d : scope.tagged(d);
  }

  /**
   * Reads the lock document (creating it on first use).
   */
  TreeLock.State read() {
    BsonDocument d = raw.find(lockKey()).projection(Projections.include(TreeLock.STATE)).first();
    if (d == null) {
      try {
        raw.updateOne(lockKey(), Updates.combine(
                Updates.setOnInsert(EPOCH, UUID.randomUUID().toString()),
                Updates.setOnInsert(VERSION, 0L)),
            new UpdateOptions().upsert(true));
      } catch (MongoException e) {
        if (!MongoErrors.duplicateKey(e)) {
          throw e;
        }
        // another first user created it at the same moment: it exists now
      }
      d = raw.find(lockKey()).projection(Projections.include(TreeLock.STATE)).first();
      if (d == null) { // its _id is taken by a document that is not this tree's
        String problem = scope == null ? null
            : scope.sharedIds(raw, Projections.exclude(TreeLock.STATE, TreeLock.JOURNAL));
        throw new dev.arbor.core.TreeException(problem != null ? problem
            : "the lock document " + lockId.toJson() + " is missing and could not be written");
      }
    }
    return new TreeLock.State(d);
  }

  /**
   * Why {@code e}, which met a duplicate key somewhere in its causes, did: this scoped tree's
   * {@code _id}s are those of a tree scoped by another field with the same value ({@link
   * Scope#sharedIds}); or null (no scope, no duplicate key, another cause, or the lock document
   * could not be read: the call's own outcome then stands). Reads the lock document by {@code
   * _id}, only then.
   */
  public @Nullable TreeException sharedIds(Throwable e) {
    if (scope == null) {
      return null;
    }
    boolean duplicate = false;
    for (Throwable t = e; t != null && !duplicate; t = t.getCause()) {
      duplicate = t instanceof MongoException m && MongoErrors.duplicateKey(m);
    }
    String problem;
    try {
      problem = duplicate
          ? scope.sharedIds(raw, Projections.exclude(TreeLock.STATE, TreeLock.JOURNAL)) : null;
    } catch (RuntimeException unread) { // a lost connection: the call's own outcome stands
      return null;
    }
    return problem == null ? null : new TreeException(problem, e);
  }

  public static String newToken() {
    return UUID.randomUUID().toString().replace("-", "");
  }

  /** The update that makes {@code token} the holder, doing {@code what}, plus {@code more}. */
  public Bson take(String token, String what, Bson... more) {
    return take(token, what, leaseMillis, more);
  }

  /**
   * The update that makes {@code token} the holder for a lease of {@code lease} ms, doing {@code
   * what}, plus {@code more}.
   */
  Bson take(String token, String what, long lease, Bson... more) {
    List<Bson> updates = new ArrayList<>(List.of(Updates.set(OWNER, token),
        Updates.set(LEASE, lease), Updates.set(WHAT, what), Updates.currentDate(RENEWED)));
    updates.addAll(List.of(more));
    return Updates.combine(updates);
  }

  /** The update that frees the lock, clearing a journal that is not to be completed. */
  static Bson releaseUpdate() {
    return Updates.combine(Updates.set(OWNER, null), Updates.set(WHAT, null),
        Updates.inc(VERSION, 1L), Updates.unset(OP), Updates.unset(OP_TOKEN),
        Updates.unset(DELETING), Updates.unset(TreeLock.JOURNAL));
  }

  /** Frees the lock if {@code token} holds it. */
  void release(String token) {
    raw.updateOne(and(lockKey(), eq(OWNER, token)), releaseUpdate());
  }

  /** Frees the lock if {@code token} holds it, best effort (else its lease runs out). */
  void releaseQuietly(String token) {
    try {
      release(token);
    } catch (MongoException e) {
      // the lease frees it
    }
  }

  /** The lock is lost: {@code s}, read after, names another holder, or none. */
  LockLostException lostTo(String what, TreeLock.State s) {
    return new LockLostException("Lost the lock of tree '" + tree + "' while doing: " + what
        + " (its lease of " + leaseMillis + " ms expired and "
        + (s.owner != null ? "another caller holds the lock, doing: " + s.what
            : "another caller took the lock over, and has released it since")
        + "); nothing of this change was written");
  }

  /** The tree is stuck on the journal described by {@code stuck}. */
  TreeException stuck(BsonDocument stuck) {
    return new TreeException("Tree '" + tree + "' is stuck: the change '"
        + stuck.getString("what", new BsonString("?")).getValue() + "' (version "
        + stuck.get("v") + ") stopped at step " + stuck.get("step") + " of "
        + stuck.get("steps") + ", which the server refuses: "
        + stuck.getString("error", new BsonString("?")).getValue()
        + ". Nothing can read or change the tree until it is settled: remove the cause (for"
        + " example a validator or a unique index that refuses the step) and call repair(),"
        + " which completes the change");
  }

  /**
   * Pauses before a command is sent again after the transient error {@code e}; once the lock
   * wait has run out since {@code start}, throws what {@code givingUp} makes of {@code e}.
   */
  public void retryPause(MongoException e, long start,
      Function<MongoException, RuntimeException> givingUp) {
    if (!MongoErrors.transientError(e)) {
      throw e;
    }
    if (timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(waitMillis)) {
      throw givingUp.apply(e);
    }
    pause();
  }

  /** The pause before a command is sent again: a tenth of the lease, 1 to 100 ms. */
  void pause() {
    sleep(Math.min(100, Math.max(1, leaseMillis / 10)));
  }

  void sleep(long millis) {
    try {
      timing.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TreeException("Interrupted while waiting for the lock of tree '" + tree + "'", e);
    }
  }
}
