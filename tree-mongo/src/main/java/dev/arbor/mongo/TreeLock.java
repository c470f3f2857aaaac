package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.or;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.LockLostException;
import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
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
 *                done: ["7c2a…", …],        tokens of the last 64 journals another completed
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
 */
final class TreeLock {
  static final BsonDocument LOCK_ID = new BsonDocument("arbor", new BsonString("lock"));
  static final String STATE = "arborLock";
  static final String JOURNAL = "arborJournal";

  private static final String EPOCH = STATE + ".epoch";
  private static final String VERSION = STATE + ".version";
  private static final String OWNER = STATE + ".owner";
  private static final String LEASE = STATE + ".lease";
  private static final String RENEWED = STATE + ".renewed";
  private static final String WHAT = STATE + ".what";
  private static final String OP = STATE + ".op";
  private static final String WAITING = STATE + ".waiting";
  private static final String STUCK = STATE + ".stuck";
  private static final String DONE = STATE + ".done";
  /** The token of the change whose journal is pending (with {@link #OP}, its version). */
  private static final String OP_TOKEN = STATE + ".opt";
  static final String PROBE = "arborProbe";

  /** One statement of a batch: a protocol statement, or step {@code step} (1-based) of a plan. */
  record Statement(WriteModel<BsonDocument> model, int step) {
    boolean isStep() {
      return step > 0;
    }
  }

  /** The statements sent in one ordered bulk write; the first is always a fence or a claim. */
  record Batch(List<Statement> statements) {
    List<WriteModel<BsonDocument>> models() {
      List<WriteModel<BsonDocument>> models = new ArrayList<>(statements.size());
      for (Statement s : statements) {
        models.add(s.model());
      }
      return models;
    }
  }

  /** Sends batches; tests replace it to stall or crash a holder at chosen statements. */
  interface Sender {
    /** Sends one ordered bulk write. */
    BulkWriteResult send(MongoCollection<BsonDocument> collection, Batch batch);

    /**
     * Sends a fence as a command of its own and returns the lock document after it: on servers
     * that go on after a failed statement.
     */
    default BsonDocument fence(MongoCollection<BsonDocument> collection, Bson filter,
        Bson update) {
      return collection.findOneAndUpdate(filter, update, new FindOneAndUpdateOptions()
          .upsert(true).returnDocument(ReturnDocument.AFTER)
          .projection(Projections.include(STATE)));
    }
  }

  static final Sender BULK = (collection, batch) -> collection.bulkWrite(batch.models());

  /** A version at which the tree was seen with no change in flight. */
  record Quiet(String epoch, long version) {
    boolean same(State s) {
      return s.quiet() && s.version == version && epoch.equals(s.epoch);
    }
  }

  private final MongoCollection<BsonDocument> raw;
  private final @Nullable Scope scope;
  private final BsonDocument lockId;
  private final String tree;
  private final long leaseMillis;
  private final long waitMillis;
  private final Timing timing;
  private final LeaseScheduler renewals;
  volatile Sender sender = BULK;
  /** The most statements in one batch (tests lower it to make changes of several batches). */
  volatile int batchStatements = Encoded.MAX_BATCH_COUNT;
  /** Journals up to this size go into the lock document; larger ones into journal documents. */
  volatile int inlineJournalBytes = 4_000_000;
  /** Called with the version of every change once it is complete (tests record commit order). */
  volatile LongConsumer onCommitted = v -> {};
  private volatile @Nullable Boolean ordered;
  /** Where takeovers, replays, stuck changes and long waits are logged (tests record it). */
  volatile org.slf4j.Logger log = LOG;
  /** Lock waits longer than this are logged. */
  static final long LONG_WAIT_MILLIS = 1_000;
  /**
   * Whether holds renew their leases in the background. Tests that model a paused process (whose
   * every thread stops) turn it off, so that a stalled holder's lease expires.
   */
  volatile boolean keepAlive = true;
  /** How many expired holders this lock took over (tests and logs). */
  final java.util.concurrent.atomic.AtomicLong takeovers = new java.util.concurrent.atomic
      .AtomicLong();

  /**
   * @param raw the tree's collection, with majority write concern and primary reads
   */
  TreeLock(MongoCollection<BsonDocument> raw, long leaseMillis, long waitMillis, Timing timing) {
    this(raw, null, leaseMillis, waitMillis, timing, LeaseScheduler.SYSTEM);
  }

  /**
   * @param raw the tree's collection, with majority write concern and primary reads
   * @param scope the tree of the collection this lock is of, or null: the collection holds one
   */
  TreeLock(MongoCollection<BsonDocument> raw, @Nullable Scope scope, long leaseMillis,
      long waitMillis, Timing timing, LeaseScheduler renewals) {
    this.renewals = renewals;
    // Every command of the protocol is bounded (CSOT: the driver sends the server a time limit
    // and gives up waiting for the answer), so that a majority write on a replica set that cannot
    // reach a majority, or a stalled connection, ends in an error the protocol resolves (see
    // Execution) instead of blocking forever. Fenced batches are bounded tighter, by the lease.
    this.raw = raw.withTimeout(commandLimit(leaseMillis, waitMillis), TimeUnit.MILLISECONDS);
    this.scope = scope;
    this.lockId = scope == null ? LOCK_ID : scope.ownKey("lock");
    this.tree = raw.getNamespace().getFullName()
        + (scope == null ? "" : " [" + scope + "]");
    this.leaseMillis = leaseMillis;
    this.waitMillis = waitMillis;
    this.timing = timing;
  }

  long leaseMillis() {
    return leaseMillis;
  }

  /**
   * The time limit of one command of the protocol: shorter than the lock wait (so that a caller
   * resends it, or gives up, within its wait), and at least a lease.
   */
  static long commandLimit(long leaseMillis, long waitMillis) {
    return Math.max(leaseMillis, Math.min(waitMillis / 2, 10_000));
  }

  /** The tree of the collection this lock is of, or null. */
  @Nullable Scope scope() {
    return scope;
  }

  /** The filter of the lock document (with the scope equality for a scoped tree). */
  Bson lockKey() {
    return scoped(eq("_id", lockId));
  }

  /** {@code filter} restricted to the tree's documents (itself for an unscoped tree). */
  private Bson scoped(Bson filter) {
    return scope == null ? filter : and(eq(scope.field(), scope.value()), filter);
  }

  /** The {@code _id} of one of the tree's own documents of this kind. */
  private BsonDocument own(String kind) {
    return scope == null ? new BsonDocument("arbor", new BsonString(kind)) : scope.ownKey(kind);
  }

  /** One of the tree's own documents, carrying the scope field in a scoped tree. */
  private BsonDocument tagged(BsonDocument d) {
    return scope == null ? d : scope.tagged(d);
  }

  // ------------------------------------------------------------------ state

  /** A waiting caller. */
  record Waiter(String token, long at, boolean reader, long lease) {
    boolean live(long now) {
      return now - at <= Math.max(lease, 1_000);
    }
  }

  /** The lock document as read. */
  static final class State {
    final String epoch;
    final long version;
    final @Nullable String owner;
    final long lease;
    final long renewed;
    final @Nullable String what;
    final long op;
    final @Nullable BsonDocument stuck;
    final Map<String, Waiter> waiting = new LinkedHashMap<>();
    final @Nullable String opToken;
    /** The tokens of the latest changes completed by a caller other than their writer. */
    final java.util.Set<String> done = new java.util.HashSet<>();

