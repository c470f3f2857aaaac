package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Locks as fine as a change: <i>lanes</i>. A change in a lane holds <i>marks</i> on the node
 * documents its decision rests on and that it writes (see {@link Footprint}), not the tree's lock;
 * two changes whose marks do not meet run at the same time. A mark is the field
 * {@value #FIELD} of a node document:
 *
 * <pre>{@code
 * arborLane: { t: "9b1e…",                 the lane's token (one per change)
 *              r: ISODate(…), l: 30000,    on the head (the first mark): the lease, by the server's clock
 *              o: "c4d2…",                 on the head: the token of a caller who took the lane over
 *              v: 42, w: "move …", j: [ {k, q, u, …}, … ],   on the head: the journal, once committed
 *              h: "n17" }                  on the other marks: the head's node id
 * }</pre>
 *
 * <p><b>A change</b> ({@link LaneProtocol}) claims its head with one {@code findOneAndUpdate}
 * that only matches a document without a mark (its answer tells the server's time: the lease
 * ends at {@code r + l}), then its other marks with one {@code updateMany} bounded by that
 * deadline; then it passes the <i>gate</i>: a {@code findOneAndUpdate} of the tree's lock
 * document that only matches while no caller holds the tree's lock, and raises its version (the
 * change's version, its fencing token for {@link Step}'s guards). It plans under its marks, and
 * sends its plan ({@link LaneProgram}): the journal into the head (the commit point, unless the
 * plan is one single-document step), the steps, each batch bounded by the lease's end by the
 * server's clock and closed by a statement that fails once the lane is lost, inserts led by an
 * insert fence of the lane; then the release, which clears the marks and raises the tree's
 * version again (so that readers notice a change that ran while they read).
 *
 * <p><b>Meeting a mark.</b> A caller that meets another lane's mark reads its head: gone, or of
 * another token, the mark is a leftover and is cleared; live, the caller backs off and claims
 * again; expired by the server's clock, the caller takes the lane over with a compare-and-set on
 * the renewal it saw expired ({@code o}), revokes the lane's insert commands (it takes the next
 * insert fence), replays the journal if there is one, and clears the lane's marks. A stalled
 * holder's later batches change nothing: they are bounded by a deadline that has passed.
 *
 * <p><b>The tree's lock</b> still serializes what is not a lane's (loads, grafts, repair,
 * changes of the top level, nested sets): a caller that takes it waits until no lane the lock
 * document names is in flight ({@link #drain}: the gate names the lane with its head, {@code
 * arborLock.inflight.<token>: <head id>}), taking expired lanes over; a lane passes the gate only
 * while nobody holds it (the gate names the lane, the holder takes the lock first and then reads
 * the names: one of the two sees the other). A step refused after others of the lane ran leaves
 * the tree stuck ({@link #stuck}) until {@code repair()} completes the lane ({@link
 * #completeStuck}).
 */
public final class Lanes {
  /** The field of a mark. */
  public static final String FIELD = "arborLane";

  public static final String T = FIELD + ".t";
  static final String H = FIELD + ".h";
  public static final String R = FIELD + ".r";
  static final String L = FIELD + ".l";
  static final String O = FIELD + ".o";
  static final String J = FIELD + ".j";
  static final String V = FIELD + ".v";
  static final String W = FIELD + ".w";

  /**
   * How long a store's changes go straight to lanes after an optimistic change of it found the
   * tree moved (another writer at work), before the optimistic path is tried again.
   */
  static final long CONTENDED_MILLIS = 1_000;

  /**
   * Until when (the lock's nano clock; 0: not contended) this store's changes go straight to
   * lanes ({@link LaneProtocol}).
   */
  volatile long contendedUntil;

  final TreeLock tree;
  final LockDocument lock;
  final MongoCollection<BsonDocument> raw;
  /** The node documents, read with ids decoded. */
  final MongoCollection<Document> data;
  /** Maps node ids in filters to their stored form. */
  private final Reads keys;
  final LaneProgram programs;
  /** How many expired lanes this store took over (tests and logs). */
  public final AtomicLong takeovers = new AtomicLong();
  private final SpentFences spentFences;
  /** Takes over lanes whose lease expired, and completes stuck ones. */
  private final LaneTakeover takeover = new LaneTakeover(this);
  private final LeaseScheduler renewals;

  public Lanes(TreeLock tree, MongoCollection<Document> data, @Nullable Scope scope,
      LeaseScheduler renewals) {
    this.tree = tree;
    this.renewals = renewals;
    this.lock = tree.lock;
    this.raw = lock.raw;
    this.spentFences = new SpentFences(lock);
    // its reads of marks are made while a change holds marks or the tree's lock: bounded
    this.data = data.withTimeout(lock.commandLimitMillis(),
        java.util.concurrent.TimeUnit.MILLISECONDS);
    this.keys = new Reads(data, scope, null, () -> {}, false);
    this.programs = new LaneProgram(this);
  }

  /** One change's lane: its token, its marks (head first), and its lease. */
  final class Lane {
    final String token;
    /** The token of the lane's current owner: its writer, or a caller who took it over. */
    final String owner;
    final List<String> marked = new ArrayList<>();
    @Nullable String head;
    /** The server's time of the last renewal, and the local time it was learnt at. */
    volatile long renewed;
    volatile long renewedAt;
    /** The background renewal of the lane's lease, while it runs. */
    private volatile java.util.concurrent.@Nullable Future<?> renewal;
    long version = -1;
    /**
     * This lane's lease, in ms: the tree's, grown ({@link LockDocument#grown}) when a command
     * arrived after it, and for a caller who took the lane over.
     */
    volatile long leaseMillis;
    /** The number of this lane's next insert fence: the fences before it are stored. */
    int insertFences;
    /** Whether an insert command of this owner may have passed its fence: see LaneProgram. */
    boolean insertsPassed;
    /** The number of the insert fence last sent (a command sent again keeps it). */
    int fenceSent = -1;
    /** Whether the lane's journal is stored: from then on its marks stay until it completes. */
    boolean committed;
    /** Whether a command of its steps was sent. */
    boolean sent;
    /** Whether its journal was sent (it may have landed unseen). */
    boolean commitSent;

    /** A new lane of a change, whose marks will be claimed for {@code leaseMillis} ms. */
    Lane(long leaseMillis) {
      this.token = LockDocument.newToken();
      this.owner = token;
      this.leaseMillis = leaseMillis;
    }

    /**
     * The lane {@code token} with its head at {@code head}, as its new {@code owner} took it over
     * for {@code leaseMillis} ms.
     */
    Lane(String token, String owner, String head, long leaseMillis) {
      this.token = token;
      this.owner = owner;
      this.head = head;
      this.marked.add(head);
      this.leaseMillis = leaseMillis;
    }

    long deadline() {
      return renewed + leaseMillis;
    }

    /**
     * Renews the lease every third of it in the background, so that a live holder keeps its lane
     * however slow its calls (unless the lock's keepAlive is off: a test of a paused process).
     */
    void keepAlive() {
      if (tree.keepAlive && renewal == null) {
        renewal = renewals.every(Math.max(1, lock.leaseMillis / 3), () -> {
          try {
            if (!renewIfDue(this)) {
              stop();
            }
          } catch (MongoException e) {
            // the next renewal, or the holder's bounded statements, tell
          }
        });
      }
    }

    /** Stops the background renewal. */
    void stop() {
      java.util.concurrent.Future<?> r = renewal;
      if (r != null) {
        r.cancel(false);
      }
    }

    void renewedAt(long serverMillis) {
      renewed = serverMillis;
      renewedAt = lock.timing.nanoTime();
    }

    /** The filter of this lane's head, while this owner holds it. */
    Bson headFilter() {
      return key(and(eq("_id", head), eq(T, token),
          owner.equals(token) ? eq(O, null) : eq(O, owner)));
    }
  }

  // ------------------------------------------------------------------ the lanes' log

  /**
   * How many raises of the version by lanes the lock document keeps ({@link
   * LockDocument#LANE_LOG}).
   */
  static final int LOG = 16;

  /** The most marks a gate's entry names, and their most characters; beyond, it names none. */
  private static final int LOGGED_MARKS = 16;
  private static final int LOGGED_CHARS = 512;

  /**
   * A raise of the version by a lane, as the lock document's log keeps it: the lane's token and,
   * for its gate, the ids it marked (null for a release, or when they are too many to name).
   */
  record Bump(String token, boolean gate, java.util.@Nullable Set<String> marks) {
    static Bump of(BsonValue v) {
      BsonDocument d = v.isDocument() ? v.asDocument() : new BsonDocument();
      String t = d.isString("t") ? d.getString("t").getValue() : "";
      if (!d.containsKey("m")) {
        return new Bump(t, false, null);
      }
      if (!d.isArray("m")) {
        return new Bump(t, true, null);
      }
      java.util.Set<String> m = new java.util.HashSet<>();
      for (BsonValue id : d.getArray("m")) {
        m.add(id.isString() ? id.asString().getValue() : String.valueOf(id));
      }
      return new Bump(t, true, m);
    }
  }

  /**
   * The update that raises the tree's version for a lane, counts it ({@link
   * LockDocument#LANE_BUMPS}) and logs it ({@link LockDocument#LANE_LOG}): its gate, with the
   * ids it marked ({@code marks}), or its release ({@code marks} null). A read of a subtree
   * stands if the raises while it ran were all lanes' that marked nothing it depends on
   * ({@link LaneProtocol#read(String, java.util.function.Function, java.util.function.Function)}).
   */
  static Bson bump(String token, @Nullable List<String> marks) {
    BsonDocument entry = new BsonDocument("t", new BsonString(token));
    if (marks != null) {
      int chars = 0;
      for (String id : marks) {
        chars += id.length();
      }
      BsonValue m = org.bson.BsonNull.VALUE;
      if (marks.size() <= LOGGED_MARKS && chars <= LOGGED_CHARS) {
        BsonArray ids = new BsonArray();
        for (String id : marks) {
          ids.add(new BsonString(id));
        }
        m = ids;
      }
      entry.append("m", m);
    }
    return Updates.combine(Updates.inc(LockDocument.VERSION, 1L),
        Updates.inc(LockDocument.LANE_BUMPS, 1L),
        Updates.pushEach(LockDocument.LANE_LOG, List.of(entry),
            new com.mongodb.client.model.PushOptions().slice(-LOG)));
  }

  /**
   * Whether a read that ran between the lock documents {@code before} and {@code after} is apart
   * from every change made meanwhile: both show no holder of the tree's lock and the same epoch;
   * every raise of the version between them was a lane's (as many as the lanes' count rose, all
   * still in the log); and none of the lanes that may have written meanwhile (in flight before,
   * or passing the gate in between) marked a node of {@code depends}, as their gates' entries
   * name them. A lane whose entry is gone from the log, or names no marks (too many), or that
   * the log or the lock document names without a gate in that span, makes it false.
   */
  boolean apart(TreeLock.State before, TreeLock.State after, java.util.Set<String> depends) {
    if (!before.quiet() || !after.quiet() || !before.epoch.equals(after.epoch)) {
      return false;
    }
    long raised = after.laneBumps - before.laneBumps;
    if (raised < 0 || after.version - before.version != raised
        || raised > after.laneLog.size()) {
      return false;
    }
    java.util.Set<String> writers = new java.util.HashSet<>(before.inFlight.keySet());
    for (Bump b : after.laneLog.subList(after.laneLog.size() - (int) raised,
        after.laneLog.size())) {
      if (b.gate()) {
        writers.add(b.token());
      } else if (!writers.contains(b.token())) {
        return false;
      }
    }
    if (!writers.containsAll(after.inFlight.keySet())) {
      return false;
    }
    java.util.Map<String, Bump> gates = new java.util.HashMap<>();
    for (List<Bump> log : List.of(before.laneLog, after.laneLog)) {
      for (Bump b : log) {
        if (b.gate()) {
          gates.put(b.token(), b);
        }
      }
    }
    for (String t : writers) {
      Bump gate = gates.get(t);
      if (gate == null || gate.marks() == null) {
        return false;
      }
      for (String id : gate.marks()) {
        if (depends.contains(id)) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * A mark met on node {@code id}: another lane's, or none if the node does not exist ({@code
   * missing}), or none because the claim of the lane's other marks reached the server after the
   * lease its head was claimed for ({@code late}: the next try claims for a longer lease).
   */
  record Met(String id, @Nullable BsonDocument mark, boolean missing, boolean late) {
    Met(String id, @Nullable BsonDocument mark, boolean missing) {
      this(id, mark, missing, false);
    }
  }

  Bson key(Bson filter) {
    return keys.scoped(filter);
  }

  // ------------------------------------------------------------------ claiming

  /**
   * Claims the marks of {@code ids} (sorted: the first is the head) for {@code lane}.
   *
   * @return null if every mark is held, else what stopped the claim (the marks claimed so far
   *     stay for {@link #release})
   */
  @Nullable Met claim(Lane lane, List<String> ids, String what) {
    String head = ids.get(0);
    BsonDocument after = tree.sender.exchange(raw, key(and(eq("_id", head), eq(FIELD, null))),
        Updates.combine(Updates.set(T, lane.token), Updates.set(L, lane.leaseMillis),
            Updates.set(W, what), Updates.currentDate(R)),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(FIELD)).collation(Reads.SIMPLE));
    if (after == null) {
      return met(head);
    }
    lane.head = head;
    lane.marked.add(head);
    lane.renewedAt(after.getDocument(FIELD).getDateTime("r").getValue());
    lane.keepAlive();
    if (ids.size() == 1) {
      return null;
    }
    List<String> rest = ids.subList(1, ids.size());
    lane.marked.addAll(rest);
    // through the lock's Sender, as the claim of the head: tests stall and cut it too
    long matched = tree.sender.send(raw, new TreeLock.Batch(List.of(new TreeLock.Statement(
        new com.mongodb.client.model.UpdateManyModel<>(Fences.before(key(and(in("_id", rest),
            eq(FIELD, null))), lane.deadline()),
            Updates.combine(Updates.set(T, lane.token), Updates.set(H, head)),
            new com.mongodb.client.model.UpdateOptions().collation(Reads.SIMPLE)), 0))))
        .getMatchedCount();
    if (matched == rest.size()) {
      return null;
    }
    java.util.Set<String> found = new java.util.HashSet<>();
    Met stop = null;
    boolean late = false;
    for (Document d : data.find(key(in("_id", rest))).projection(Projections.include(FIELD))
        .collation(Reads.SIMPLE)) {
      String id = String.valueOf(d.get("_id"));
      found.add(id);
      BsonDocument m = markOf(d);
      // Unmarked after a claim of unmarked nodes: the claim came after its deadline (or the
      // mark it met was cleared meanwhile).
      late |= m == null;
      if (stop == null && m != null && !lane.token.equals(str(m, "t"))) {
        stop = new Met(id, m, false);
      }
    }
    for (String id : rest) {
      if (!found.contains(id)) {
        return new Met(id, null, true);
      }
    }
    return stop != null ? stop : new Met(head, null, false, late);
  }

  private Met met(String id) {
    Document d = data.find(key(eq("_id", id))).projection(Projections.include(FIELD))
        .collation(Reads.SIMPLE).first();
    return d == null ? new Met(id, null, true) : new Met(id, markOf(d), false);
  }

  static @Nullable BsonDocument markOf(Document d) {
    Object m = d.get(FIELD);
    return m instanceof Document doc
        ? doc.toBsonDocument(BsonDocument.class, com.mongodb.MongoClientSettings
            .getDefaultCodecRegistry()) : null;
  }

  static @Nullable String str(BsonDocument d, String field) {
    BsonValue v = d.get(field);
    return v != null && v.isString() ? v.asString().getValue() : null;
  }

  /**
   * The gate: takes the change's version from the tree's lock document, if nobody holds the
   * tree's lock and no reader waits for a quiet tree.
   *
   * @return null if the lane may go on, else the lock document as read after the gate stayed
   *     shut
   */
  TreeLock.@Nullable State gate(Lane lane) {
    BsonDocument after = tree.sender.exchange(raw, and(lock.lockKey(),
            eq(LockDocument.OWNER, null), eq(LockDocument.STUCK, null),
            in(LockDocument.WAITING, org.bson.BsonNull.VALUE, new BsonDocument())),
        Updates.combine(bump(lane.token, lane.marked),
            Updates.set(LockDocument.IN_FLIGHT + "." + lane.token, lane.head)),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(LockDocument.VERSION))); // the lane's version only
    if (after == null) {
      TreeLock.State s = tree.read(); // also creates the lock document
      forgetDeadWaiters(s, lane.renewed);
      return s;
    }
    lane.version = new TreeLock.State(after).version;
    return null;
  }

  /** Removes the entries of waiting callers that stopped refreshing them (a crashed reader). */
  private void forgetDeadWaiters(TreeLock.State s, long now) {
    List<Bson> gone = new ArrayList<>();
    for (TreeLock.Waiter w : s.waiting.values()) {
      if (!w.live(now)) {
        gone.add(Updates.unset(LockDocument.WAITING + "." + w.token()));
      }
    }
    if (!gone.isEmpty()) {
      raw.updateOne(lock.lockKey(), Updates.combine(gone));
    }
  }

  /**
   * Renews the lane's lease if a third of it has passed.
   *
   * @return whether this owner still holds the lane, as far as is known
   */
  boolean renewIfDue(Lane lane) {
    if (lane.head != null && lock.timing.nanoTime() - lane.renewedAt
        > TimeUnit.MILLISECONDS.toNanos(lock.leaseMillis) / 3) {
      return renew(lane);
    }
    return true;
  }

  /**
   * Renews the lane's lease.
   *
   * @return whether this owner still holds the lane
   */
  boolean renew(Lane lane) {
    return renew(lane, Updates.currentDate(R));
  }

  /**
   * Renews the lane's lease for longer ({@link LockDocument#grown}): a command of it arrived
   * after its lease while it still held the lane (a busy machine, a slow server). Only ever
   * longer ({@code $max}): a renewal sent again arrives late only with a lease no longer than one
   * a command of the lane may have been given its time limit by since.
   *
   * @return whether this owner still holds the lane
   */
  boolean renewLonger(Lane lane) {
    long grown = lock.grown(lane.leaseMillis);
    if (!renew(lane, Updates.combine(Updates.currentDate(R), Updates.max(L, grown)))) {
      return false;
    }
    lane.leaseMillis = grown;
    return true;
  }

  /**
   * A renewal, sent again while its answer is lost (it is idempotent: its filter names this
   * owner, and a renewal that landed unseen leaves the lane as the next one finds it). A renewal
   * is often what a holder sends after its writes, to tell what became of them; an I/O error
   * there must not end the change as if nothing had been written (a flaky network in {@code
   * LinearizabilityTest}: a move applied, told {@code NOT_APPLIED}).
   */
  private boolean renew(Lane lane, Bson renewal) {
    for (int attempt = 0; ; attempt++) {
      BsonDocument after;
      try {
        after = tree.sender.exchange(raw, lane.headFilter(), renewal,
            new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                .projection(Projections.include(FIELD)).collation(Reads.SIMPLE));
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e) || attempt >= 20) {
          throw e;
        }
        lock.pause();
        continue;
      }
      if (after == null) {
        return false;
      }
      lane.renewedAt(after.getDocument(FIELD).getDateTime("r").getValue());
      return true;
    }
  }

  /**
   * Clears the lane's marks (bounded by its lease: a lane taken over leaves its marks to the
   * caller who took it) and, if it passed the gate, raises the tree's version.
   */
  void release(Lane lane) {
    lane.stop();
    if (lane.marked.isEmpty()) {
      return;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        if (lock.timing.nanoTime() - lane.renewedAt
            > TimeUnit.MILLISECONDS.toNanos(lock.leaseMillis) / 2 && !renew(lane)) {
          return;
        }
        if (lane.version >= 0) { // the version first: see LaneProtocol.read
          raw.updateOne(lock.lockKey(), Updates.combine(bump(lane.token, null),
              Updates.unset(LockDocument.IN_FLIGHT + "." + lane.token)));
        }
        raw.updateMany(Fences.before(key(and(in("_id", lane.marked), eq(T, lane.token))),
            lane.deadline()), Updates.unset(FIELD), new com.mongodb.client.model.UpdateOptions()
                .collation(Reads.SIMPLE));
        return;
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e)) {
          return; // left to expire: whoever meets them takes the lane over
        }
      }
    }
  }

  // ------------------------------------------------------------------ meeting a mark

  /** Settles a mark met: see {@link LaneTakeover#resolve}. */
  boolean resolve(Met met) {
    return takeover.resolve(met);
  }

  /** Records a lane's refused step as the tree stuck: see {@link LaneTakeover#stuck}. */
  TreeException stuck(Lane lane, String what, LaneProgram.Refused r, int steps) {
    return takeover.stuck(lane, what, r, steps);
  }

  /**
   * Completes the journal of the lane a stuck tree names: see {@link LaneTakeover#completeStuck}.
   */
  void completeStuck(BsonDocument lane) {
    takeover.completeStuck(lane);
  }

  // ------------------------------------------------------------------ insert fences

  /** The {@code _id} of insert fence {@code b} of the lane {@code token}. */
  BsonDocument insertFence(String token, int b) {
    return lock.own("fence").append("lane", new BsonString(token)).append("b", new BsonInt32(b));
  }

  /** Insert fences whose commands were answered: deleted a few dozen at a time. */
  void sweep(Collection<BsonValue> fences) {
    spentFences.add(fences);
  }

  // ------------------------------------------------------------------ the tree's lock

  /**
   * The head of a lane in flight by the lock document {@code s}, whose mark is still on it (the
   * lane is live, or stopped and to be taken over), or null if there is none: the heads are read
   * by {@code _id}, never by a scan for marks. Names whose head no longer carries their lane's
   * mark are left behind by lanes completed by someone else, and are cleared (a lane's name
   * goes before its marks, so a live lane's head always carries its mark).
   */
  @Nullable Met inFlight(TreeLock.State s) {
    if (s.inFlight.isEmpty()) {
      return null;
    }
    java.util.Map<String, BsonDocument> marks = new java.util.HashMap<>();
    for (Document d : data.find(key(in("_id", new java.util.HashSet<>(s.inFlight.values()))))
        .projection(Projections.include(FIELD)).collation(Reads.SIMPLE)) {
      BsonDocument m = markOf(d);
      if (m != null) {
        marks.put(String.valueOf(d.get("_id")), m);
      }
    }
    List<Bson> gone = new ArrayList<>();
    for (java.util.Map.Entry<String, String> e : s.inFlight.entrySet()) {
      BsonDocument m = marks.get(e.getValue());
      if (m != null && e.getKey().equals(str(m, "t"))) {
        return new Met(e.getValue(), m, false);
      }
      gone.add(Updates.unset(LockDocument.IN_FLIGHT + "." + e.getKey()));
    }
    raw.updateOne(lock.lockKey(), Updates.combine(gone));
    return null;
  }

  /**
   * What a look at the lock document after a read tells: whether the read {@code stands} (the
   * tree still at the quiet version it began at, no lane in flight), else the lane {@code met}
   * in flight (null if the version moved), and the {@code last} state read.
   */
  public record Look(boolean stands, @Nullable Met met, TreeLock.State last) {}

  /**
   * Whether a read that began at the quiet version {@code before} stands, by the lock document
   * {@code after} read after it. A lane that passed its gate before the read began leaves the
   * version as it was until it releases: while the lock document names lanes in flight, the read
   * stands only if none of their heads still carries its mark and the version has not moved after
   * that look (a lane raises the version before it clears its marks).
   */
  public Look look(TreeLock.Quiet before, TreeLock.State after) {
    if (!before.same(after)) {
      return new Look(false, null, after);
    }
    if (!after.lanes) {
      return new Look(true, null, after);
    }
    Met met = inFlight(after);
    if (met != null) {
      return new Look(false, met, after);
    }
    TreeLock.State again = tree.read();
    return new Look(before.same(again) && !again.lanes, null, again);
  }

  /**
   * Waits, as the holder of the tree's lock, until no lane named by the lock document is in
   * flight, taking expired lanes over: lanes that passed the gate before the lock was taken
   * finish first; no lane passes it now. (A lane that marked its nodes but did not pass the gate
   * has written nothing, and plans only after it passes.)
   *
   * @throws ChangeInterruptedException if lanes stay past the lock wait
   */
  void drain(TreeLock.Hold h) {
    long start = lock.timing.nanoTime();
    for (int attempt = 0; ; attempt++) {
      Met met = inFlight(tree.read());
      if (met == null) {
        return;
      }
      h.renewIfDue();
      if (resolve(met)) {
        attempt = 0;
        continue;
      }
      pause(attempt, start, "a change in a subtree");
    }
  }

  /**
   * Pauses before a caller tries again; once the lock wait since {@code start} ran out, throws a
   * {@link ChangeInterruptedException} {@code NOT_APPLIED} (nothing of the call was written).
   */
  void pause(int attempt, long start, String what) {
    if (lock.timing.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(lock.waitMillis)) {
      throw new ChangeInterruptedException("Tree '" + lock.tree + "': waited more than "
          + lock.waitMillis + " ms for " + what + "; nothing of this call was written",
          ChangeInterruptedException.Outcome.NOT_APPLIED, null);
    }
    lock.sleep(Math.max(1, Math.min(Math.min(LockQueue.MAX_PAUSE_MILLIS,
        lock.leaseMillis / 4), 1L << Math.min(attempt, 6))));
  }
}
