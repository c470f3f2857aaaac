package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.LockLostException;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * All-or-nothing structural changes without multi-document transactions: a per-tree lock document
 * with a fenced lease, a queue of waiting callers and a journal of guarded, replayable steps, kept
 * in the tree's own collection under a non-string {@code _id} (so it never collides with a node).
 *
 * <pre>{@code
 * { _id: {arbor: "lock"},
 *   arborLock: { epoch: "5d1c…",            set when the document is created
 *                version: 41,               +1 at every acquisition and every release
 *                owner: "9b1e…" | null,     the holder's token, one per acquisition
 *                lease: 30000, renewed: ISODate(…),   the holder's lease, by the server's clock
 *                what: "move 'x' to after(y)",
 *                op: 41, opt: "9b1e…",      the version and token whose journal is pending
 *                deleting: "9b1e…",         the holder sent deletes bounded by $$NOW (MongoDB)
 *                done: ["7c2a…", …],        tokens of the last 64 journals another completed
 *                                           or (on MongoDB) their writer released
 *                waiting: { "<token>": {at: ISODate(…), r: false, l: 30000}, … },   in arrival order
 *                stuck: {v, what, step, error} },     a journal the server refuses to complete
 *   arborJournal: { v: 41, what, parts: 0, steps: [ {k, q, u, …}, … ] } }
 * { _id: {arbor: "journal", v: 41, part: 0}, steps: [ … ] }     only for journals over 4 MB
 * }</pre>
 *
 * <p>A tree that shares its collection with others ({@link TreeOptions#withScope}) has its own
 * lock, journal parts and insert fences: their {@code _id}s carry {@code s: <scope value>} after
 * {@code arbor} ({@code {_id: {arbor: "lock", s: "acme"}, tenant: "acme", …}}), the documents
 * carry the scope field, and every filter of the protocol leads with the scope equality.
 *
 * <h2>Protocol</h2>
 *
 * <ol>
 *   <li><b>Acquire.</b> One {@code findOneAndUpdate} takes a free lock when nobody waits;
 *       otherwise the caller joins the queue and polls, each poll refreshing its entry and reading
 *       the server's time. Callers are served in arrival order; a waiting reader goes before the
 *       writers that follow the current holder. A holder whose lease has expired <i>by the server's
 *       clock</i> (its last {@code $currentDate} renewal plus its lease is before the server's
 *       now) is taken over with a compare-and-set on the version, the holder and the renewal seen
 *       expired (a holder that renewed meanwhile keeps its lock); if it left a journal, the new
 *       holder replays it first. Every acquisition has its own token.
 *   <li><b>Plan.</b> The store reads what it needs and plans its steps (see {@link Change}); a
 *       holder renews its lease before a read when a third of the lease has passed.
 *   <li><b>Write.</b> The journal and the steps are sent in ordered bulk writes, each led by a
 *       <i>fence</i>: an upsert of the lock document filtered by the holder's token, which renews
 *       the lease, and which meets a duplicate key — stopping the bulk write before any data write
 *       — when the holder no longer holds the lock. The first batch's fence also stores the
 *       journal: it is the commit point. A step marks what it writes and is guarded (see {@link
 *       Step}), so that replaying the journal from its first step finishes the change exactly.
 *       Each batch is sent with a server-side time limit shorter than the lease, so that no batch
 *       runs on after the lease it was fenced with has expired.
 *   <li><b>Release.</b> The last batch ends with the release, also fenced: a change that writes one
 *       document costs its reads plus one round trip, and no journal.
 * </ol>
 *
 * <p><b>Optimistic changes.</b> A store that last saw the tree quiet at version K plans without the
 * lock and sends its plan led by a <i>claim</i>: the lock is taken only if it is still free at
 * version K of the same epoch and nobody waits; otherwise nothing is written and the change runs
 * again under the lock. Reads made since version K were therefore made on a tree nobody changed.
 *
 * <p><b>A lost lock</b> (the fence meets a duplicate key) ends the change: if its journal was
 * written, the change is committed and is completed by whoever took the lock over, and the call
 * waits for that; otherwise nothing was written and the call throws {@link LockLostException}.
 * An I/O error while writing resends the same batch (the fence makes it safe) until the lock wait
 * runs out, then throws {@link ChangeInterruptedException} saying what became of the change.
 * What became of a change whose answer was lost is decided by tokens, never by a version another
 * change may share: the pending journal's token, the tokens of journals completed by others, the
 * token a change of one document marks it with, and the answer to the command of its step.
 *
 * <p><b>Limits.</b> The lease must be longer than the longest single read a planner makes.
 * Writes made to the collection by anything other than Arbor are not covered.
 *
 * <h2>Where each part is</h2>
 *
 * <p>This class is the facade the stores talk to, and holds the small values they share. The
 * machinery is in one class per concern: {@link LockDocument} (the lock document's fields,
 * reading, taking and freeing it), {@link LockQueue} (acquisition, the queue, takeovers, readers
 * waiting for a quiet tree), {@link Lease} (a hold's lease and its background renewal), {@link
 * Fences} (fences, claims, insert fences, deadlines), {@link PlanRunner} (a plan's program, from
 * lead to release), {@link Journal} (its encoding, parts and reading back), {@link Execution}
 * (the sending of a program and what became of it), {@link Replay} (completing a stopped
 * holder's or a stuck journal), {@link Loads} (bulk loads and grafts), {@link OrderedProbe}
 * (how the server runs ordered bulk writes) and {@link MongoErrors} (what a driver error means).
 */
public final class TreeLock {
  public static final BsonDocument LOCK_ID = new BsonDocument("arbor", new BsonString("lock"));
  public static final String STATE = "arborLock";
  public static final String JOURNAL = "arborJournal";
  public static final String PROBE = "arborProbe";

  /** One statement of a batch: a protocol statement, or step {@code step} (1-based) of a plan. */
  public record Statement(WriteModel<BsonDocument> model, int step) {
    public boolean isStep() {
      return step > 0;
    }
  }

  /** The statements sent in one ordered bulk write; the first is always a fence or a claim. */
  public record Batch(List<Statement> statements) {
    public List<WriteModel<BsonDocument>> models() {
      List<WriteModel<BsonDocument>> models = new ArrayList<>(statements.size());
      for (Statement s : statements) {
        models.add(s.model());
      }
      return models;
    }
  }

  /** Sends batches; tests replace it to stall or crash a holder at chosen statements. */
  public interface Sender {
    /** Sends one ordered bulk write. */
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, Batch batch);

    /**
     * Sends a fence as a command of its own and returns the lock document after it: on servers
     * that go on after a failed statement.
     */
    public default BsonDocument fence(MongoCollection<BsonDocument> collection, Bson filter,
        Bson update) {
      return collection.findOneAndUpdate(filter, update, new FindOneAndUpdateOptions()
          .upsert(true).returnDocument(ReturnDocument.AFTER)
          .projection(Projections.include(STATE)));
    }

    /**
     * Sends one {@code findOneAndUpdate} of a lane's ({@link Lanes}: the claim of its head, its
     * gate, a renewal of its lease) and returns the document it answers with, or null.
     */
    public default @Nullable BsonDocument exchange(MongoCollection<BsonDocument> collection,
        Bson filter, Bson update, FindOneAndUpdateOptions options) {
      return collection.findOneAndUpdate(filter, update, options);
    }
  }

  public static final Sender BULK = (collection, batch) -> collection.bulkWrite(batch.models());

  /** A version at which the tree was seen with no change in flight. */
  public record Quiet(String epoch, long version) {
    public boolean same(State s) {
      return s.quiet() && s.version == version && epoch.equals(s.epoch);
    }
  }

  /** A waiting caller. */
  record Waiter(String token, long at, boolean reader, long lease) {
    boolean live(long now) {
      return now - at <= Math.max(lease, 1_000);
    }
  }

  /** The lock document as read. */
  public static final class State {
    public final String epoch;
    public final long version;
    final @Nullable String owner;
    final long lease;
    final long renewed;
    final @Nullable String what;
    final long op;
    final @Nullable BsonDocument stuck;
    final Map<String, Waiter> waiting = new LinkedHashMap<>();
    final @Nullable String opToken;
    /** The holder that sent, or may have sent, delete commands ({@link LockDocument#DELETING}). */
    final @Nullable String deleting;
    /** Whether the lock document names lanes in flight ({@link Lanes}). */
    public final boolean lanes;
    /** The lanes in flight the lock document names: token to the id of the lane's head. */
    final Map<String, String> inFlight = new LinkedHashMap<>();
    /** The tokens of the latest changes completed by a caller other than their writer. */
    final java.util.Set<String> done = new java.util.HashSet<>();
    /** How many times lanes raised the version ({@link LockDocument#LANE_BUMPS}). */
    final long laneBumps;
    /** The latest raises of the version by lanes, oldest first ({@link LockDocument#LANE_LOG}). */
    final List<Lanes.Bump> laneLog = new ArrayList<>();

    public State(BsonDocument lockDocument) {
      BsonDocument s = lockDocument.getDocument(STATE, new BsonDocument());
      epoch = s.isString("epoch") ? s.getString("epoch").getValue() : "";
      version = s.isNumber("version") ? s.getNumber("version").longValue() : 0;
      owner = s.isString("owner") ? s.getString("owner").getValue() : null;
      lease = s.isNumber("lease") ? s.getNumber("lease").longValue() : 0;
      renewed = s.isDateTime("renewed") ? s.getDateTime("renewed").getValue() : 0;
      what = s.isString("what") ? s.getString("what").getValue() : null;
      op = s.isNumber("op") ? s.getNumber("op").longValue() : -1;
      opToken = s.isString("opt") ? s.getString("opt").getValue() : null;
      deleting = s.isString("deleting") ? s.getString("deleting").getValue() : null;
      if (s.isDocument("inflight")) {
        for (Map.Entry<String, BsonValue> e : s.getDocument("inflight").entrySet()) {
          inFlight.put(e.getKey(), e.getValue().isString() ? e.getValue().asString().getValue()
              : "");
        }
      }
      lanes = !inFlight.isEmpty();
      laneBumps = s.isNumber("laneBumps") ? s.getNumber("laneBumps").longValue() : 0;
      if (s.isArray("laneLog")) {
        for (BsonValue b : s.getArray("laneLog")) {
          laneLog.add(Lanes.Bump.of(b));
        }
      }
      stuck = s.isDocument("stuck") ? s.getDocument("stuck") : null;
      if (s.isArray("done")) {
        for (BsonValue d : s.getArray("done")) {
          if (d.isString()) {
            done.add(d.asString().getValue());
          }
        }
      }
      if (s.isDocument("waiting")) {
        for (Map.Entry<String, BsonValue> e : s.getDocument("waiting").entrySet()) {
          BsonDocument w = e.getValue().isDocument() ? e.getValue().asDocument()
              : new BsonDocument();
          waiting.put(e.getKey(), new Waiter(e.getKey(),
              w.isDateTime("at") ? w.getDateTime("at").getValue() : 0,
              w.isBoolean("r") && w.getBoolean("r").getValue(),
              w.isNumber("l") ? w.getNumber("l").longValue() : 0));
        }
      }
    }

    /**
     * Whether {@link #done} still holds every journal recorded there since the lock's version
     * was {@code v}: it keeps the last {@value LockDocument#DONE_KEPT}, and each record raised
     * the version at least once (lanes' releases raise it too, which only makes this false
     * sooner), so it does while the version rose fewer times since. (Not by the record's size: a
     * record that is not full does not prove that none was pushed out of it, as a lock document
     * whose record was cleared shows, ResentStepTest.aJournaledChangeWhoseRecordIsGone…)
     */
    boolean keepsDoneSince(long v) {
      return version - v < LockDocument.DONE_KEPT;
    }

    /** No change in flight and none stuck. */
    public boolean quiet() {
      return owner == null && stuck == null;
    }

    Quiet asQuiet() {
      return new Quiet(epoch, version);
    }

    boolean expired(long now) {
      return owner != null && renewed + lease < now;
    }

    boolean liveReaders(long now, String except) {
      for (Waiter w : waiting.values()) {
        if (w.reader() && w.live(now) && !w.token().equals(except)) {
          return true;
        }
      }
      return false;
    }

    boolean liveWriterBefore(String token, long now) {
      for (Waiter w : waiting.values()) {
        if (w.token().equals(token)) {
          return false;
        }
        if (!w.reader() && w.live(now)) {
          return true;
        }
      }
      return false;
    }
  }

  /**
   * A held lock: one acquisition, with its own token, and its {@link Lease}, renewed in the
   * background while the hold is open. Closing it stops the renewals.
   */
  public static final class Hold implements AutoCloseable {
    final String token;
    public final String epoch;
    public final long version;
    final String what;
    private final Lease lease;
    /** The insert fences this holder's load used. */
    int insertFences;
    /**
     * Insert fences of commands sent more than once (an answer lost): kept when the load ends,
     * since the first sending may still arrive, and the fence stops it.
     */
    final java.util.Set<BsonValue> resentFences = new java.util.HashSet<>();
    /**
     * How long a lease this hold was taken for, in ms (longer than the tree's for a caller who
     * completes a stopped holder's journal, {@link LockDocument#grown}).
     */
    final long leaseMillis;
    /**
     * The lease a load under this hold renews for, in ms: the hold's, grown ({@link
     * LockDocument#grown}) each time one of the load's smallest commands ran out of its time
     * limit ({@link Loads}). A load's commands all run under one hold; a change's execution grows
     * a lease of its own.
     */
    long loadLease;
    /**
     * The longest lease a load under this hold asked the lock document for, in ms: at least
     * {@link #loadLease}, longer while a renewal for a longer lease is unanswered (it may or may
     * not be stored; the next growth doubles it again, so that a renewal slower than its own
     * time limit still gets through).
     */
    long askedLease;

    public Hold(String token, String epoch, long version, String what, Lease lease,
        long leaseMillis) {
      this.token = token;
      this.epoch = epoch;
      this.version = version;
      this.what = what;
      this.lease = lease;
      this.leaseMillis = leaseMillis;
      this.loadLease = leaseMillis;
      this.askedLease = leaseMillis;
    }

    /** Renews the lease if a third of it has passed since the last renewal. */
    public void renewIfDue() {
      lease.renewIfDue();
    }

    /**
     * Renews the lease.
     *
     * @throws LockLostException if this holder no longer holds the lock
     */
    void renew() {
      lease.renew();
    }

    /** Notes a renewal made by a fence of this holder's own writes. */
    void renewed() {
      lease.renewed();
    }

    /** Stops renewing this hold's lease. */
    @Override
    public void close() {
      lease.close();
    }
  }

  /** What running a plan did. */
  public record Result(long version, long deleted) {}

  /** Thrown inside when an optimistic claim found the tree changed; nothing was written. */
  static final class ClaimRefused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ClaimRefused() {
      super(null, null, false, false);
    }
  }

  /**
   * Insert fences that guard nothing any more are deleted {@value #FENCE_SWEEP} at a time, in one
   * command (see {@link PlanRunner}).
   */
  public static final int FENCE_SWEEP = 32;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TreeLock.class);

  /** What sends the protocol's batches and fences ({@link #BULK}; tests inject faulty ones). */
  final Sender sender;
  /** The most statements in one batch (tests lower it to make changes of several batches). */
  final int batchStatements;
  /** Journals up to this size go into the lock document; larger ones into journal documents. */
  final int inlineJournalBytes;
  /** Where takeovers, replays, stuck changes and long waits are logged (tests record it). */
  final org.slf4j.Logger log;
  /**
   * Whether holds renew their leases in the background. Tests that model a paused process (whose
   * every thread stops) turn it off, so that a stalled holder's lease expires.
   */
  final boolean keepAlive;
  /**
   * The lanes of the tree when its store runs changes in them ({@link LaneProtocol}), set once
   * when the store is opened: whoever takes the lock then waits for them to drain.
   */
  public volatile @Nullable Lanes lanes;
  /** How many expired holders this lock took over (tests and logs). */
  public final AtomicLong takeovers = new AtomicLong();

  public final LockDocument lock;
  final OrderedProbe probe;
  final Fences fences;
  final LockQueue queue;
  final PlanRunner plans;
  final Replay replay;
  final Loads loads;

  /**
   * @param raw the tree's collection, with majority write concern and primary reads
   * @param scope the tree of the collection this lock is of, or null: the collection holds one
   * @param renewals what renews the leases of this lock's holds in the background
   * @param sender what sends the protocol's batches and fences to the server
   * @param batchStatements the most statements in one batch
   * @param inlineJournalBytes the largest journal kept in the lock document
   * @param log where takeovers, replays, stuck changes and long waits are logged; null: this
   *     class's logger
   * @param keepAlive whether holds renew their leases in the background
   */
  public TreeLock(MongoCollection<BsonDocument> raw, @Nullable Scope scope, long leaseMillis,
      long waitMillis, Timing timing, LeaseScheduler renewals, Sender sender,
      int batchStatements, int inlineJournalBytes, org.slf4j.@Nullable Logger log,
      boolean keepAlive) {
    this.log = log != null ? log : LOG;
    this.keepAlive = keepAlive;
    this.sender = sender;
    this.batchStatements = batchStatements;
    this.inlineJournalBytes = inlineJournalBytes;
    this.lock = new LockDocument(raw, scope, leaseMillis, waitMillis, timing);
    this.probe = new OrderedProbe(lock);
    this.fences = new Fences(lock, probe);
    this.queue = new LockQueue(this, lock, renewals);
    Journal journal = new Journal(this, lock);
    this.plans = new PlanRunner(this, lock, fences, journal);
    this.replay = new Replay(this, lock, journal);
    this.loads = new Loads(this, lock, fences);
  }

  long leaseMillis() {
    return lock.leaseMillis;
  }

  /** The tree of the collection this lock is of, or null. */
  public @Nullable Scope scope() {
    return lock.scope;
  }

  /** The filter of the lock document (with the scope equality for a scoped tree). */
  Bson lockKey() {
    return lock.lockKey();
  }

  /** Reads the lock document (creating it on first use). */
  public State read() {
    return lock.read();
  }

  /** The change version recorded in a node document's mark, 0 if none. */
  static long markOf(Document d) {
    Object mark = d.get(Step.MARK);
    return mark instanceof Document m && m.get("v") instanceof Number n ? n.longValue() : 0;
  }

  // ------------------------------------------------------------------ holding the lock

  /**
   * Takes the lock, waiting in line behind earlier callers, taking over an expired holder and
   * finishing its journal.
   *
   * @throws TreeException if the lock is not had within the lock wait, or the tree is stuck
   */
  public Hold acquire(String what) {
    Hold h = queue.acquire(what);
    Lanes l = lanes;
    if (l != null) {
      try {
        l.drain(h);
      } catch (RuntimeException e) {
        release(h);
        throw e;
      }
    }
    return h;
  }

  /** Frees the lock, clearing a journal that is not to be completed. */
  public void release(Hold h) {
    queue.release(h);
  }

  /** Finishes an interrupted change, if any, taking and releasing the lock. */
  public void recover() {
    release(acquire("recover"));
  }

  // ------------------------------------------------------------------ readers

  /**
   * Waits, in line as a reader, until no change is in flight, taking over an expired holder and
   * finishing its journal. The caller reads, then {@linkplain #unregister leaves the queue}.
   */
  State awaitQuiet(String token) {
    return queue.awaitQuiet(token);
  }

  /** Leaves the queue. */
  void unregister(String token) {
    queue.unregister(token);
  }

  /** A new token for a reader's place in the queue. */
  String readerToken() {
    return LockDocument.newToken();
  }

  /** Throws if the tree is stuck. */
  void checkNotStuck(State s) {
    if (s.stuck != null) {
      throw lock.stuck(s.stuck);
    }
  }

  // ------------------------------------------------------------------ running a plan

  /** Skips the probe of {@link #ordered()} (tests count the round trips a MongoDB server gets). */
  public void assumeOrdered(boolean ordered) {
    probe.assume(ordered);
  }

  /** Whether the server stops an ordered bulk write at its first error ({@link OrderedProbe}). */
  public boolean ordered() {
    return probe.ordered();
  }

  /**
   * Runs a plan under the hold: journal (unless it is one single-document step), steps, release.
   */
  Result run(Hold h, List<Step> steps) {
    try {
      return plans.run(h.token, h.token, null, h.version, h.what, steps, true, true, h);
    } finally {
      h.close();
    }
  }

  /**
   * Runs a plan made without the lock at quiet version {@code known}, led by a claim.
   *
   * @throws ClaimRefused if the tree changed since {@code known}, or callers wait; nothing written
   */
  Result runClaimed(Quiet known, String what, List<Step> steps) {
    String token = LockDocument.newToken();
    return plans.run(token, token, known, known.version() + 1, what, steps, true, true, null);
  }

  /** Whether a plan needs no journal: one step that writes one document. */
  static boolean atomic(List<Step> steps) {
    return PlanRunner.atomic(steps);
  }

  // ------------------------------------------------------------------ loads (see Loads)

  public void beginLoad(Hold h) {
    loads.beginLoad(h);
  }

  public void loadBatch(Hold h, List<BsonDocument> documents) {
    loads.loadBatch(h, documents);
  }

  public void loadUpdates(Hold h, List<WriteModel<BsonDocument>> updates) {
    loads.loadUpdates(h, updates);
  }

  public Result commitLoad(Hold h, List<Step> steps) {
    return loads.commitLoad(h, steps);
  }

  public void endLoad(Hold h) {
    loads.endLoad(h);
  }

  public void abortLoad(Hold h) {
    loads.abortLoad(h);
  }

  // ------------------------------------------------------------------ stuck journals

  /**
   * Completes a stuck journal if the server now accepts its steps.
   *
   * @return null when the tree is not (or no longer) stuck, else what still stops it
   */
  public @Nullable String retryStuck() {
    return replay.retryStuck();
  }

  // ------------------------------------------------------------------ errors (see MongoErrors)

  public static boolean duplicateId(BulkWriteError error) {
    return MongoErrors.duplicateId(error);
  }

  public static boolean transientError(MongoException e) {
    return MongoErrors.transientError(e);
  }
}