    State(BsonDocument lockDocument) {
      BsonDocument s = lockDocument.getDocument(STATE, new BsonDocument());
      epoch = s.isString("epoch") ? s.getString("epoch").getValue() : "";
      version = s.isNumber("version") ? s.getNumber("version").longValue() : 0;
      owner = s.isString("owner") ? s.getString("owner").getValue() : null;
      lease = s.isNumber("lease") ? s.getNumber("lease").longValue() : 0;
      renewed = s.isDateTime("renewed") ? s.getDateTime("renewed").getValue() : 0;
      what = s.isString("what") ? s.getString("what").getValue() : null;
      op = s.isNumber("op") ? s.getNumber("op").longValue() : -1;
      opToken = s.isString("opt") ? s.getString("opt").getValue() : null;
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

    /** No change in flight and none stuck. */
    boolean quiet() {
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
   * Reads the lock document (creating it on first use).
   */
  State read() {
    BsonDocument d = raw.find(lockKey()).projection(Projections.include(STATE)).first();
    if (d == null) {
      try {
        raw.updateOne(lockKey(), Updates.combine(
                Updates.setOnInsert(EPOCH, UUID.randomUUID().toString()),
                Updates.setOnInsert(VERSION, 0L)),
            new UpdateOptions().upsert(true));
      } catch (MongoException e) {
        if (!duplicateKey(e)) {
          throw e;
        }
        // another first user created it at the same moment: it exists now
      }
      d = raw.find(lockKey()).projection(Projections.include(STATE)).first();
    }
    return new State(d);
  }

  /** The change version recorded in a node document's mark, 0 if none. */
  static long markOf(Document d) {
    Object mark = d.get(Step.MARK);
    return mark instanceof Document m && m.get("v") instanceof Number n ? n.longValue() : 0;
  }

  // ------------------------------------------------------------------ holding the lock

  /**
   * A held lock: one acquisition, with its own token. While it is open, a background task renews
   * its lease every third of the lease (unless the holder renewed it meanwhile), so that a live
   * holder keeps its lock for as long as its call runs, however slow its round trips; a holder
   * that stops (a crash, a pause of its process, a partition) stops renewing, and its lease
   * expires. Closing it stops the renewals; so does the end of the thread that took it.
   */
  final class Hold implements AutoCloseable {
    final String token;
    final String epoch;
    final long version;
    final String what;
    private volatile long renewedAt;
    private final Thread thread = Thread.currentThread();
    private volatile java.util.concurrent.@Nullable Future<?> renewal;
    /** The insert fences this holder's load used. */
    int insertFences;

    Hold(String token, String epoch, long version, String what) {
      this.token = token;
      this.epoch = epoch;
      this.version = version;
      this.what = what;
      this.renewedAt = timing.nanoTime();
      if (keepAlive) {
        long period = Math.max(1, leaseMillis / 3);
        renewal = renewals.every(period, this::renewInBackground);
      }
    }

    private boolean due() {
      return timing.nanoTime() - renewedAt > TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 3;
    }

    /** Renews the lease if a third of it has passed since the last renewal. */
    void renewIfDue() {
      if (due()) {
        renew();
      }
    }

    /**
     * Renews the lease.
     *
     * @throws LockLostException if this holder no longer holds the lock
     */
    void renew() {
      if (!renewOnServer()) {
        throw lostTo(what, read());
      }
    }

    private boolean renewOnServer() {
      if (raw.updateOne(and(lockKey(), eq(OWNER, token)),
          Updates.currentDate(RENEWED)).getMatchedCount() == 0) {
        return false;
      }
      renewedAt = timing.nanoTime();
      return true;
    }

    private void renewInBackground() {
      if (!thread.isAlive()) {
        close();
        return;
      }
      if (!due()) {
        return;
      }
      try {
        if (!renewOnServer()) {
          close(); // lost: the holder's next fenced write finds out
        }
      } catch (RuntimeException e) {
        // tried again at the next period; the holder's own writes report a lasting failure
      }
    }

    private void renewed() {
      renewedAt = timing.nanoTime();
    }

    /** Stops renewing this hold's lease. */
    @Override
    public void close() {
      java.util.concurrent.Future<?> r = renewal;
      if (r != null) {
        r.cancel(false);
        renewal = null;
      }
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TreeLock.class);

  /** The lock is lost: {@code s}, read after, names another holder, or none. */
  private LockLostException lostTo(String what, State s) {
    return new LockLostException("Lost the lock of tree '" + tree + "' while doing: " + what
        + " (its lease of " + leaseMillis + " ms expired and "
        + (s.owner != null ? "another caller holds the lock, doing: " + s.what
            : "another caller took the lock over, and has released it since")
        + "); nothing of this change was written");
  }

  private static String newToken() {
    return UUID.randomUUID().toString().replace("-", "");
  }

  /**
   * Takes the lock, waiting in line behind earlier callers, taking over an expired holder and
   * finishing its journal.
   *
   * @throws TreeException if the lock is not had within the lock wait, or the tree is stuck
   */
  Hold acquire(String what) {
    String token = newToken();
    long start = timing.nanoTime();
    for (boolean queue = false; !queue; ) {
      try {
        BsonDocument after = raw.findOneAndUpdate(
            and(lockKey(), eq(OWNER, null), in(WAITING, BsonNull.VALUE, new BsonDocument()),
                eq(STUCK, null)),
            take(token, what, Updates.inc(VERSION, 1L),
                Updates.setOnInsert(EPOCH, UUID.randomUUID().toString())),
            new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
                .projection(Projections.include(STATE)));
        State taken = new State(after);
        return new Hold(token, taken.epoch, taken.version, what);
      } catch (MongoException e) {
        if (duplicateKey(e)) {
          queue = true; // taken, or callers wait: join the line
        } else {
          // Its answer lost: the lock document tells whether the acquisition landed.
          Hold h = afterUncertain(e, token, what, null, start);
          if (h != null) {
            return h;
          }
        }
      }
    }
    long seen = -1;
    try {
      for (int attempt = 0; ; attempt++) {
        State s;
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
          throw stuck(s.stuck);
        }
        if ((s.owner != null && !s.expired(now)) || s.liveReaders(now, token)
            || s.liveWriterBefore(token, now)) {
          pause(attempt, start, s);
          continue;
        }
        Hold h;
        try {
          h = takeOver(s, token, what, now);
        } catch (MongoException e) {
          h = afterUncertain(e, token, what, s, start);
        }
        if (h != null) {
          waited(start, what);
          return h;
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
   * @return the hold, or null to try again
   * @throws ChangeInterruptedException ({@code NOT_APPLIED}) once the lock wait has run out
   */
  private @Nullable Hold afterUncertain(MongoException e, String token, String what,
      @Nullable State from, long start) {
    if (!transientError(e)) {
      throw e;
    }
    State now;
    try {
      now = read();
    } catch (MongoException again) {
      retryPause(again, start, what);
      return null;
    }
    if (!token.equals(now.owner)) {
      retryPause(e, start, what);
      return null;
    }
    Hold h = new Hold(token, now.epoch, now.version, what);
    if (from != null && from.op >= 0 && now.op == from.op) {
      try {
        if (!replay(h, from.op)) {
          h.close();
          return null;
        }
      } catch (RuntimeException failed) {
        h.close();
        throw failed;
      }
    }
    return h;
  }

  /**
   * Pauses before a command is sent again after the transient error {@code e}; once the lock
   * wait has run out since {@code start}, throws what {@code givingUp} makes of {@code e}.
   */
  private void retryPause(MongoException e, long start,
      java.util.function.Function<MongoException, RuntimeException> givingUp) {
    if (!transientError(e)) {
      throw e;
    }
    if (timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(waitMillis)) {
      throw givingUp.apply(e);
    }
    sleep(Math.min(100, Math.max(1, leaseMillis / 10)));
  }

  /** Pauses before an acquisition's command is sent again; nothing of the change is written. */
  private void retryPause(MongoException e, long start, String what) {
    retryPause(e, start, cause -> new ChangeInterruptedException("Could not take the lock of"
        + " tree '" + tree + "' to do: " + what + " (" + cause.getMessage() + "); nothing of it"
        + " was written", Outcome.NOT_APPLIED, cause));
  }

  private Bson take(String token, String what, Bson... more) {
    List<Bson> updates = new ArrayList<>(List.of(Updates.set(OWNER, token),
        Updates.set(LEASE, leaseMillis), Updates.set(WHAT, what), Updates.currentDate(RENEWED)));
    updates.addAll(List.of(more));
    return Updates.combine(updates);
  }

  /**
   * Takes the lock from the state {@code s} (free, or held by an expired holder) with a
   * compare-and-set on its version; replays the journal the previous holder left.
   *
   * @return the hold, or null if the state changed meanwhile
   */
  private @Nullable Hold takeOver(State s, String token, String what, long now) {
    List<Bson> updates = new ArrayList<>();
    updates.add(Updates.inc(VERSION, 1L));
    updates.add(Updates.unset(WAITING + "." + token));
    for (Waiter w : s.waiting.values()) {
      if (!w.live(now) && !w.token().equals(token)) {
        updates.add(Updates.unset(WAITING + "." + w.token()));
      }
    }
    // A compare-and-set on the state this caller saw: the version, the holder and, for a holder
    // whose lease it saw expired, the renewal it saw expired. A holder that renewed since (its
    // background renewal, or the fence of its next batch) keeps its lock. (Before the next
    // millisecond, not equal: a server may keep the time of $currentDate finer than BSON's.)
    Bson unchanged = s.owner == null
        ? and(lockKey(), eq(VERSION, s.version), eq(OWNER, null))
        : and(lockKey(), eq(VERSION, s.version), eq(OWNER, s.owner),
            Filters.lt(RENEWED, new BsonDateTime(s.renewed + 1)), eq(LEASE, s.lease));
    BsonDocument before = raw.findOneAndUpdate(unchanged,
        take(token, what, updates.toArray(new Bson[0])),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.BEFORE)
            .projection(Projections.include(STATE)));
    if (before == null) {
      return null;
    }
    State previous = new State(before);
    Hold h = new Hold(token, previous.epoch, previous.version + 1, what);
    try {
      if (previous.owner != null) {
        takeovers.incrementAndGet();
        log.warn("Tree '{}': took the lock over from a holder whose lease of {} ms expired"
            + " while doing: {}", tree, previous.lease, previous.what);
        revokeInserts(previous.version); // a stalled holder's insert commands cannot land now
      }
      if (previous.op >= 0 && !replay(h, previous.op)) {
        h.close(); // another caller took this one over during the replay, and completed it
        return null;
      }
      return h;
    } catch (RuntimeException e) {
      h.close();
      throw e;
    }
  }

  /** Joins or stays in the queue: refreshes this caller's entry and reads the lock document. */
  private State poll(String token, boolean reader) {
    BsonDocument d = raw.findOneAndUpdate(lockKey(), Updates.combine(
            Updates.currentDate(WAITING + "." + token + ".at"),
            Updates.set(WAITING + "." + token + ".r", reader),
            Updates.set(WAITING + "." + token + ".l", leaseMillis)),
        new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(STATE)));
    return new State(d);
  }

  /** Leaves the queue. */
  void unregister(String token) {
    try {
      raw.updateOne(lockKey(), Updates.unset(WAITING + "." + token));
    } catch (MongoException e) {
      // best effort: an entry that is not refreshed is skipped once its lease has passed
    }
  }

  private void waited(long start, String what) {
    long millis = TimeUnit.NANOSECONDS.toMillis(timing.nanoTime() - start);
    if (millis > LONG_WAIT_MILLIS && log.isInfoEnabled()) {
      log.info("Tree '{}': waited {} ms for the lock to do: {}", tree, millis, what);
    }
  }

  /**
   * The longest pause between two polls of a waiting caller. Pauses start at 1 ms and double
   * while the lock stays as it was; they start again at 1 ms each time the lock changes hands,
   * so that a caller next in line notices its turn within a few ms of a short change.
   */
  static final long MAX_PAUSE_MILLIS = 16;

  private void pause(int attempt, long start, State s) {
    if (timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(waitMillis)) {
      throw new TreeException("Tree '" + tree + "' stayed locked for more than " + waitMillis
          + " ms (" + (s.owner == null ? "waiting for earlier callers" : "holder doing: "
              + s.what) + ")");
    }
    sleep(Math.max(1, Math.min(Math.min(MAX_PAUSE_MILLIS, leaseMillis / 4),
        1L << Math.min(attempt, 6))));
  }

  private void sleep(long millis) {
    try {
      timing.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TreeException("Interrupted while waiting for the lock of tree '" + tree + "'", e);
    }
  }

  /** Frees the lock, clearing a journal that is not to be completed. */
  void release(Hold h) {
    h.close();
    releaseQuietly(h.token);
  }

  private static Bson releaseUpdate() {
    return Updates.combine(Updates.set(OWNER, null), Updates.set(WHAT, null),
        Updates.inc(VERSION, 1L), Updates.unset(OP), Updates.unset(OP_TOKEN),
        Updates.unset(JOURNAL));
  }

  /** Finishes an interrupted change, if any, taking and releasing the lock. */
  void recover() {
    release(acquire("recover"));
  }

  // ------------------------------------------------------------------ readers

  /**
   * Waits, in line as a reader, until no change is in flight, taking over an expired holder and
   * finishing its journal. The caller reads, then {@linkplain #unregister leaves the queue}.
   */
  State awaitQuiet(String token) {
    long start = timing.nanoTime();
    long seen = -1;
    for (int attempt = 0; ; attempt++) {
      State s = poll(token, true);
      if (s.version != seen) {
        seen = s.version;
        attempt = 0;
      }
      if (s.stuck != null) {
        throw stuck(s.stuck);
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
  private boolean recoverExpired(State s, long now) {
    if (!s.expired(now)) {
      return false;
    }
    Hold h = takeOver(s, newToken(), "recover", now);
    if (h != null) {
      release(h);
    }
    return true;
  }

  /** A new token for a reader's place in the queue. */
  String readerToken() {
    return newToken();
  }

  /** Throws if the tree is stuck. */
  void checkNotStuck(State s) {
    if (s.stuck != null) {
      throw stuck(s.stuck);
    }
  }

  // ------------------------------------------------------------------ running a plan

  /** What running a plan did. */
  record Result(long version, long deleted) {}

  /** Thrown inside when an optimistic claim found the tree changed; nothing was written. */
  static final class ClaimRefused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ClaimRefused() {
      super(null, null, false, false);
    }
  }

  /** Ends an execution whose change was completed, by this caller or by another. */
  private static final class Completed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Completed() {
      super(null, null, false, false);
    }
  }

  /**
   * Whether the server stops an ordered bulk write at its first error <i>within</i> one command,
   * as MongoDB does. mongo-java-server goes on with the statements after a failed one; there the
   * lead (claim or fence) of a batch is sent as a command of its own, one round trip more per
   * change. Probed once on the lock document: a failing fence followed by a harmless update.
   */
  /** Skips the probe (tests count the round trips a MongoDB server would get). */
  void assumeOrdered(boolean ordered) {
    this.ordered = ordered;
  }

  boolean ordered() {
    Boolean known = ordered;
    long start = timing.nanoTime();
    while (known == null) {
      try {
        known = probeOrdered();
      } catch (MongoException e) {
        retryPause(e, start, cause -> new ChangeInterruptedException("Could not probe the server"
            + " of tree '" + tree + "' (" + cause.getMessage() + "); nothing was written",
            Outcome.NOT_APPLIED, cause));
      }
    }
    return known;
  }

  /** The probe of {@link #ordered()}: each probe writes a field of its own, so it can be sent again. */
  private boolean probeOrdered() {
    read(); // the lock document exists from here on
    // Each probe writes a field of its own: probes of other stores (or threads) sent at the
    // same time neither hide nor fake this one's harmless update.
    String token = newToken();
    String mine = PROBE + "." + token;
    try {
      raw.bulkWrite(List.of(
          new UpdateOneModel<>(and(lockKey(), eq(OWNER, "probe-" + token)),
              Updates.set(STATE + ".probe", token), new UpdateOptions().upsert(true)),
          new UpdateOneModel<>(lockKey(), Updates.set(mine, true))));
    } catch (MongoBulkWriteException expected) {
      // the fence failed, as intended
    }
    BsonDocument d = raw.find(lockKey()).projection(Projections.include(mine)).first();
    boolean ranOn = d != null && d.isDocument(PROBE) && d.getDocument(PROBE)
        .containsKey(token);
    if (ranOn) {
      raw.updateOne(lockKey(), Updates.unset(mine));
    }
    ordered = !ranOn;
    return !ranOn;
  }

  /**
   * Runs a plan under the hold: journal (unless it is one single-document step), steps, release.
   */
  Result run(Hold h, List<Step> steps) {
    try {
      Result r = run(h.token, h.token, null, h.version, h.what, steps, true, true, h);
      onCommitted.accept(r.version());
      return r;
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
    String token = newToken();
    Result r = run(token, token, known, known.version() + 1, what, steps, true, true, null);
    onCommitted.accept(r.version());
    return r;
  }

  /** Whether a plan needs no journal: one step that writes one document. */
  static boolean atomic(List<Step> steps) {
    if (steps.size() != 1) {
      return false;
    }
    Step s = steps.get(0);
    return s instanceof Step.Insert || (s instanceof Step.Update u && !u.multi())
        || (s instanceof Step.Delete d && !d.multi());
  }

  private Result run(String token, String origin, @Nullable Quiet claim, long v, String what,
      List<Step> steps, boolean journal, boolean release, @Nullable Hold hold) {
    return run(token, origin, claim, v, what, steps, journal, release, hold, false);
  }

  /**
   * @param token the token of the acquisition that writes
   * @param origin the token of the change's writer, which its journal names: {@code token}, or
   *     for a replay the token of the holder that stopped
   */
  private Result run(String token, String origin, @Nullable Quiet claim, long v, String what,
      List<Step> steps, boolean journal, boolean release, @Nullable Hold hold,
      boolean alwaysJournal) {
    // A replay (journal false, release false) runs a journal that is already stored.
    boolean writeJournal = journal && (alwaysJournal || !atomic(steps));
    boolean journaled = writeJournal || !release;
    List<Statement> program = new ArrayList<>();
    List<BsonDocument> parts = new ArrayList<>();
    BsonDocument header = null;
    if (writeJournal) {
      BsonArray encoded = new BsonArray();
      long total = 0;
      for (Step s : steps) {
        BsonDocument e = s.encode();
        int size = Encoded.size(e);
        if (size > Encoded.MAX_STEP) {
          throw new TreeException("A step of '" + what + "' would be " + size + " bytes of BSON,"
              + " more than the " + Encoded.MAX_STEP + " Arbor sends in one statement");
        }
        encoded.add(e);
        total += size;
      }
      header = new BsonDocument("v", new BsonInt64(v)).append("what", new BsonString(what))
          .append("t", new BsonString(origin));
      if (total <= inlineJournalBytes) {
        header.append("parts", new BsonInt32(0)).append("steps", encoded);
      } else {
        parts = journalParts(v, encoded);
        header.append("parts", new BsonInt32(parts.size()));
      }
    }
    boolean inline = writeJournal && parts.isEmpty();
    Bson lead = inline ? Updates.combine(Updates.set(JOURNAL, header), Updates.set(OP, v),
        Updates.set(OP_TOKEN, origin)) : null;
    program.add(new Statement(claim != null ? claimStatement(claim, token, v, what, lead)
        : fence(token, lead), 0));
    for (BsonDocument part : parts) {
      // Filtered by the scope too: the upsert then stores the scope field, so that a replay
      // (which reads parts within the tree's scope) finds it, and a sharded collection routes it.
      program.add(new Statement(new UpdateOneModel<>(scoped(eq("_id", part.get("_id"))),
          new BsonDocument("$setOnInsert", new BsonDocument("steps", part.get("steps"))),
          new UpdateOptions().upsert(true)), 0));
    }
    if (writeJournal && !inline) {
      program.add(new Statement(fence(token,
          Updates.combine(Updates.set(JOURNAL, header), Updates.set(OP, v),
              Updates.set(OP_TOKEN, origin))), 0));
    }
    int commitPoint = writeJournal ? program.size() - 1 : journaled ? 0 : program.size();
    boolean orderedServer = ordered();
    for (int k = 0; k < steps.size(); k++) {
      Step step = steps.get(k);
      program.add(new Statement(!orderedServer && step instanceof Step.Insert i
          ? i.insertModel(v, k + 1, journaled ? null : origin)
          : step.model(v, k + 1, journaled ? null : origin), k + 1));
    }
    // A replay records the change it completed, so that its first holder, if it lost the answer
    // to its commit, can tell that it is done.
    program.add(new Statement(fence(token, release ? releaseUpdate()
        : Updates.combine(Updates.unset(OP), Updates.unset(OP_TOKEN), Updates.unset(JOURNAL),
            Updates.pushEach(DONE, List.of(origin),
                new com.mongodb.client.model.PushOptions().slice(-64)))), 0));
    Execution x = new Execution(token, origin, claim, v, what, steps, program, commitPoint,
        journaled, hold);
    x.freeOnFailure = journal && !alwaysJournal;
    long deleted;
    try {
      deleted = x.execute();
    } catch (Completed c) {
      deleted = -1; // completed by another caller: the count is not known here
    } catch (MongoException e) {
      throw x.failed(e);
    }
    if (!x.fences.isEmpty() && !x.resent) {
      // Every command these fences guarded was answered (none was resent after an I/O error),
      // so none can still arrive: they guard nothing now, and go in the next sweep.
      sweep(x.fences);
    }
    if (!parts.isEmpty()) {
      List<BsonValue> ids = new ArrayList<>();
      for (BsonDocument part : parts) {
        ids.add(part.get("_id"));
      }
      raw.deleteMany(scoped(in("_id", ids)));
    }
    return new Result(v, deleted);
  }

  /**
   * Insert fences that guard nothing any more are deleted {@value #FENCE_SWEEP} at a time, in one
   * command: a change on the embedded server pays no round trip of its own for them.
   */
  static final int FENCE_SWEEP = 32;

  private final java.util.concurrent.ConcurrentLinkedQueue<BsonValue> spentFences =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  private void sweep(List<BsonValue> fences) {
    spentFences.addAll(fences);
    if (spentFences.size() < FENCE_SWEEP) {
      return;
    }
    List<BsonValue> ids = new ArrayList<>();
    for (BsonValue id; ids.size() < 4 * FENCE_SWEEP && (id = spentFences.poll()) != null; ) {
      ids.add(id);
    }
    if (ids.isEmpty()) {
      return;
    }
    try {
      raw.deleteMany(scoped(in("_id", ids)));
    } catch (MongoException e) {
      // left in place: harmless, and skipped by every query of nodes
    }
  }

  private List<BsonDocument> journalParts(long v, BsonArray encoded) {
    List<BsonDocument> parts = new ArrayList<>();
    BsonArray chunk = new BsonArray();
    long bytes = 0;
    int limit = Math.max(1, Math.min(inlineJournalBytes, 4_000_000));
    for (BsonValue step : encoded) {
      int size = Encoded.size(step.asDocument());
      if (bytes + size > limit && !chunk.isEmpty()) {
        parts.add(journalPart(v, parts.size(), chunk));
        chunk = new BsonArray();
        bytes = 0;
      }
      chunk.add(step);
      bytes += size;
    }
    parts.add(journalPart(v, parts.size(), chunk));
    return parts;
  }

  private BsonDocument partId(long v, int part) {
    return own("journal").append("v", new BsonInt64(v))
        .append("part", new BsonInt32(part));
  }

  private BsonDocument journalPart(long v, int part, BsonArray steps) {
    return tagged(new BsonDocument("_id", partId(v, part)).append("steps", steps));
  }

  /**
   * The collection with a time limit shorter than the lease: the server stops a batch that would
   * run on after the lease it was fenced with has expired (the fence renews it as the batch
   * starts).
   */
  private MongoCollection<BsonDocument> timed() {
    if (!ordered()) {
      // There every update and delete of a batch is bounded by the server's clock instead (it
      // applies only before its fence's lease ends; an insert is fenced by its insert fence): a
      // slow batch changes nothing late, and needs no time limit of its own.
      return raw;
    }
    return raw.withTimeout(Math.max(1, leaseMillis - Math.max(1, leaseMillis / 10)),
        TimeUnit.MILLISECONDS);
  }

  /** A fence: renews the lease and applies {@code more}, or fails with a duplicate key. */
  private WriteModel<BsonDocument> fence(String token, @Nullable Bson more) {
    Bson update = Updates.combine(Updates.currentDate(RENEWED), Updates.set(LEASE, leaseMillis));
    if (more != null) {
      update = Updates.combine(update, more);
    }
    return new UpdateOneModel<>(and(lockKey(), eq(OWNER, token)), update,
        new UpdateOptions().upsert(true));
  }

  /**
   * A claim: takes the lock if it is still free at version {@code known} and nobody waits (or if
   * this token already took it: a resent claim), or fails with a duplicate key.
   */
  private WriteModel<BsonDocument> claimStatement(Quiet known, String token, long v, String what,
      @Nullable Bson more) {
    Bson free = and(eq(EPOCH, known.epoch()), eq(VERSION, known.version()), eq(OWNER, null),
        in(WAITING, BsonNull.VALUE, new BsonDocument()), eq(STUCK, null));
    Bson update = take(token, what, Updates.set(VERSION, v));
    if (more != null) {
      update = Updates.combine(update, more);
    }
    return new UpdateOneModel<>(and(lockKey(), or(free, eq(OWNER, token))), update,
        new UpdateOptions().upsert(true));
  }

  /** The kind of command the driver sends a statement in: 0 update, 1 insert, 2 delete. */
  private static int kind(Statement s) {
    WriteModel<BsonDocument> m = s.model();
    return m instanceof InsertOneModel ? 1
        : m instanceof DeleteManyModel || m instanceof DeleteOneModel ? 2 : 0;
  }

  /** {@code filter}, matching only while the server's clock is before {@code deadline}. */
  private static BsonDocument before(Bson filter, long deadline) {
    return new BsonDocument("$and", new BsonArray(List.of(
        filter.toBsonDocument(BsonDocument.class, com.mongodb.MongoClientSettings
            .getDefaultCodecRegistry()),
        new BsonDocument("$expr", new BsonDocument("$lt", new BsonArray(List.of(
            new BsonString("$$NOW"), new BsonDateTime(deadline))))))));
  }

  /** A statement that applies only while the server's clock is before {@code deadline}. */
  private static WriteModel<BsonDocument> withDeadline(WriteModel<BsonDocument> m,
      long deadline) {
    if (m instanceof UpdateOneModel<BsonDocument> u) {
      if (u.getOptions().isUpsert() && isInsert(u.getFilter())) {
        return u; // an insert of a node: runs once whatever the clock (see the class javadoc)
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

  /**
   * The sending of one program.
   *
   * <p>On a server that stops an ordered bulk write at its first error (MongoDB), statements go
   * in ordered bulk writes of one kind each: updates (with the lead, the journal, inserts as
   * upserts, the release) led by a fence, so that the server stops before the first data write
   * when this caller no longer holds the lock; deletes, which the driver sends as a command of
   * their own, guarded so that one that arrives late deletes nothing a later change wrote.
   *
   * <p>On a server that goes on after a failed statement (mongo-java-server), each batch is
   * preceded by a fence of its own ({@code findOneAndUpdate}), which tells the server's time of
   * the renewal; every update and delete of the batch then applies only before that time plus the
   * lease, and the batch ends with a fence bounded the same way: a batch sent late changes
   * nothing, and is sent again behind a new fence if this caller still holds the lock.
   */
  private final class Execution {
    final String token;
    final String origin;
    final @Nullable Quiet claim;
    final long v;
    final String what;
    final List<Step> steps;
    final List<Statement> program;
    final int commitPoint;
    final boolean journaled;
    final @Nullable Hold hold;
    final boolean orderedServer = ordered();
    boolean committed;
    boolean uncertain;
    long deleted;
    /** On a server that goes on after errors: when the lease of the last fence ends. */
    long deadline;
    /** Insert fences used by this acquisition so far, when no hold counts them. */
    int insertFences;
    /** When the last lone fence was sent (local clock), 0: never. */
    long fencedAt;
    /** The ids of the insert fences this execution inserted. */
    final List<BsonValue> fences = new ArrayList<>();
    /** Whether a command was sent again after an I/O error (the first may still arrive). */
    boolean resent;
    /** Whether the server acknowledged the lead (claim or first fence) of the program. */
    boolean leadAcked;
    /** Whether the single step of a change without journal ran, when its answer said so. */
    @Nullable Boolean stepApplied;
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

    Execution(String token, String origin, @Nullable Quiet claim, long v, String what,
        List<Step> steps, List<Statement> program, int commitPoint, boolean journaled,
        @Nullable Hold hold) {
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
    }

    /** The acquisition this execution writes under, which its insert fences name. */
    private long writer() {
      return hold != null ? hold.version : v;
    }

    private int nextInsertFence() {
      return hold != null ? hold.insertFences++ : insertFences++;
    }

    long execute() {
      long start = timing.nanoTime();
      int next = 0;
      while (next < program.size()) {
        int kind = kind(program.get(next));
        boolean fresh = fencedAt != 0 && timing.nanoTime() - fencedAt
            < TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 3;
        if (!orderedServer && (next == 0 || (kind != 1 && !fresh))) {
          next = loneFence(next, start);
          if (next >= program.size()) {
            break;
          }
          kind = kind(program.get(next));
        }
        List<Statement> batch = new ArrayList<>();
        List<Integer> index = new ArrayList<>();
        if (kind == 1) {
          // An insert command is led by an insert fence, which a caller who took the lock over
          // has taken first: then the command stops before its first insert.
          BsonDocument fenceId = insertFence(writer(), nextInsertFence());
          fences.add(fenceId);
          batch.add(new Statement(new InsertOneModel<>(tagged(new BsonDocument("_id",
              fenceId))), 0));
          index.add(-1);
        } else if (orderedServer) {
          if (next == 0) {
            batch.add(program.get(0));
            index.add(0);
            next = 1;
          } else if (kind == 0 && next != program.size() - 1) {
            batch.add(new Statement(fence(token, null), 0));
            index.add(-1);
          }
        }
        long bytes = 0;
        int lead = batch.size();
        while (next < program.size() && batch.size() < batchStatements
            && (batch.size() - lead < limit || batch.size() == lead)
            && kind(program.get(next)) == kind) {
          Statement s = program.get(next);
          long size = s.isStep() ? steps.get(s.step() - 1).size() : 1_024;
          if (batch.size() > 1 && bytes + size > Encoded.MAX_BATCH) {
            break;
          }
          batch.add(orderedServer || kind == 1 ? s
              : new Statement(withDeadline(s.model(), deadline), s.step()));
          index.add(next);
          bytes += size;
          next++;
        }
        if (kind == 2 && next == program.size() - 1) {
          // the release follows the last deletes in the same call (a command of its own), and
          // closes the batch
          batch.add(orderedServer ? program.get(next) : new Statement(
              withDeadline(program.get(next).model(), deadline), 0));
          index.add(next);
          next++;
        }
        if (!orderedServer && kind != 1 && index.get(index.size() - 1) != program.size() - 1) {
          // closes the batch: it fails if the batch ran on past the lease
          batch.add(new Statement(new UpdateOneModel<>(before(and(lockKey(),
              eq(OWNER, token)), deadline), Updates.currentDate(RENEWED),
              new UpdateOptions().upsert(true)), 0));
          index.add(-2);
        }
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

    /**
     * On a server that goes on after errors: sends the lead (at the start) or a renewal as a
     * command of its own, and learns from it until when the lease holds.
     *
     * @return the program index to go on from
     */
    private int loneFence(int next, long start) {
      UpdateOneModel<BsonDocument> m = (UpdateOneModel<BsonDocument>) (next == 0
          ? program.get(0).model() : fence(token, null));
      for (;;) {
        try {
          fencedAt = timing.nanoTime();
          BsonDocument after = sender.fence(timed(), m.getFilter(), m.getUpdate());
          State s = new State(after);
          deadline = s.renewed + leaseMillis;
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
          if (!duplicateKey(e)) {
            throw e;
          }
          if (next == 0 && claim != null && !uncertain) {
            throw new ClaimRefused();
          }
          return settleLost();
        } catch (MongoException e) {
          if (!transientError(e)) {
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

    private void retryAfter(MongoException e, long start) {
      resent = true;
      if (timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(waitMillis)) {
        throw interrupted(e, false);
      }
      sleep(Math.min(100, Math.max(1, leaseMillis / 10)));
    }

    /**
     * Sends one batch.
     *
     * @return the program index to go on from, or -1 to go on after the batch
     */
    private int send(List<Statement> batch, List<Integer> index, long start) {
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
      try {
        BulkWriteResult r = sender.send(timed(), new Batch(batch));
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
          if (last >= commitPoint) {
            uncertain = true;
          }
          retryAfter(e, start);
          return first;
        }
        BulkWriteError error = e.getWriteErrors().get(0);
        int i = error.getIndex();
        int at = index.get(i);
        if (!journaled && index.contains(1)) {
          // The single step of a change without journal was in this command: its answer says
          // whether it ran, which its document may no longer tell once a later change rewrote it.
          stepApplied = Boolean.TRUE.equals(stepApplied)
              || (orderedServer ? index.indexOf(1) < i : ranAlone(e, index.indexOf(1)));
        }
        if (index.subList(0, i).contains(0)) {
          leadAcked = true;
        }
        if (at > commitPoint && journaled) {
          committed = true;
        }
        if (at == -2 || (!orderedServer && at == program.size() - 1)) {
          // The closing fence of a batch on a server that goes on after errors: the batch ran
          // past the lease (its late statements changed nothing) or the lock was lost.
          if (duplicateKey(error.getCode()) && stillHeld()) {
            return first; // behind a new fence, all of it again: its steps are guarded
          }
          if (!duplicateKey(error.getCode())) {
            throw e;
          }
          return settleLost();
        }
        if (i == 0 && at == -1 && kind(batch.get(0)) == 1) {
          if (!duplicateKey(error.getCode())) {
            throw e;
          }
          return settleLost(); // the insert fence was taken: another caller took the lock over
        }
        if (i == 0 && (at == 0 || at == -1)) {
          if (at == 0 && claim != null && !uncertain && duplicateKey(error.getCode())) {
            throw new ClaimRefused();
          }
          if (!duplicateKey(error.getCode())) {
            throw e;
          }
          return settleLost();
        }
        Statement s = batch.get(i);
        if (!s.isStep()) {
          if (duplicateKey(error.getCode())) {
            return settleLost(); // the release after the steps: the change is done
          }
          throw e;
        }
        if (kind(s) == 1 && duplicateKey(error.getCode()) && (uncertain || replaying())) {
          return at + 1; // inserted by an earlier send, or by the change being replayed
        }
        return failStep(s.step(), error, e);
      } catch (MongoException e) {
        if (!transientError(e)) {
          throw e;
        }
        if (last >= commitPoint) {
          uncertain = true;
        }
        if (timedOut(e)) {
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
    private RuntimeException failed(MongoException e) {
      if (committed || uncertain) {
        return interrupted(e, false);
      }
      if (freeOnFailure && (leadAcked || hold != null)) {
        releaseQuietly(token);
      }
      if (transientError(e)) {
        return interrupted(e, false);
      }
      return new TreeException("Tree '" + tree + "': the server refused '" + what + "': "
          + e.getMessage() + "; nothing was written", e);
    }

    /** The change cannot go on: says what became of it, as far as this caller can tell. */
    private ChangeInterruptedException interrupted(RuntimeException e, boolean sentCommit) {
      Outcome outcome = committed ? Outcome.COMMITTED
          : uncertain || sentCommit ? Outcome.UNKNOWN : Outcome.NOT_APPLIED;
      return new ChangeInterruptedException("Could not complete '" + what + "' on tree '" + tree
          + "': " + e.getMessage() + (outcome == Outcome.COMMITTED
              ? "; its journal is stored and the next access to the tree completes it" : ""),
          outcome, e);
    }

    /** Whether this caller's token still holds the lock (its lease may have run out). */
    private boolean stillHeld() {
      BsonDocument d = raw.find(lockKey()).projection(Projections.include(OWNER))
          .first();
      return d != null && new State(d).owner != null && new State(d).owner.equals(token);
    }

    private boolean replaying() {
      return claim == null && hold != null && hold.version != v;
    }

    /**
     * A fence or the claim met a duplicate key: the lock document no longer names this caller's
     * token. What became of the change is decided from the lock document (the pending journal's
     * version and token, the tokens of journals completed by others) and, for a change of one
     * step, from the mark of the document it writes; never from the version alone, which another
     * change may share with a claim that did not land.
     */
    private int settleLost() {
      if (journaled) {
        State s = read();
        if (s.op == v && origin.equals(s.opToken)) {
          awaitCompletion(v, origin, what);
          throw new Completed();
        }
        if (s.done.contains(origin)) {
          throw new Completed(); // its commit went through; the caller who took over completed it
        }
        if (committed) {
          // Its journal was stored and is no longer pending: a journal is only ever cleared by
          // completing it (or stuck, which the read above would have shown as pending).
          throw new Completed();
        }
        if (claim != null && !leadAcked) {
          throw new ClaimRefused(); // the claim never landed: nothing was written
        }
        throw lostTo(what, s);
      }
      // What the answer to its command said, else (and for an insert told refused, to be sure)
      // what its document says.
      Boolean applied = Boolean.TRUE.equals(stepApplied) ? Boolean.TRUE
          : stepApplied != null && !(steps.get(0) instanceof Step.Insert) ? Boolean.FALSE
          : appliedAlone();
      if (committed || Boolean.TRUE.equals(applied)) {
        // committed: the batch with the single step was acknowledged whole, so the step ran
        // inside the lease (on a server that goes on after errors, the batch's closing deadline
        // fence matched after it).
        throw new Completed();
      }
      if (applied == null) {
        throw new ChangeInterruptedException("Could not tell whether '" + what + "' on tree '"
            + tree + "' was applied: the lock was taken over and a later change rewrote the"
            + " document it writes; read the tree", Outcome.UNKNOWN, null);
      }
      if (claim != null && !leadAcked) {
        throw new ClaimRefused(); // nothing was written: plan again under the lock
      }
      throw lostTo(what, read());
    }

    /**
     * Whether the single step of a change without journal ran, from the answer to the command
     * that carried it on a server that goes on after a failed statement: the batch held the step
     * (bounded by its deadline) and the release, which failed, so the counts are the step's.
     */
    private boolean ranAlone(MongoBulkWriteException e, int at) {
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

    /**
     * Whether the single step of an unjournaled change is in the tree: true if the document
     * bears its mark (with this change's token), false if it bears an earlier one, null if a
     * later change rewrote (or deleted) it since.
     */
    private @Nullable Boolean appliedAlone() {
      Step step = steps.get(0);
      BsonDocument filter = step instanceof Step.Insert i ? i.key()
          : step instanceof Step.Update u ? u.filter() : ((Step.Delete) step).filter();
      BsonDocument d = raw.find(filter).first();
      if (step instanceof Step.Delete) {
        return d == null ? null : Boolean.FALSE;
      }
      if (d == null) {
        return step instanceof Step.Insert ? Boolean.FALSE : null;
      }
      BsonDocument mark = d.isDocument(Step.MARK) ? d.getDocument(Step.MARK) : new BsonDocument();
      long marked = mark.isNumber("v") ? mark.getNumber("v").longValue() : 0;
      if (marked == v && mark.isString("t")) {
        return origin.equals(mark.getString("t").getValue()) ? Boolean.TRUE
            : uncertain ? null : Boolean.FALSE;
      }
      return marked > v ? null : Boolean.FALSE;
    }

    /** A step the server refuses. */
    private int failStep(int step, BulkWriteError error, MongoBulkWriteException e) {
      String reason = "step " + step + " of " + steps.size() + " of '" + what + "' was refused"
          + " by the server: " + error.getMessage();
      if (!journaled) {
        release(token);
        throw new TreeException("Tree '" + tree + "': " + reason + "; nothing was written", e);
      }
      Step s = steps.get(step - 1);
      boolean single = s instanceof Step.Insert || (s instanceof Step.Update u && !u.multi());
      if (step == 1 && single && !uncertain && !replaying()) {
        release(token); // clears the journal: nothing of the change was written
        throw new TreeException("Tree '" + tree + "': " + reason + "; nothing was written", e);
      }
      BsonDocument stuck = new BsonDocument("v", new BsonInt64(v))
          .append("what", new BsonString(what)).append("step", new BsonInt32(step))
          .append("steps", new BsonInt32(steps.size()))
          .append("error", new BsonString(error.getMessage()));
      raw.updateOne(and(lockKey(), eq(OWNER, token)), Updates.combine(
          Updates.set(STUCK, stuck), Updates.set(OWNER, null), Updates.inc(VERSION, 1L)));
      log.error("Tree '{}' is stuck: {}; repair() completes it once the cause is removed", tree,
          reason);
      throw stuck(stuck);
    }
  }

  private void release(String token) {
    raw.updateOne(and(lockKey(), eq(OWNER, token)), releaseUpdate());
  }

  /** Frees the lock if {@code token} holds it, best effort (else its lease runs out). */
  private void releaseQuietly(String token) {
    try {
      release(token);
    } catch (MongoException e) {
      // the lease frees it
    }
  }

  /**
   * Waits until the journal of change {@code v} is no longer pending, finishing it if its holder
   * stopped.
   */
  private void awaitCompletion(long v, String origin, String what) {
    long start = timing.nanoTime();
    String token = newToken();
    try {
      for (int attempt = 0; ; attempt++) {
        State s = poll(token, true);
        if (s.stuck != null && s.stuck.isNumber("v") && s.stuck.getNumber("v").longValue() == v) {
          throw stuck(s.stuck);
        }
        if (s.op != v || !origin.equals(s.opToken)) {
          return;
        }
        if (recoverExpired(s, s.waiting.get(token).at())) {
          continue; // its holder stopped too: this caller completed the journal itself
        }
        if (timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(waitMillis)) {
          throw new ChangeInterruptedException("'" + what + "' on tree '" + tree + "' is"
              + " committed but another caller is still completing it", Outcome.COMMITTED, null);
        }
        pause(attempt, start, s);
      }
    } finally {
      unregister(token);
    }
  }

  /** Replays the journal of change {@code op} under the hold, then clears it. */
  private boolean replay(Hold h, long op) {
    BsonDocument d = raw.find(lockKey()).projection(Projections.include(JOURNAL))
        .first();
    BsonDocument journal = d == null ? null : d.getDocument(JOURNAL, null);
    if (journal == null || !journal.isNumber("v") || journal.getNumber("v").longValue() != op) {
      raw.updateOne(and(lockKey(), eq(OWNER, h.token)), Updates.combine(Updates.unset(OP),
          Updates.unset(OP_TOKEN)));
      return true;
    }
    log.info("Tree '{}': completing the journal of '{}' (change {}), left by a holder that"
        + " stopped", tree, journal.get("what") instanceof BsonString w ? w.getValue() : "?", op);
    List<Step> steps = new ArrayList<>();
    int parts = journal.getInt32("parts", new BsonInt32(0)).getValue();
    if (parts == 0) {
      for (BsonValue step : journal.getArray("steps", new BsonArray())) {
        steps.add(Step.decode(step.asDocument()));
      }
    } else {
      List<BsonValue> ids = new ArrayList<>();
      for (int p = 0; p < parts; p++) {
        ids.add(partId(op, p));
      }
      Map<BsonValue, BsonDocument> found = new LinkedHashMap<>();
      for (BsonDocument part : raw.find(scoped(in("_id", ids)))) {
        found.put(part.get("_id"), part);
      }
      for (BsonValue id : ids) {
        BsonDocument part = found.get(id);
        if (part == null) {
          throw new TreeException("Tree '" + tree + "': the journal of '"
              + journal.getString("what", new BsonString("?")).getValue()
              + "' lacks its part " + id + "; run repair()");
        }
        for (BsonValue step : part.getArray("steps")) {
          steps.add(Step.decode(step.asDocument()));
        }
      }
    }
    String what = journal.getString("what", new BsonString("a change")).getValue();
    String origin = journal.getString("t", new BsonString("")).getValue();
    boolean mine = run(h.token, origin, null, op, what, steps, false, false, h).deleted() >= 0;
    if (mine) {
      onCommitted.accept(op);
    }
    if (parts > 0) {
      List<BsonValue> ids = new ArrayList<>();
      for (int p = 0; p < parts; p++) {
        ids.add(partId(op, p));
      }
      raw.deleteMany(scoped(in("_id", ids)));
    }
    return mine;
  }

  // ------------------------------------------------------------------ loads

  /**
   * Starts a bulk load under the hold: a journal whose only step deletes every document this load
   * inserts (they carry its mark), so that a load interrupted half-way is undone by the next
   * access. The documents then go in with {@link #loadBatch}, one fenced batch at a time.
   */
  void beginLoad(Hold h) {
    BsonDocument loaded = new BsonDocument(Step.MARK + ".v", new BsonInt64(h.version));
    Step undo = new Step.Delete(scope == null ? loaded : scope.equality().append("$and",
        new BsonArray(List.of(loaded))), true);
    BsonDocument header = new BsonDocument("v", new BsonInt64(h.version))
        .append("what", new BsonString(h.what)).append("t", new BsonString(h.token))
        .append("parts", new BsonInt32(0)).append("steps", new BsonArray(List.of(undo.encode())));
    sendFenced(h, List.of(fence(h.token, Updates.combine(Updates.set(JOURNAL, header),
        Updates.set(OP, h.version), Updates.set(OP_TOKEN, h.token)))));
  }

  /**
   * The id of the {@code b}-th insert fence of change {@code v}: a load's insert commands start
   * with the insert of the next one, so that a caller who takes the lock over can stop the rest by
   * taking the next number first ({@link #revokeInserts}).
   */
  private BsonDocument insertFence(long v, int b) {
    return own("fence").append("v", new BsonInt64(v))
        .append("b", new BsonInt32(b));
  }

  /**
   * The ids of the insert fences of {@code h}'s load: those it used, and the next, which a caller
   * who took the lock over may have taken ({@link #revokeInserts}). By id, so that the {@code
   * _id} index finds them on any server.
   */
  private List<BsonDocument> insertFences(Hold h) {
    List<BsonDocument> out = new ArrayList<>(h.insertFences + 1);
    for (int b = 0; b <= h.insertFences; b++) {
      out.add(insertFence(h.version, b));
    }
    return out;
  }

  /**
   * Inserts one batch of a load, marked by the caller, in one insert command led by the next insert fence of
   * this load; the lease is renewed first when a third of it has passed.
   */
  void loadBatch(Hold h, List<BsonDocument> documents) {
    h.renewIfDue();
    List<WriteModel<BsonDocument>> inserts = new ArrayList<>(documents.size() + 1);
    inserts.add(new InsertOneModel<>(tagged(new BsonDocument("_id", insertFence(h.version,
        h.insertFences++)))));
    for (BsonDocument d : documents) {
      inserts.add(new InsertOneModel<>(d)); // marked by the caller
    }
    sendFenced(h, inserts);
  }

  /**
   * Sends updates of documents this load inserted earlier (a nested set's {@code right}, the rest
   * of a {@code children} array), in one update command led by a fence; each update must be
   * idempotent, as a command is sent again after a transient error.
   */
  void loadUpdates(Hold h, List<WriteModel<BsonDocument>> updates) {
    h.renewIfDue();
    List<WriteModel<BsonDocument>> writes = new ArrayList<>(updates.size() + 1);
    writes.add(fence(h.token, null));
    writes.addAll(updates);
    sendFenced(h, writes);
  }

  /**
   * Completes a graft: its documents are in, under the load's undo journal; the journal of {@code
   * steps} (the writes of existing documents that make the new ones part of the tree) replaces the
   * undo in one fenced write, the commit point, and the steps run as a change's do. Before the
   * commit point an interrupted graft is undone by the next access; after it, completed.
   */
  Result commitLoad(Hold h, List<Step> steps) {
    raw.deleteMany(scoped(in("_id", insertFences(h))));
    try {
      Result r = run(h.token, h.token, null, h.version, h.what, steps, true, true, h, true);
      onCommitted.accept(r.version());
      return r;
    } finally {
      h.close();
    }
  }

  /** Completes a load: clears its journal and its insert fences, frees the lock. */
  void endLoad(Hold h) {
    try {
      sendFenced(h, List.of(fence(h.token, null)));
      deleteInsertFences(h);
      releaseLoad(h);
    } finally {
      h.close();
    }
    onCommitted.accept(h.version);
  }

  /**
   * Deletes the insert fences of {@code h}'s load, which guard nothing once its last insert
   * command was answered. Best effort: one left behind is harmless (no query of nodes sees it).
   */
  private void deleteInsertFences(Hold h) {
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        raw.deleteMany(scoped(in("_id", insertFences(h))));
        return;
      } catch (MongoException e) {
        if (!transientError(e)) {
          return;
        }
      }
    }
  }

  /**
   * The fenced release of a load, its commit: after an uncertain answer (an I/O error, a
   * timeout) the lock document says what became of it: released by this holder (the load
   * stands), or taken over and its undo journal replayed (nothing of it stands).
   */
  private void releaseLoad(Hold h) {
    try {
      sendFenced(h, List.of(fence(h.token, releaseUpdate())));
    } catch (LockLostException e) {
      if (!releaseLanded(h)) {
        throw e;
      }
    } catch (ChangeInterruptedException e) {
      throw new ChangeInterruptedException("Could not tell whether '" + h.what + "' on tree '"
          + tree + "' was committed: its release was sent but not answered ("
          + e.getMessage() + "); read the tree", Outcome.UNKNOWN, e.getCause());
    }
  }

  /** Whether the release of {@code h}'s load landed (its fence, resent, then found it gone). */
  private boolean releaseLanded(Hold h) {
    State s = read();
    if (s.op == h.version && h.token.equals(s.opToken)) {
      awaitCompletion(h.version, h.token, h.what); // the undo of a holder taken over
      return false;
    }
    if (s.done.contains(h.token)) {
      return false; // its undo was completed by the caller who took it over
    }
    return s.version > h.version && !h.token.equals(s.owner);
  }

  /** Abandons a load that failed: its documents are deleted, the lock freed. */
  void abortLoad(Hold h) {
    h.close();
    try {
      raw.bulkWrite(List.of(fence(h.token, null)));
      raw.deleteMany(scoped(new BsonDocument(Step.MARK + ".v", new BsonInt64(h.version))));
      raw.bulkWrite(List.of(fence(h.token, releaseUpdate())));
    } catch (MongoException e) {
      // the journal undoes the load at the next access
    }
  }

  /**
   * Stops the insert commands that the holder of change {@code v} may still have in flight: takes
   * the next number of its insert fences, so that its next insert command fails before writing.
   */
  private void revokeInserts(long v) {
    for (int attempt = 0; attempt < 100; attempt++) {
      BsonDocument last = raw.find(scoped(and(Filters.gte("_id", insertFence(v, Integer.MIN_VALUE)),
              Filters.lte("_id", insertFence(v, Integer.MAX_VALUE)))))
          .sort(new BsonDocument("_id", new BsonInt32(-1))).limit(1).first();
      int next = last == null ? 0 : last.getDocument("_id").getInt32("b").getValue() + 1;
      try {
        raw.insertOne(tagged(new BsonDocument("_id", insertFence(v, next))));
        return;
      } catch (MongoWriteException e) {
        if (!duplicateKey(e)) {
          throw e;
        }
      }
    }
  }

  /**
   * Sends one batch of a load led by a fence (an update fence, or an insert fence for inserts),
   * again after a transient error. When the fence then meets a duplicate key, the lock document
   * decides: if it still names this holder, the fence was its own first attempt's, whose inserts
   * may have landed: those marked by this load are left out and the rest sent behind a new
   * insert fence. Only a lock document that names another holder means the lock was lost.
   */
  private void sendFenced(Hold h, List<WriteModel<BsonDocument>> writes) {
    boolean inserts = writes.get(0) instanceof InsertOneModel;
    List<WriteModel<BsonDocument>> pending = writes;
    int[] original = null; // the index in writes of each statement of pending, once rebuilt
    boolean resent = false;
    long start = timing.nanoTime();
    for (;;) {
      List<Statement> batch = new ArrayList<>(pending.size());
      for (WriteModel<BsonDocument> w : pending) {
        // The first statement is a fence; a load's documents and late updates follow it.
        batch.add(new Statement(w, w instanceof InsertOneModel || !batch.isEmpty() ? 1 : 0));
      }
      try {
        sender.send(timed(), new Batch(batch));
        if (!inserts) {
          h.renewed();
        }
        return;
      } catch (MongoBulkWriteException e) {
        if (e.getWriteErrors().isEmpty()) { // a write-concern error alone: may be rolled back
          resent = true;
          retryPause(e, start);
          continue;
        }
        BulkWriteError error = e.getWriteErrors().get(0);
        boolean duplicate = duplicateId(error);
        if (duplicate && (error.getIndex() == 0 || (resent && inserts))) {
          State s = read();
          if (!h.token.equals(s.owner)) {
            throw lostTo(h.what, s);
          }
          int[] sent = original == null ? identity(pending.size()) : original;
          if (inserts && (error.getIndex() == 0
              || ownInsert(h, pending.get(error.getIndex())))) {
            // Still this holder's: its earlier attempt took the fence, and maybe inserted some
            // of the documents. Send the rest behind a fresh insert fence.
            original = remaining(h, writes, sent);
            if (original.length == 0) {
              return;
            }
            pending = new ArrayList<>(original.length + 1);
            pending.add(new InsertOneModel<>(tagged(new BsonDocument("_id",
                insertFence(h.version, h.insertFences++)))));
            for (int k : original) {
              pending.add(writes.get(k));
            }
            original = prepend(original);
            continue;
          }
        }
        if (original != null) {
          throw renumbered(e, error, original);
        }
        throw e;
      } catch (MongoException e) {
        if (!transientError(e)) {
          throw e;
        }
        resent = true;
        retryPause(e, start);
        int[] sent = original == null ? identity(pending.size()) : original;
        if (inserts && timedOut(e) && sent.length > 3) {
          // Too slow for its lease: what did not land goes again in two halves.
          State s = read();
          if (!h.token.equals(s.owner)) {
            throw lostTo(h.what, s);
          }
          int[] rest = remaining(h, writes, sent);
          int half = rest.length / 2;
          sendPart(h, writes, java.util.Arrays.copyOfRange(rest, 0, half));
          sendPart(h, writes, java.util.Arrays.copyOfRange(rest, half, rest.length));
          return;
        }
      }
    }
  }

  /**
   * Sends the documents {@code part} (indexes in {@code writes}) of a load batch behind a fresh
   * insert fence; a refused statement is named by its index in {@code writes}.
   */
  private void sendPart(Hold h, List<WriteModel<BsonDocument>> writes, int[] part) {
    if (part.length == 0) {
      return;
    }
    List<WriteModel<BsonDocument>> sub = new ArrayList<>(part.length + 1);
    sub.add(new InsertOneModel<>(tagged(new BsonDocument("_id",
        insertFence(h.version, h.insertFences++)))));
    for (int k : part) {
      sub.add(writes.get(k));
    }
    try {
      sendFenced(h, sub);
    } catch (MongoBulkWriteException e) {
      if (e.getWriteErrors().isEmpty()) {
        throw e;
      }
      throw renumbered(e, e.getWriteErrors().get(0), prepend(part));
    }
  }

  /** Pauses before a load's batch is sent again; before its release nothing of it stands. */
  private void retryPause(MongoException e, long start) {
    retryPause(e, start, cause -> new ChangeInterruptedException("Could not send a batch to tree"
        + " '" + tree + "' (" + cause.getMessage() + "); nothing of the load stands: its journal"
        + " undoes it at the next access", Outcome.NOT_APPLIED, cause));
  }

  private static int[] identity(int n) {
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = i;
    }
    return out;
  }

  /** {@code indexes} without its first entry (the old fence) — of the documents, with 0 dropped. */
  private static int[] prepend(int[] documents) {
    int[] out = new int[documents.length + 1];
    out[0] = 0;
    System.arraycopy(documents, 0, out, 1, documents.length);
    return out;
  }

  /** Whether the document an insert statement inserts is stored with this load's mark. */
  private boolean ownInsert(Hold h, WriteModel<BsonDocument> insert) {
    return insert instanceof InsertOneModel<BsonDocument> i
        && raw.find(scoped(and(eq("_id", i.getDocument().get("_id")),
            eq(Step.MARK + ".v", h.version)))).first() != null;
  }

  /**
   * The indexes in {@code writes} of the documents of a load batch that are not stored yet with
   * this load's mark, among those of {@code sent} (index 0, the fence, is left out).
   */
  private int[] remaining(Hold h, List<WriteModel<BsonDocument>> writes, int[] sent) {
    List<BsonValue> ids = new ArrayList<>();
    for (int k : sent) {
      if (k > 0) {
        ids.add(((InsertOneModel<BsonDocument>) writes.get(k)).getDocument().get("_id"));
      }
    }
    java.util.Set<BsonValue> landed = new java.util.HashSet<>();
    for (BsonDocument d : raw.find(scoped(and(in("_id", ids),
            eq(Step.MARK + ".v", h.version)))).projection(Projections.include("_id"))) {
      landed.add(d.get("_id"));
    }
    List<Integer> out = new ArrayList<>();
    for (int k : sent) {
      if (k > 0 && !landed.contains(((InsertOneModel<BsonDocument>) writes.get(k)).getDocument()
          .get("_id"))) {
        out.add(k);
      }
    }
    return out.stream().mapToInt(Integer::intValue).toArray();
  }

  /** {@code e} with its error's index put back to the statement's place in the first batch. */
  private static MongoBulkWriteException renumbered(MongoBulkWriteException e,
      BulkWriteError error, int[] original) {
    int at = error.getIndex() < original.length ? original[error.getIndex()] : error.getIndex();
    return new MongoBulkWriteException(e.getWriteResult(), List.of(new BulkWriteError(
        error.getCode(), error.getMessage(), error.getDetails(), at)), e.getWriteConcernError(),
        e.getServerAddress(), e.getErrorLabels());
  }

  // ------------------------------------------------------------------ stuck journals

  private TreeException stuck(BsonDocument stuck) {
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
   * Completes a stuck journal if the server now accepts its steps.
   *
   * @return null when the tree is not (or no longer) stuck, else what still stops it
   */
  @Nullable String retryStuck() {
    State s = read();
    if (s.stuck == null) {
      return null;
    }
    String token = newToken();
    BsonDocument before = raw.findOneAndUpdate(
        and(lockKey(), eq(VERSION, s.version), eq(OWNER, null)),
        take(token, "repair", Updates.inc(VERSION, 1L)),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.BEFORE)
            .projection(Projections.include(STATE)));
    if (before == null) {
      return "the lock document changed while repair() ran; call it again";
    }
    Hold h = new Hold(token, s.epoch, s.version + 1, "repair");
    try {
      replay(h, s.op);
    } catch (TreeException e) {
      return e.getMessage();
    } finally {
      h.close();
    }
    raw.updateOne(and(lockKey(), eq(OWNER, token)), Updates.combine(
        Updates.unset(STUCK), releaseUpdate()));
    return null;
  }

  // ------------------------------------------------------------------ errors

  static boolean duplicateKey(int code) {
    return ErrorCategory.fromErrorCode(code) == ErrorCategory.DUPLICATE_KEY;
  }

  /**
   * Whether {@code error} is a duplicate key of the {@code _id} index, not of an index of the
   * caller's (which MongoDB and the embedded server name in the message as {@code index: _id_}).
   */
  static boolean duplicateId(BulkWriteError error) {
    return duplicateKey(error.getCode())
        && String.valueOf(error.getMessage()).contains(" index: _id_ ");
  }

  static boolean duplicateKey(MongoException e) {
    if (e instanceof MongoWriteException w) {
      return w.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
    }
    return duplicateKey(e.getCode());
  }

  /** Whether a command ran out of its time limit (the client's or the server's). */
  static boolean timedOut(MongoException e) {
    return e instanceof MongoOperationTimeoutException
        || e instanceof MongoExecutionTimeoutException
        || e.getCause() instanceof com.mongodb.MongoSocketReadTimeoutException;
  }

  /** Errors after which the same fenced batch may be sent again. */
  static boolean transientError(MongoException e) {
    return (e instanceof MongoBulkWriteException b && b.getWriteErrors().isEmpty()
        && b.getWriteConcernError() != null)
        || e instanceof MongoSocketException || e instanceof MongoTimeoutException
        || e instanceof MongoOperationTimeoutException
        || e instanceof MongoExecutionTimeoutException
        || e instanceof MongoNotPrimaryException || e instanceof MongoNodeIsRecoveringException
        || e instanceof MongoWriteConcernException
        || e.hasErrorLabel(MongoException.RETRYABLE_ERROR_LABEL)
        || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
  }
}
