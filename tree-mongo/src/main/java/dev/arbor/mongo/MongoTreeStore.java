package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static java.util.Objects.requireNonNull;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Deletion;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.Node;
import dev.arbor.core.NodeHasChildrenException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeEvent;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeListener;
import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStores;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * What the five MongoDB stores share: one document per node with {@code _id} = the node id and the
 * attributes as top-level fields; attribute validation; bulk loads in batches; snapshots and checks
 * by one scan; and the way every operation runs: a read gets a {@link Reads} context and is isolated
 * from concurrent changes, a change gets a {@link Change} context to plan its steps, which a
 * protocol then makes all-or-nothing (see {@link TreeLock} and {@link Transactions}).
 */
abstract class MongoTreeStore implements MongoTree, Cloneable {
  static final String ID = "_id";
  static final int LOAD_BATCH = 10_000;
  /**
   * Node documents: the lock and journal documents have non-string ids. For a tree of typed ids
   * ({@link TreeOptions#withIdType}) the reads and steps rewrite it to the tree's id type ({@link
   * NodeIds#filter}).
   */
  static final Bson NODES = Filters.type(ID, BsonType.STRING);

  final MongoCollection<Document> collection;
  final String collectionName;
  final ServerCapabilities capabilities;
  /** The collection as Arbor reads it: from the primary, whatever the caller's preference. */
  final MongoCollection<Document> data;
  /** The tree of the collection this store sees, or null: the collection holds one tree. */
  final @Nullable Scope scope;
  /** How node ids are stored ({@link TreeOptions#withIdType}). */
  final NodeIds ids;
  final TreeLock lock;
  final Transactions transactions;
  private final boolean isolatedReads;
  private final Set<String> structuralFields;
  /** The names of the structural fields ({@link TreeOptions#withFieldName}). */
  final FieldNames names;
  final String parentField;
  final String childrenField;
  final String ancestorsField;
  final String pathField;
  final String leftField;
  final String rightField;
  final String depthField;
  final String rankField;
  /** Sibling order in {@link #rankField}. */
  final Ranks ranks;
  /** The latest version at which this store saw the tree with no change in flight. */
  private final AtomicReference<TreeLock.Quiet> known = new AtomicReference<>();
  /**
   * Called on the calling thread with the version at which each change took effect, or at which a
   * change that threw or did nothing saw the tree: the order of these versions is the serial
   * order of the changes (tests replay it).
   */
  volatile java.util.function.LongConsumer onSettled = v -> {};
  /** Documents per load batch (tests lower it). */
  volatile int loadBatchSize = LOAD_BATCH;
  private final List<TreeListener> listeners;
  /** The caller's session of a {@link #withSession} view, or null. */
  private @Nullable ClientSession session;
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(MongoTreeStore.class);
  /** Whether {@link #requireLayout()} has seen nodes laid out in this pattern. */
  private volatile boolean layoutSeen;

  MongoTreeStore(MongoCollection<Document> collection, ServerCapabilities capabilities) {
    this.collection = requireNonNull(collection, "collection");
    this.names = capabilities.names();
    this.parentField = names.parent;
    this.childrenField = names.children;
    this.ancestorsField = names.ancestors;
    this.pathField = names.path;
    this.leftField = names.left;
    this.rightField = names.right;
    this.depthField = names.depth;
    this.rankField = names.rank;
    this.ranks = new Ranks(rankField);
    Set<String> structuralFields = Set.copyOf(names.of(pattern()));
    this.collectionName = collection.getNamespace().getCollectionName();
    this.capabilities = capabilities;
    this.isolatedReads = capabilities.isolatedReads();
    capabilities.checkScope(pattern(), structuralFields);
    capabilities.checkServer();
    this.scope = capabilities.scope();
    MongoCollection<Document> primary = collection.withReadPreference(ReadPreference.primary());
    this.ids = new NodeIds(capabilities.idType(), names);
    this.data = scope == null ? ids.collection(primary) : scope.collection(primary);
    // The lock's state is read at majority: never a state a failover would roll back.
    this.lock = new TreeLock(collection.withDocumentClass(BsonDocument.class)
        .withReadPreference(ReadPreference.primary()).withWriteConcern(WriteConcern.MAJORITY)
        .withReadConcern(com.mongodb.ReadConcern.MAJORITY),
        scope, capabilities.leaseMillis(), capabilities.waitMillis(), capabilities.timing(),
        capabilities.renewals());
    this.transactions = new Transactions(capabilities.client(), data, lock);
    this.listeners = capabilities.listeners();
    Set<String> fields = new HashSet<>(structuralFields);
    fields.add(Step.MARK);
    fields.add(TreeLock.STATE);
    fields.add(TreeLock.JOURNAL);
    if (scope != null) {
      fields.add(scope.field());
    }
    this.structuralFields = Set.copyOf(fields);
  }

  /**
   * Whether the store walks the tree with {@code $graphLookup}: where the server runs it
   * correctly, and only for a collection that holds one tree (a scoped tree walks level by level
   * with {@code $in} queries, each of which carries the scope).
   */
  final boolean walksWithGraphLookup() {
    return scope == null && ids.isString() && capabilities.graphLookup();
  }

  /** The indexes this pattern's queries need. */
  abstract List<IndexModel> indexes();

  /** The fields this pattern reserves for the structure, besides {@code _id}. */
  final Set<String> structuralFields() {
    return structuralFields;
  }

  @Override
  public void ensureIndexes() {
    List<IndexModel> indexes = indexes();
    if (scope != null) {
      // every index leads with the scope field: each tree's queries use it, and a collection
      // sharded on the scope field keeps them local to one shard
      List<IndexModel> scoped = new ArrayList<>();
      for (IndexModel m : indexes) {
        BsonDocument keys = new BsonDocument(scope.field(), new org.bson.BsonInt32(1));
        keys.putAll(m.getKeys().toBsonDocument(BsonDocument.class,
            collection.getCodecRegistry()));
        scoped.add(new IndexModel(keys, m.getOptions()));
      }
      indexes = scoped;
    }
    for (IndexModel m : indexes) {
      // the collation of Arbor's queries (a collection whose default collation is another is
      // refused at open; an index without one would take the collection's)
      m.getOptions().collation(Reads.SIMPLE);
    }
    if (!indexes.isEmpty()) {
      collection.createIndexes(indexes);
    }
  }

  // ------------------------------------------------------------------ the protocol

  /** How structural changes are made all-or-nothing. */
  enum Protocol {
    /** One multi-document transaction per change (replica sets, sharded clusters). */
    TRANSACTIONS,
    /** The lock document and the journal of guarded steps ({@link TreeLock}). */
    LOCK_AND_JOURNAL
  }

  /**
   * The protocol this store uses: transactions need a client and a server that runs them (probed
   * once).
   */
  final Protocol protocol() {
    return transactions.available() ? Protocol.TRANSACTIONS : Protocol.LOCK_AND_JOURNAL;
  }

  @Override
  public final MongoTree withSession(ClientSession session) {
    requireNonNull(session, "session");
    try {
      // A shallow copy: the view shares the lock, the transactions, the quiet version and the
      // listeners with this store, and differs only in its session.
      MongoTreeStore view = (MongoTreeStore) super.clone();
      view.session = session;
      return view;
    } catch (CloneNotSupportedException e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public final <T> TypedTree<T> withDocumentClass(Class<T> documentClass) {
    return new TypedMongoTree<>(this, documentClass, collection.getCodecRegistry());
  }

  /** Whether this is a view whose session is in a transaction of the caller's. */
  private boolean inCallersTransaction() {
    return session != null && session.hasActiveTransaction();
  }

  /** Plans a change on its context. */
  interface Planner {
    void plan(Change change);
  }

  /** What a change did: its version, and the documents it deleted (-1 if not known). */
  record Outcome(long version, long deleted) {
    static final Outcome NONE = new Outcome(-1, 0);
  }

  /**
   * Runs a structural change: {@code planner} reads what it needs through its {@link Change} and
   * plans its steps; they are then applied all-or-nothing, in a transaction or under the lock.
   * With the lock, a store that knows a recent quiet version plans without the lock first and
   * claims it with its first write; if the tree changed meanwhile, it plans again under the lock.
   */
  final Outcome change(String what, @Nullable String subject, Planner planner) {
    requireLayout();
    Outcome o = changeLaidOut(what, subject, planner);
    layoutSeen = true; // the nodes it wrote, if the collection was empty, are of this pattern
    return o;
  }

  private Outcome changeLaidOut(String what, @Nullable String subject, Planner planner) {
    try {
      if (inCallersTransaction()) {
        return transactions.runIn(session, what, planner);
      }
      if (protocol() == Protocol.TRANSACTIONS) {
        Outcome o = transactions.run(what, planner, session);
        if (o != null) {
          onSettled.accept(o.version());
          return o;
        }
      }
      TreeLock.Quiet k = known.get();
      if (k != null) {
        Outcome o = optimistic(k, what, planner);
        if (o != null) {
          return o;
        }
      }
      TreeLock.Hold h = lock.acquire(what);
      Change c = new Change(data, scope, session, h::renewIfDue, h.version);
      try {
        planner.plan(c);
      } catch (RuntimeException e) {
        lock.release(h);
        onSettled.accept(h.version);
        throw e;
      }
      if (c.steps().isEmpty()) {
        lock.release(h);
        onSettled.accept(h.version);
        return Outcome.NONE;
      }
      TreeLock.Result r = lock.run(h, c.steps());
      if (r.deleted() >= 0) {
        remember(new TreeLock.Quiet(h.epoch, r.version() + 1)); // its own release
      }
      onSettled.accept(r.version());
      return new Outcome(r.version(), r.deleted());
    } catch (RuntimeException e) {
      throw unapplied(translate(e, subject), what);
    }
  }

  /**
   * A driver error that reached a change before anything was written (a read of its planning,
   * the lock's own commands once their retries ran out) as {@link ChangeInterruptedException}
   * with outcome {@code NOT_APPLIED}: a change never throws a raw driver exception. Errors the
   * protocol met while writing are already told with their outcome.
   */
  static RuntimeException unapplied(RuntimeException e, String what) {
    if (!(e instanceof MongoException m) || (e instanceof com.mongodb.MongoClientException
        && !TreeLock.transientError(m))) {
      return e; // not a driver error, or the caller's misuse of the driver (a foreign session…)
    }
    return new ChangeInterruptedException("Could not do '" + what + "': " + m.getMessage()
        + "; nothing of it was written", ChangeInterruptedException.Outcome.NOT_APPLIED, m);
  }

  /**
   * Plans without the lock, on the tree as of the quiet version {@code k}, and sends the plan led
   * by a claim of the lock at that version.
   *
   * @return the outcome, or null if the tree changed since {@code k} (nothing was written)
   */
  private @Nullable Outcome optimistic(TreeLock.Quiet k, String what, Planner planner) {
    Change c = new Change(data, scope, session, () -> {}, k.version() + 1);
    try {
      planner.plan(c);
    } catch (MongoException e) {
      throw e;
    } catch (RuntimeException e) {
      // A planner's verdict (no such node, a cycle…) stands only if its reads saw a quiet tree.
      if (stillQuiet(k)) {
        onSettled.accept(k.version());
        throw e;
      }
      return null;
    }
    if (c.steps().isEmpty()) {
      if (stillQuiet(k)) {
        onSettled.accept(k.version());
        return Outcome.NONE;
      }
      return null;
    }
    try {
      TreeLock.Result r = lock.runClaimed(k, what, c.steps());
      if (r.deleted() >= 0) {
        remember(new TreeLock.Quiet(k.epoch(), r.version() + 1)); // its own release
      }
      onSettled.accept(r.version());
      return new Outcome(r.version(), r.deleted());
    } catch (TreeLock.ClaimRefused refused) {
      return null;
    }
  }

  /**
   * Refuses, before anything is written, a collection whose nodes are laid out in another pattern
   * ({@link Layouts}); one sample read until nodes of this pattern have been seen.
   */
  private void requireLayout() {
    if (!layoutSeen) {
      layoutSeen = Layouts.require(pattern(), data, scope, names);
    }
  }

  private boolean stillQuiet(TreeLock.Quiet k) {
    TreeLock.State s = lock.read();
    if (s.quiet()) {
      remember(s.asQuiet());
    }
    return k.same(s);
  }

  /** Records a quiet version seen; keeps the latest of an epoch. */
  final void remember(TreeLock.Quiet seen) {
    known.accumulateAndGet(seen, (old, now) -> old == null || !old.epoch().equals(now.epoch())
        || now.version() > old.version() ? now : old);
  }

  /** Forgets the quiet version (tests: makes the next change take the lock first). */
  final void forget() {
    known.set(null);
  }

  /**
   * Runs a read, isolated from concurrent changes unless isolation is off: the read is accepted
   * only if no change was in flight from a quiet version seen before it to a check of the lock
   * document after it (folded into the read's query when it is a single query by {@code _id}).
   * While a change is in flight the reader waits in line, before the writers that follow it.
   */
  final <T> T read(Function<Reads, T> body) {
    if (inCallersTransaction()) {
      return transactions.readIn(session, body, isolatedReads);
    }
    if (!isolatedReads) {
      return body.apply(new Reads(data, scope, session, () -> {}, false));
    }
    String waiting = null;
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
          remember(before);
        }
        Reads r = new Reads(data, scope, session, () -> {}, true);
        T result = null;
        RuntimeException failed = null;
        try {
          result = body.apply(r);
        } catch (MongoException e) {
          throw e;
        } catch (RuntimeException e) {
          failed = e; // stands only if the read saw a quiet tree
        }
        BsonDocument folded = r.foldedLock();
        TreeLock.State after = folded != null ? new TreeLock.State(folded) : lock.read();
        if (before.same(after) && (folded == null || r.foldedMaxMark() <= before.version())) {
          if (failed != null) {
            throw failed;
          }
          return result;
        }
        if (folded != null && !before.same(after)) {
          after = lock.read(); // the folded copy may predate the query's other documents
        }
        lock.checkNotStuck(after);
        if (after.quiet()) {
          before = after.asQuiet();
          remember(before);
        } else {
          waiting = waiting == null ? lock.readerToken() : waiting;
          before = lock.awaitQuiet(waiting).asQuiet();
          remember(before);
        }
      }
    } finally {
      if (waiting != null) {
        lock.unregister(waiting);
      }
    }
  }

  // ------------------------------------------------------------------ the public operations

  @Override
  public final void insert(String id, Position position,
      Map<String, @Nullable Object> attributes) {
    TreeStores.checkId(id);
    ids.checkNew(id);
    requireNonNull(position, "position");
    Map<String, Object> copy = TreeStores.copyAttributes(attributes);
    checkAttributes(id, copy);
    Told t = listeners.isEmpty() ? null : new Told();
    Outcome o = change("insert '" + id + "' at " + position, id, c -> {
      planInsert(c, id, position, copy);
      if (t != null) {
        t.newParent = parentAt(c, position);
      }
    });
    if (t != null && o.version() >= 0) {
      tell(new TreeEvent(TreeEvent.Kind.INSERT, id, null, t.newParent, position, 1,
          o.version()));
    }
  }

  /**
   * One {@code $set}/{@code $unset} of the node's document, planned after a read of its {@code
   * _id} that tells whether it exists; no journal (one single-document step).
   */
  @Override
  public final void update(String id, Map<String, ? extends @Nullable Object> set) {
    TreeStores.checkId(id);
    requireNonNull(set, "set must not be null (use an empty map)");
    Map<String, Object> copy = new LinkedHashMap<>();
    set.forEach((name, value) -> copy.put(requireNonNull(name, "attribute names must not be null"),
        value));
    checkAttributes(id, copy);
    List<Bson> updates = new ArrayList<>();
    copy.forEach((name, value) -> updates.add(value == null ? Updates.unset(name)
        : Updates.set(name, value)));
    Told t = listeners.isEmpty() ? null : new Told();
    Outcome o = change("update '" + id + "'", id, c -> {
      if (t != null) {
        Node n = findNode(c, id).orElseThrow(() -> new NodeNotFoundException(id));
        t.oldParent = n.parentId();
      } else {
        c.require(id, fields(ID));
      }
      if (!updates.isEmpty()) {
        c.set(id, Updates.combine(updates));
      }
    });
    if (t != null && o.version() >= 0) {
      tell(new TreeEvent(TreeEvent.Kind.UPDATE, id, t.oldParent, t.oldParent, null, 1,
          o.version()));
    }
  }

  @Override
  public final void move(String id, Position position) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    Told t = listeners.isEmpty() ? null : new Told();
    Outcome o = change("move '" + id + "' to " + position, id, c -> {
      planMove(c, id, position);
      if (t != null && !c.steps().isEmpty()) {
        t.oldParent = findNode(c, id).map(Node::parentId).orElse(null);
        t.newParent = parentAt(c, position);
        t.nodes = descendantIds(c, id, Integer.MAX_VALUE).size() + 1L;
      }
    });
    if (t != null && o.version() >= 0) {
      tell(new TreeEvent(TreeEvent.Kind.MOVE, id, t.oldParent, t.newParent, position, t.nodes,
          o.version()));
    }
  }

  @Override
  public final long delete(String id) {
    TreeStores.checkId(id);
    return deleteSubtree(id, "delete '" + id + "'", false);
  }

  /**
   * {@link Deletion#SUBTREE} and {@link Deletion#LEAF_ONLY} plan the pattern's delete (the latter
   * after reading the children, in the same change); {@link Deletion#LIFT_CHILDREN} plans the
   * pattern's {@link #planLift}.
   */
  @Override
  public final long delete(String id, Deletion how) {
    TreeStores.checkId(id);
    requireNonNull(how, "how");
    switch (how) {
      case SUBTREE:
        return delete(id);
      case LEAF_ONLY:
        return deleteSubtree(id, "delete leaf '" + id + "'", true);
      default:
        Told t = listeners.isEmpty() ? null : new Told();
        Outcome o = change("delete '" + id + "' lifting its children", id, c -> {
          if (t != null) {
            t.oldParent = findNode(c, id).map(Node::parentId).orElse(null);
          }
          planLift(c, id);
        });
        if (t != null && o.version() >= 0) {
          tell(new TreeEvent(TreeEvent.Kind.DELETE, id, t.oldParent, null, null, 1,
              o.version()));
        }
        return 1;
    }
  }

  private long deleteSubtree(String id, String what, boolean leafOnly) {
    long[] planned = new long[1];
    Told t = listeners.isEmpty() ? null : new Told();
    Outcome o = change(what, id, c -> {
      if (leafOnly && !childIds(c, id).isEmpty()) {
        throw new NodeHasChildrenException(id);
      }
      if (t != null) {
        t.oldParent = findNode(c, id).map(Node::parentId).orElse(null);
      }
      planned[0] = planDelete(c, id);
    });
    long deleted;
    if (planned[0] >= 0) {
      deleted = planned[0];
    } else if (o.deleted() < 0) {
      throw new ChangeInterruptedException("'" + id + "' was deleted with its subtree by another"
          + " caller that completed this change; how many nodes it removed is not known here",
          ChangeInterruptedException.Outcome.COMMITTED, null);
    } else if (o.deleted() == 0) {
      throw new NodeNotFoundException(id);
    } else {
      deleted = o.deleted();
    }
    if (t != null && o.version() >= 0) {
      tell(new TreeEvent(TreeEvent.Kind.DELETE, id, t.oldParent, null, null, deleted,
          o.version()));
    }
    return deleted;
  }

  /** What listeners are told of a change, gathered while it is planned. */
  private static final class Told {
    @Nullable String oldParent;
    @Nullable String newParent;
    long nodes = 1;
  }

  /** The parent a node at {@code position} has. */
  private @Nullable String parentAt(Reads r, Position position) {
    if (position instanceof Position.Child child) {
      return child.parentId();
    }
    if (position instanceof Position.Sibling sibling) {
      return findNode(r, sibling.siblingId()).map(Node::parentId).orElse(null);
    }
    return null;
  }

  /** Tells the listeners of a committed change; a listener's exception is logged, not thrown. */
  final void tell(TreeEvent event) {
    if (inCallersTransaction()) {
      return; // the caller may still abort: nothing is known to be committed
    }
    for (TreeListener listener : listeners) {
      try {
        listener.changed(event);
      } catch (RuntimeException e) {
        LOG.warn("Tree '{}': a listener threw on {} (the change stands)", collectionName, event,
            e);
      }
    }
  }

  /**
   * Whether a server error is {@code $graphLookup} passing its memory limit (100 MB before
   * MongoDB 8.2, whatever {@code allowDiskUse} says; it holds whole documents), or refused where
   * it cannot run (inside a transaction on a sharded collection: OperationNotSupportedInTransaction,
   * or 3904801, "Cannot run $graphLookup with a sharded foreign collection in a transaction"):
   * the stores then walk the tree level by level instead.
   */
  static boolean graphLookupOutOfMemory(com.mongodb.MongoServerException e) {
    return e.getCode() == 40099 || e.getCode() == 292 // QueryExceededMemoryLimitNoDiskUseAllowed
        || graphLookupRefused(e)
        || String.valueOf(e.getMessage()).contains("maximum memory consumption");
  }

  /** Whether the server refused {@code $graphLookup} in a transaction on a sharded collection. */
  static boolean graphLookupRefused(com.mongodb.MongoServerException e) {
    return e.getCode() == 263 // OperationNotSupportedInTransaction
        || e.getCode() == 3904801; // $graphLookup of a sharded collection in a transaction
  }

  /**
   * Whether to walk level by level after {@code $graphLookup} failed with {@code e} (see {@link
   * #graphLookupOutOfMemory}). A refusal also turns {@code $graphLookup} off for this store's
   * later walks: the refusal aborted the transaction it met, and the retried transaction walks.
   */
  final boolean walkInstead(com.mongodb.MongoServerException e) {
    if (graphLookupRefused(e)) {
      capabilities.refuseGraphLookup();
    }
    return graphLookupOutOfMemory(e);
  }

  /** The pattern this store implements. */
  abstract TreePattern pattern();

  /**
   * What is wrong with the structural fields of one document (read with the projection the
   * store plans with), or null if they have the pattern's types; changes refuse to start from a
   * document in another layout.
   */
  abstract @Nullable String layoutProblem(Document d);

  static boolean isNullOrString(@Nullable Object o) {
    return o == null || o instanceof String;
  }

  /** Plans an insert; attributes are already checked. */
  abstract void planInsert(Change c, String id, Position position, Map<String, Object> attributes);

  /** Plans a move. */
  abstract void planMove(Change c, String id, Position position);

  /**
   * Plans a delete.
   *
   * @return the number of nodes the steps delete, or -1 to take the count of deleted documents
   *     (0 meaning the node did not exist)
   */
  abstract long planDelete(Change c, String id);

  /**
   * Plans the delete of {@code id} alone, its children taking its place among its siblings in
   * their order.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  abstract void planLift(Change c, String id);

  /**
   * Plans rank writes that give the sibling group {@code order} (ids in their new order) ranks
   * {@link Ranks#GAP} apart, and the parent {@code parent} (in {@code parentField}) to the ids in
   * {@code moved}: the ranks of a lift, whose children join their grandparent's children.
   */
  void planRegroup(Change c, List<String> order, Set<String> moved, String parentField,
      @Nullable Object parent) {
    long rank = 0;
    for (String each : order) {
      c.set(each, moved.contains(each)
          ? Updates.combine(Updates.set(parentField, parent), Updates.set(rankField, rank))
          : Updates.set(rankField, rank));
      rank += Ranks.GAP;
    }
  }

  /** {@code siblings} with {@code id} replaced by {@code children}, in order. */
  static List<String> lifted(List<String> siblings, String id, List<String> children) {
    List<String> out = new ArrayList<>(siblings);
    int at = out.indexOf(id);
    out.remove(at);
    out.addAll(at, children);
    return out;
  }

  @Override
  public final Optional<Node> find(String id) {
    TreeStores.checkId(id);
    return read(r -> findNode(r, id));
  }

  @Override
  public final List<String> roots() {
    return read(this::rootIds);
  }

  @Override
  public final List<String> children(String id) {
    TreeStores.checkId(id);
    return read(r -> childIds(r, id));
  }

  @Override
  public final List<String> ancestors(String id) {
    TreeStores.checkId(id);
    return read(r -> ancestorIds(r, id));
  }

  @Override
  public final List<String> descendants(String id, int maxDepth) {
    TreeStores.checkId(id);
    return read(r -> descendantIds(r, id, maxDepth));
  }

  @Override
  public final int depth(String id) {
    TreeStores.checkId(id);
    return read(r -> depthOf(r, id));
  }

  @Override
  public final boolean isDescendant(String id, String ancestorId) {
    TreeStores.checkId(id);
    TreeStores.checkId(ancestorId);
    return read(r -> descends(r, id, ancestorId));
  }

  abstract Optional<Node> findNode(Reads r, String id);

  abstract List<String> rootIds(Reads r);

  abstract List<String> childIds(Reads r, String id);

  abstract List<String> ancestorIds(Reads r, String id);

  abstract List<String> descendantIds(Reads r, String id, int maxDepth);

  // ------------------------------------------------------------------ reads of node data

  /**
   * The rows of a subtree: the top node's first (its parent null), then its descendants in any
   * order; and the top node's depth, or -1 where the pattern does not know it without more reads.
   */
  record Rows(int depth, List<Row> rows) {}

  /**
   * The rows of {@code id} and its descendants down to {@code maxDepth} levels, with the
   * attributes if asked (otherwise the structure alone).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  abstract Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes);

  @Override
  public final Tree subtree(String id, int maxDepth) {
    TreeStores.checkId(id);
    checkMaxDepth(maxDepth);
    return read(r -> {
      Rows rows = subtreeRows(r, id, maxDepth, true);
      Forest forest = new Forest(rows.rows());
      Tree.Builder builder = Tree.builder().add(id, null, rows.rows().get(0).attributes());
      for (String d : forest.preorderBelow(id, maxDepth)) {
        Row row = forest.row(d);
        builder.add(d, row.parent(), row.attributes());
      }
      return builder.build();
    });
  }

  @Override
  public final List<Node> descendantNodes(String id, int maxDepth) {
    return descendantNodes(id, maxDepth, null);
  }

  @Override
  public final List<Node> descendantNodes(String id, int maxDepth, @Nullable Bson filter) {
    TreeStores.checkId(id);
    checkMaxDepth(maxDepth);
    Bson checked = filter == null ? null : checkFilter(filter);
    return read(r -> {
      Rows rows = subtreeRows(r, id, maxDepth, checked == null);
      Forest forest = new Forest(rows.rows());
      List<String> order = forest.preorderBelow(id, maxDepth);
      Map<String, Map<String, Object>> matched = null;
      if (checked != null) {
        matched = new java.util.HashMap<>();
        for (List<String> slice : slices(order)) {
          for (Document d : r.find(Filters.and(in(ID, slice), checked))) {
            matched.put(d.getString(ID), attributesOf(d));
          }
        }
      }
      int base = rows.depth() >= 0 ? rows.depth() : depthOf(r, id);
      Map<String, Integer> depths = new java.util.HashMap<>();
      depths.put(id, base);
      List<Node> out = new ArrayList<>();
      for (String d : order) {
        Row row = forest.row(d);
        int depth = depths.get(row.parent()) + 1;
        depths.put(d, depth);
        if (matched == null) {
          out.add(new Node(d, row.parent(), depth, row.attributes()));
        } else if (matched.containsKey(d)) {
          out.add(new Node(d, row.parent(), depth, matched.get(d)));
        }
      }
      return out;
    });
  }

  @Override
  public final List<Node> childNodes(String id) {
    return childNodes(id, null, Integer.MAX_VALUE, null);
  }

  @Override
  public final List<Node> childNodes(String id, @Nullable String after, int limit) {
    return childNodes(id, after, limit, null);
  }

  @Override
  public final List<Node> childNodes(String id, @Nullable String after, int limit,
      @Nullable Bson filter) {
    TreeStores.checkId(id);
    if (after != null) {
      TreeStores.checkId(after);
    }
    TreeStores.checkLimit(limit);
    Bson checked = filter == null ? null : checkFilter(filter);
    return read(r -> childNodes(r, id, after, limit, checked));
  }

  /**
   * A page of children: the document of {@code id} (and of {@code after}) by {@code _id}, then
   * one query of the sibling group in order, from after {@code after}'s place, filtered, limited.
   * Child references override it (the order is the array of the parent).
   */
  List<Node> childNodes(Reads r, String id, @Nullable String after, int limit,
      @Nullable Bson filter) {
    ChildGroup g = childGroup();
    Map<String, Document> docs = r.documents(after == null ? List.of(id) : List.of(id, after),
        g.projection());
    Document subject = docs.get(id);
    if (subject == null) {
      throw new NodeNotFoundException(id);
    }
    Bson q = g.children().apply(subject);
    if (after != null) {
      Document a = docs.get(after);
      if (a == null) {
        throw new NodeNotFoundException(after);
      }
      if (!id.equals(g.parent().apply(a))) {
        throw TreeStores.notAChild(after, id);
      }
      q = Filters.and(q, Filters.gt(g.order(), a.get(g.order())));
    }
    if (filter != null) {
      q = Filters.and(q, filter);
    }
    com.mongodb.client.FindIterable<Document> found = r.find(q)
        .sort(com.mongodb.client.model.Sorts.ascending(g.order()));
    if (limit != Integer.MAX_VALUE) {
      found = found.limit(limit);
    }
    List<Document> children = new ArrayList<>();
    found.into(children);
    int depth = (g.depth().applyAsInt(subject) >= 0 ? g.depth().applyAsInt(subject)
        : depthOf(r, id)) + 1;
    List<Node> out = new ArrayList<>();
    for (Document d : children) {
      out.add(new Node(d.getString(ID), id, depth, attributesOf(d)));
    }
    return out;
  }

  /**
   * How a pattern finds the children of a node in one query: the projection of the node's
   * document to read, the filter of its children given that document, the field that orders
   * siblings, a child's parent from its document (read with the same projection), and the node's
   * depth from its document (-1 if the pattern does not store it).
   */
  record ChildGroup(@Nullable Bson projection, Function<Document, Bson> children, String order,
      Function<Document, String> parent, java.util.function.ToIntFunction<Document> depth) {}

  /** How this pattern finds children; child references, which override the reads, return null. */
  abstract @Nullable ChildGroup childGroup();

  @Override
  public final List<Node> ancestorNodes(String id) {
    TreeStores.checkId(id);
    return read(r -> {
      List<String> ids = ancestorIds(r, id);
      Map<String, Document> docs = ids.isEmpty() ? Map.of() : r.documents(ids, null);
      List<Node> out = new ArrayList<>();
      String parent = null;
      for (String a : ids) {
        Document d = docs.get(a);
        if (d == null) {
          throw new NodeNotFoundException(a); // deleted by a change this read will not accept
        }
        out.add(new Node(a, parent, out.size(), attributesOf(d)));
        parent = a;
      }
      return out;
    });
  }

  /**
   * Checks a caller's filter: it may name the caller's fields and {@code _id}, not the
   * structure's nor Arbor's, and may not run JavaScript.
   *
   * @return the filter, encoded
   * @throws IllegalArgumentException naming the field
   */
  final Bson checkFilter(Bson filter) {
    BsonDocument encoded = filter.toBsonDocument(BsonDocument.class,
        collection.getCodecRegistry());
    checkFilterDocument(encoded, false);
    return encoded;
  }

  private void checkFilterDocument(BsonDocument d, boolean expression) {
    for (Map.Entry<String, org.bson.BsonValue> e : d.entrySet()) {
      String key = e.getKey();
      if (key.equals("$where") || key.equals("$function") || key.equals("$accumulator")) {
        throw new IllegalArgumentException("A node filter cannot use " + key
            + " (it could read the tree's structural fields)");
      }
      if (!key.startsWith("$") && !expression) {
        checkFilterField(key);
      }
      checkFilterValue(e.getValue(), expression || key.equals("$expr"));
    }
  }

  private void checkFilterValue(org.bson.BsonValue v, boolean expression) {
    if (v.isDocument()) {
      checkFilterDocument(v.asDocument(), expression);
    } else if (v.isArray()) {
      for (org.bson.BsonValue each : v.asArray()) {
        checkFilterValue(each, expression);
      }
    } else if (expression && v.isString() && v.asString().getValue().startsWith("$")
        && !v.asString().getValue().startsWith("$$")) {
      checkFilterField(v.asString().getValue().substring(1));
    }
  }

  private void checkFilterField(String path) {
    String top = path.contains(".") ? path.substring(0, path.indexOf('.')) : path;
    if (structuralFields.contains(top)) {
      throw new IllegalArgumentException("A node filter cannot name '" + top
          + "': this pattern keeps the tree structure in it (reserved: " + reservedNames() + ")");
    }
  }

  @Override
  public final Bson subtreeFilter(String id) {
    TreeStores.checkId(id);
    return read(r -> r.scoped(subtreeFilter(r, id)));
  }

  /**
   * The filter of the subtree of {@code id}; by default the ids of the subtree.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  Bson subtreeFilter(Reads r, String id) {
    List<String> ids = new ArrayList<>();
    ids.add(id);
    ids.addAll(descendantIds(r, id, Integer.MAX_VALUE));
    return in(ID, ids);
  }

  // ------------------------------------------------------------------ counts and neighbours

  @Override
  public final long childCount(String id) {
    TreeStores.checkId(id);
    return read(r -> childCountOf(r, id));
  }

  /**
   * The number of documents {@code filter} selects, in one count; when there are none, checks
   * that {@code id} exists (one more query).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  static long countOrRequire(Reads r, Bson filter, String id) {
    long n = r.count(filter);
    if (n == 0) {
      r.require(id, fields(ID));
    }
    return n;
  }

  /** The number of children of {@code id}; by default, its children's ids. */
  long childCountOf(Reads r, String id) {
    return childIds(r, id).size();
  }

  @Override
  public final long descendantCount(String id) {
    TreeStores.checkId(id);
    return read(r -> descendantCountOf(r, id));
  }

  /** The number of descendants of {@code id}; by default, its descendants' ids. */
  long descendantCountOf(Reads r, String id) {
    return descendantIds(r, id, Integer.MAX_VALUE).size();
  }

  @Override
  public final boolean isLeaf(String id) {
    TreeStores.checkId(id);
    return read(r -> childCountOf(r, id) == 0);
  }

  @Override
  public final List<String> siblings(String id) {
    TreeStores.checkId(id);
    return read(r -> {
      List<String> all = new ArrayList<>(siblingsAndSelf(r, id));
      all.remove(id);
      return all;
    });
  }

  @Override
  public final Optional<String> previousSibling(String id) {
    return neighbour(id, -1);
  }

  @Override
  public final Optional<String> nextSibling(String id) {
    return neighbour(id, 1);
  }

  /** The sibling {@code offset} places from {@code id}, if there is one. */
  private Optional<String> neighbour(String id, int offset) {
    TreeStores.checkId(id);
    return read(r -> {
      List<String> all = siblingsAndSelf(r, id);
      int at = all.indexOf(id) + offset;
      return at >= 0 && at < all.size() ? Optional.of(all.get(at)) : Optional.empty();
    });
  }

  private List<String> siblingsAndSelf(Reads r, String id) {
    String parent = parentOf(r, id);
    return parent == null ? rootIds(r) : childIds(r, parent);
  }

  /**
   * The parent of {@code id}, null for a root: by default the {@code parent} field of its
   * document, which parent references, the array of ancestors and nested sets keep.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  @Nullable String parentOf(Reads r, String id) {
    return r.require(id, fields(parentField)).getString(parentField);
  }

  /** The depth of {@code id}: the number of its ancestors, unless the pattern stores it. */
  int depthOf(Reads r, String id) {
    return ancestorIds(r, id).size();
  }

  abstract boolean descends(Reads r, String id, String ancestorId);

  @Override
  public long size() {
    return read(r -> r.count(NODES));
  }

  /**
   * Loads a whole tree into the empty store: documents computed in one pass, inserted in ordered
   * batches of {@value #LOAD_BATCH}, each fenced, under the lock, with a journal whose only step
   * is the undo (delete every document the load inserted): a load interrupted half-way is rolled
   * back by the next access.
   */
  @Override
  public void load(Tree tree) {
    requireNonNull(tree, "tree");
    checkWhole(tree);
    requireLayout();
    if (inCallersTransaction()) {
      // In the caller's transaction: one change of inserts, committed or aborted by the caller.
      Outcome o = change("load " + tree.size() + " nodes", null, c -> {
        if (c.find(NODES).projection(Projections.include(ID)).limit(1).first() != null) {
          throw new TreeException("Cannot load into collection '" + collectionName
              + "': it is not empty");
        }
        for (Document d : documentsFor(tree)) {
          c.insert(d);
        }
      });
      tell(new TreeEvent(TreeEvent.Kind.LOAD, null, null, null, null, tree.size(), o.version()));
      return;
    }
    TreeLock.Hold h;
    try {
      h = lock.acquire("load " + tree.size() + " nodes");
    } catch (RuntimeException e) {
      throw unapplied(translate(e, null), "load");
    }
    boolean journaled = false;
    boolean releasing = false;
    try {
      Reads r = new Reads(data, scope, session, h::renewIfDue, false);
      if (r.find(NODES).projection(Projections.include(ID)).limit(1).first() != null) {
        throw new TreeException("Cannot load into collection '" + collectionName
            + "': it is not empty (" + r.count(NODES) + " nodes)");
      }
      lock.beginLoad(h);
      journaled = true;
      List<BsonDocument> batch = new ArrayList<>();
      long bytes = 0;
      org.bson.codecs.Codec<Document> codec = collection.getCodecRegistry().get(Document.class);
      BsonDocument mark = Step.mark(h.version, 0);
      for (Document d : documentsFor(tree)) {
        // Marked and encoded once: the driver sends the bytes as they are.
        d.put(Step.MARK, mark);
        BsonDocument b = scope == null ? (ids.isString() ? new org.bson.RawBsonDocument(d, codec)
            : ids.document(d.toBsonDocument(BsonDocument.class, collection.getCodecRegistry())))
            : scope.stored(d.toBsonDocument(BsonDocument.class, collection.getCodecRegistry()));
        int size = Encoded.size(b);
        if (!batch.isEmpty() && (batch.size() >= loadBatchSize
            || bytes + size > Encoded.MAX_BATCH)) {
          lock.loadBatch(h, batch);
          batch = new ArrayList<>();
          bytes = 0;
        }
        batch.add(b);
        bytes += size;
      }
      if (!batch.isEmpty()) {
        lock.loadBatch(h, batch);
      }
      releasing = true;
      lock.endLoad(h);
      layoutSeen = true;
      remember(new TreeLock.Quiet(h.epoch, h.version + 1));
      tell(new TreeEvent(TreeEvent.Kind.LOAD, null, null, null, null, tree.size(), h.version));
    } catch (dev.arbor.core.LockLostException e) {
      throw e;
    } catch (RuntimeException e) {
      if (releasing) {
        throw unapplied(translate(e, null), "load"); // its journal settles it, or it stands
      }
      throw unapplied(abandonLoad(h, journaled, e), "load");
    } finally {
      h.close();
    }
  }

  /**
   * Checks a whole tree before a load or graft writes any of it: its ids in the tree's id type,
   * its attributes, the pattern's own bounds ({@link #checkLoad}) and every document's size
   * (before a document is built: their total grows with depth squared).
   */
  private void checkWhole(Tree tree) {
    for (Tree.Entry e : tree.entries()) {
      ids.checkNew(e.id());
      checkAttributes(e.id(), e.attributes());
    }
    checkLoad(tree);
    NodeTooLargeException tooLarge = Fits.check(pattern(), tree, collection.getCodecRegistry());
    if (tooLarge != null) {
      throw tooLarge;
    }
  }

  /** Undoes a load that failed before its commit (or frees the lock it took), for rethrowing. */
  private RuntimeException abandonLoad(TreeLock.Hold h, boolean journaled, RuntimeException e) {
    if (journaled) {
      lock.abortLoad(h);
    } else {
      lock.release(h);
    }
    return translate(e, null);
  }

  /**
   * Loads entries in preorder into the empty store as they come, in bounded client memory: the
   * documents of one batch of {@code loadBatchSize} and the path from a root to the current entry
   * (with, for child references, the children of the open nodes), never the whole tree. Under the
   * lock with the undo journal of {@link #load(Tree)}: each batch is one fenced insert command
   * (an id that exists is refused by the server's unique {@code _id} index), sent while the next
   * batch is built (see {@link SendAhead}), and the fields known only when a subtree is complete
   * (a nested set's {@code right}, a {@code children} array) go into documents still in hand or,
   * for those already sent, into idempotent updates sent with a later batch. A refusal met
   * midway (an entry out of preorder, a repeated id, a document too large) undoes what was
   * written: the store is empty again. In the caller's transaction, the entries are collected
   * and loaded as a {@link Tree}.
   */
  @Override
  public long load(java.util.Iterator<? extends Tree.Entry> entries) {
    requireNonNull(entries, "entries");
    if (inCallersTransaction()) {
      Tree tree = TreeStores.collect(entries);
      load(tree);
      return tree.size();
    }
    return write(null, false, entries);
  }

  /**
   * Grafts a tree as {@link #graft(String, java.util.Iterator)} does, after checking the whole
   * tree first (attributes, {@code TreeOptions.withMaxChildren}, document sizes), so that a tree
   * that cannot be stored is refused before anything is written. In the caller's transaction,
   * the nodes are inserted one by one in it (all-or-nothing by the transaction).
   */
  @Override
  public long graft(@Nullable String parentId, Tree tree) {
    requireNonNull(tree, "tree");
    if (parentId != null) {
      TreeStores.checkId(parentId);
    }
    checkWhole(tree);
    if (inCallersTransaction()) {
      return MongoTree.super.graft(parentId, tree);
    }
    return write(parentId, true, tree.entries().iterator());
  }

  /**
   * Grafts entries in preorder under {@code parentId} (or as new roots) in bounded client memory
   * and O(n / batch) round trips, all-or-nothing under the lock: the new documents go in as a
   * streamed {@link #load(java.util.Iterator)} writes them (marked, under the load's undo
   * journal), their derived fields computed from the graft point (ranks after the existing
   * siblings, ancestors and paths from the parent's, nested-set numbers from the parent's {@code
   * right}); then the writes of existing documents that make them part of the tree (the parent's
   * {@code children} array; one shift of the nested-set numbers right of the graft point) replace
   * the undo as the journal, the commit point, and run. Parent references, the array of
   * ancestors and materialized paths write no existing document: the load's end is the commit.
   * An id that exists is refused by the unique {@code _id} index when its batch is inserted, and
   * the graft undone. In the caller's transaction, the entries are collected and grafted as a
   * {@link Tree}.
   */
  @Override
  public long graft(@Nullable String parentId,
      java.util.Iterator<? extends Tree.Entry> entries) {
    requireNonNull(entries, "entries");
    if (parentId != null) {
      TreeStores.checkId(parentId);
    }
    if (inCallersTransaction()) {
      return graft(parentId, TreeStores.collect(entries));
    }
    return write(parentId, true, entries);
  }

  /**
   * Writes a streamed load ({@code graft} false: the store must be empty) or a graft under the
   * lock, with the load's undo journal.
   */
  private long write(@Nullable String parentId, boolean graft,
      java.util.Iterator<? extends Tree.Entry> entries) {
    requireLayout();
    String what = (graft ? "graft" : "load") + " a stream of nodes" + (!graft ? ""
        : parentId == null ? " as roots" : " under '" + parentId + "'");
    TreeLock.Hold h;
    try {
      h = lock.acquire(what);
    } catch (RuntimeException e) {
      throw unapplied(translate(e, null), what);
    }
    boolean journaled = false;
    boolean committing = false;
    try {
      Reads r = new Reads(data, scope, session, h::renewIfDue, false);
      Document parent = null;
      boolean empty = r.find(NODES).projection(Projections.include(ID)).limit(1).first() == null;
      if (!graft && !empty) {
        throw new TreeException("Cannot load into collection '" + collectionName
            + "': it is not empty (" + r.count(NODES) + " nodes)");
      }
      if (parentId != null) {
        parent = r.require(parentId, null);
        String problem = layoutProblem(parent);
        if (problem != null) {
          throw new TreeException("Cannot graft under node '" + parentId + "': it is not in the "
              + pattern() + " layout: " + problem + " (run check() to see all problems,"
              + " repair() to complete derivable fields)");
        }
      }
      lock.beginLoad(h);
      journaled = true;
      StreamLoad load;
      try (SendAhead ahead = new SendAhead("arbor-load-" + collectionName)) {
        load = new StreamLoad(this, r, parent, empty, h.version, loadBatchSize,
            new StreamLoad.Sink() {
              @Override
              public void insert(List<BsonDocument> documents, List<String> ids) {
                ahead.send(() -> insertBatch(h, documents, ids));
              }

              @Override
              public void update(
                  List<com.mongodb.client.model.WriteModel<BsonDocument>> updates) {
                ahead.send(() -> lock.loadUpdates(h, updates));
              }
            });
        while (entries.hasNext()) {
          load.add(requireNonNull(entries.next(), "entry"));
        }
        ahead.inline();
        load.finish();
        ahead.await();
      }
      List<Step> fixes = load.fixes();
      committing = true;
      long version;
      if (fixes.isEmpty()) {
        lock.endLoad(h);
        version = h.version;
      } else {
        version = lock.commitLoad(h, fixes).version();
      }
      layoutSeen = true;
      remember(new TreeLock.Quiet(h.epoch, version + 1));
      long n = load.count();
      tell(new TreeEvent(graft ? TreeEvent.Kind.GRAFT : TreeEvent.Kind.LOAD, null, null,
          parentId, null, n, version));
      return n;
    } catch (dev.arbor.core.LockLostException e) {
      throw e;
    } catch (RuntimeException e) {
      if (committing) {
        // the journal, undo or redo, settles it at the next access
        throw unapplied(translate(e, null), what);
      }
      throw unapplied(abandonLoad(h, journaled, e), what);
    } finally {
      h.close();
    }
  }

  /**
   * Inserts one batch of a streamed load or graft, fenced; a node whose id exists already (the
   * server's unique {@code _id} index refuses it) is a {@link DuplicateNodeException} naming it.
   */
  private void insertBatch(TreeLock.Hold h, List<BsonDocument> documents, List<String> ids) {
    try {
      lock.loadBatch(h, documents);
    } catch (MongoBulkWriteException e) {
      com.mongodb.bulk.BulkWriteError error = e.getWriteErrors().get(0);
      int at = error.getIndex() - 1; // led by its insert fence
      if (TreeLock.duplicateId(error) && at >= 0 && at < ids.size()) {
        throw new DuplicateNodeException(ids.get(at));
      }
      throw e;
    }
  }

  /**
   * Checks, before anything is written, that the pattern can store {@code tree}; by default it
   * can.
   *
   * @throws TreeException naming the node it cannot store
   */
  void checkLoad(Tree tree) {}

  /** The documents of a whole tree, derived fields computed in one pass over its preorder. */
  abstract Iterable<Document> documentsFor(Tree tree);

  @Override
  public Tree snapshot() {
    return read(r -> forest(r, true).toTree());
  }

  /**
   * Streams the forest in preorder from server-side sorted reads (see {@link KeyedPreorder}: the
   * children of many nodes a query; {@link ListedPreorder} for child references; nested sets by
   * one cursor in {@code left} order), holding a bounded read-ahead and a slice of documents per
   * level in client memory, never the tree.
   *
   * <p><b>What it guarantees.</b> Without isolated reads, nothing beyond each query's own. With
   * them, the stream first waits, as every read does, until no change is in flight, and notes the
   * version; when the last entry has been read it reads the lock document again. If a change took
   * effect in between (or one is in flight), the entries delivered may mix the tree before and
   * after it: the stream then throws {@link dev.arbor.core.TreeChangedException} instead of
   * ending, and the caller reads again (an empty stream, which delivered nothing, retries by
   * itself). A stream that ends normally delivered exactly the tree at the version noted first.
   * A structure the walk cannot follow (a cycle) throws {@link TreeException}, or {@code
   * TreeChangedException} if a change took effect meanwhile. In a transaction of the caller's,
   * the forest is read whole, as {@link #snapshot()} does.
   */
  @Override
  public java.util.stream.Stream<Tree.Entry> entries() {
    if (inCallersTransaction()) {
      return snapshot().entries().stream();
    }
    Streamed it = new Streamed();
    return java.util.stream.StreamSupport.stream(java.util.Spliterators.spliteratorUnknownSize(
        it, java.util.Spliterator.ORDERED | java.util.Spliterator.NONNULL), false)
        .onClose(it::close);
  }

  /**
   * The pattern's preorder walk over {@code r}: by default a {@link KeyedPreorder} over {@link
   * #preorderKeys()}.
   */
  PreorderCursor preorder(Reads r) {
    return new KeyedPreorder(r, requireNonNull(preorderKeys(), "preorderKeys"),
        this::attributesOf);
  }

  /**
   * How the pattern's children name their parent, for {@link KeyedPreorder}; null for a pattern
   * that walks otherwise (and overrides {@link #preorder}).
   */
  KeyedPreorder.@Nullable Keys preorderKeys() {
    return null;
  }

  /** A preorder walk between two checks of the lock document. */
  private final class Streamed implements PreorderCursor {
    private TreeLock.@Nullable Quiet before;
    private PreorderCursor walk;
    private long delivered;
    private boolean ended;

    Streamed() {
      start();
    }

    private void start() {
      if (isolatedReads) {
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
        before = s.asQuiet();
        remember(before);
      }
      walk = preorder(new Reads(data, scope, session, () -> {}, false));
    }

    @Override
    public boolean hasNext() {
      if (ended) {
        return false;
      }
      for (;;) {
        boolean more;
        try {
          more = walk.hasNext();
        } catch (MongoException e) {
          throw e;
        } catch (RuntimeException e) {
          TreeLock.State now = changed();
          if (now != null) {
            throw changedWhileStreaming(now, e);
          }
          throw e;
        }
        if (more) {
          return true;
        }
        walk.close();
        TreeLock.State now = changed();
        if (now == null) {
          ended = true;
          return false;
        }
        if (delivered > 0) {
          throw changedWhileStreaming(now, null);
        }
        start(); // nothing delivered yet: read again
      }
    }

    /** The lock's state if a change took effect since {@link #before}, else null. */
    private TreeLock.@Nullable State changed() {
      if (before == null) {
        return null;
      }
      TreeLock.State now = lock.read();
      return before.same(now) ? null : now;
    }

    private RuntimeException changedWhileStreaming(TreeLock.State now,
        @Nullable Throwable cause) {
      close();
      RuntimeException e = new dev.arbor.core.TreeChangedException("the tree in collection '"
          + collectionName + "' changed while it was streamed (version " + before.version()
          + " when it started, " + now.version + (now.quiet() ? "" : " with a change in flight")
          + " at the end), after " + delivered + " entries: they may mix the tree before and"
          + " after the change; read it again");
      if (cause != null) {
        e.addSuppressed(cause);
      }
      return e;
    }

    @Override
    public Tree.Entry next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      delivered++;
      return walk.next();
    }

    @Override
    public void close() {
      ended = true;
      walk.close();
    }
  }

  /** Every node's structure (and attributes, if asked), decoded by the pattern from one scan. */
  abstract Forest forest(Reads r, boolean withAttributes);

  @Override
  public List<Problem> check() {
    return read(this::checkNow);
  }

  private List<Problem> checkNow(Reads r) {
    List<Problem> problems = new ArrayList<>();
    Map<String, Document> byId = new LinkedHashMap<>();
    // Every document but Arbor's lock and journal: one whose _id is not a string is not a node
    // the store can read, and is reported. Read in batches, and each kept with only what the
    // checks read (the structural fields of every pattern, its values shared with equal ones
    // read before), so that a tree of hundreds of thousands of nodes is checked in a small
    // heap; the first is kept whole, for the message that lists its fields.
    Set<String> structure = new HashSet<>();
    for (TreePattern p : TreePattern.values()) {
      structure.addAll(Layouts.fields(p, names));
    }
    Map<Object, Object> shared = new HashMap<>();
    try (MongoCursor<Document> docs = r.find(Filters.exists(ID + ".arbor", false))
        .batchSize(CHECK_BATCH).iterator()) {
      while (docs.hasNext()) {
        Document d = docs.next();
        Object id = d.get(ID);
        if (!(id instanceof String s) || s.isEmpty()) {
          problems.add(new Problem(String.valueOf(id), "_id is not a non-empty string"));
          continue;
        }
        byId.put(s, byId.isEmpty() ? d : slim(d, structure, shared));
      }
    }
    Problem layout = Layouts.problem(pattern(), byId.values(), collectionName, names);
    if (layout != null) { // the pattern's own checks would only list its missing fields
      problems.add(0, layout);
      return problems;
    }
    checkDocuments(byId, problems);
    return problems;
  }

  /** The batch size of the check's scan. */
  private static final int CHECK_BATCH = 1_000;

  /**
   * {@code d} with only its {@code _id} and the fields in {@code keep}, in a {@link SlimDocument};
   * each name, each string or array value and each string in an array replaced by an equal one
   * in {@code shared} if there is one (siblings share their parent, path and ancestors, and every
   * document below a node names it).
   */
  private static Document slim(Document d, Set<String> keep, Map<Object, Object> shared) {
    int n = 0;
    for (String k : d.keySet()) {
      n += k.equals(ID) || keep.contains(k) ? 1 : 0;
    }
    String[] keys = new String[n];
    Object[] values = new Object[n];
    int i = 0;
    for (Map.Entry<String, Object> e : d.entrySet()) {
      if (e.getKey().equals(ID) || keep.contains(e.getKey())) {
        Object v = e.getValue();
        keys[i] = (String) shared.computeIfAbsent(e.getKey(), x -> x);
        if (v instanceof List<?> list) {
          // its strings shared too: an array of ancestors names each ancestor in every document
          // below it
          List<Object> elements = new ArrayList<>(list.size());
          for (Object element : list) {
            elements.add(element instanceof String ? shared.computeIfAbsent(element, x -> x)
                : element);
          }
          v = elements;
        }
        values[i++] = v instanceof String && !e.getKey().equals(ID) || v instanceof List<?>
            ? shared.computeIfAbsent(v, x -> x) : v;
      }
    }
    // One array of names for every document with the same ones.
    return new SlimDocument((String[]) shared.computeIfAbsent(new Names(keys), x -> keys),
        values);
  }

  /** An array of field names as a key of the shared values: equal when the names are. */
  private record Names(String[] names) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Names other && java.util.Arrays.equals(names, other.names);
    }

    @Override
    public int hashCode() {
      return java.util.Arrays.hashCode(names);
    }
  }

  /**
   * Completes a stuck or interrupted change, then, under the lock, rewrites the derived and
   * missing structural fields from the authoritative ones in one all-or-nothing change, and
   * returns what {@link #check()} still finds.
   */
  @Override
  public List<Problem> repair() {
    requireLayout(); // never rewrites a collection into another pattern: convert does
    String stuck = lock.retryStuck();
    if (stuck != null) {
      return List.of(new Problem("", stuck));
    }
    lock.recover();
    forget();
    long[] rewritten = new long[1];
    Outcome o = change("repair", null, c -> {
      List<Document> docs = new ArrayList<>();
      // Natural order: siblings without a rank are ranked in insertion order, whatever index a
      // server would otherwise choose for the scan.
      c.find(NODES).sort(new Document("$natural", 1)).into(docs);
      planRepair(c, docs);
      rewritten[0] = c.steps().size();
    });
    if (o.version() >= 0) {
      LOG.info("Tree '{}': repair rewrote {} documents", collectionName, rewritten[0]);
      tell(new TreeEvent(TreeEvent.Kind.REPAIR, null, null, null, null, rewritten[0],
          o.version()));
    }
    return check();
  }

  /**
   * Plans the steps that rebuild derived fields and fill in missing ones, from a scan of every
   * node document (in the collection's natural order, which orders siblings that have no rank).
   */
  abstract void planRepair(Change c, List<Document> docs);

  /**
   * Plans rank writes for every sibling group in which a rank is missing, not a number, or
   * repeated: the group is renumbered in its current order (ranked nodes by rank, then the others
   * in scan order).
   *
   * @param parentOf the parent of each document, null for a root (documents whose parent is
   *     unknown are left out)
   */
  final void planRankRepair(Change c, List<Document> docs, Function<Document, Object> parentOf) {
    Map<Object, List<Document>> groups = new LinkedHashMap<>();
    for (Document d : docs) {
      groups.computeIfAbsent(Optional.ofNullable(parentOf.apply(d)), k -> new ArrayList<>())
          .add(d);
    }
    for (List<Document> group : groups.values()) {
      Set<Long> seen = new HashSet<>();
      boolean sound = true;
      for (Document d : group) {
        sound &= d.get(rankField) instanceof Number n && seen.add(n.longValue());
      }
      if (sound) {
        continue;
      }
      List<Document> ordered = new ArrayList<>(group);
      ordered.sort(Comparator.comparing(
          (Document d) -> d.get(rankField) instanceof Number n ? n.longValue() : Long.MAX_VALUE));
      long rank = 0;
      for (Document d : ordered) {
        c.set(d.get(ID), Updates.set(rankField, rank));
        rank += Ranks.GAP;
      }
    }
  }

  /** Checks the pattern's fields of every document, appending problems that name the node. */
  abstract void checkDocuments(Map<String, Document> byId, List<Problem> problems);

  // ------------------------------------------------------------------ attributes and documents

  /**
   * Checks attribute names and values before anything is written.
   *
   * @throws IllegalArgumentException naming the node and the attribute
   */
  final void checkAttributes(String id, Map<String, ?> attributes) {
    for (Map.Entry<String, ?> e : attributes.entrySet()) {
      String name = e.getKey();
      if (name.equals(ID) || structuralFields.contains(name)) {
        throw new IllegalArgumentException("Attribute '" + name + "' of node '" + id
            + "' is reserved by this pattern for the tree structure (reserved: "
            + reservedNames() + ")");
      }
      if (AttributeNames.fieldNameProblem(name) != null) {
        throw new IllegalArgumentException("Attribute name '" + name + "' of node '" + id
            + "' cannot be a MongoDB field name (empty, starts with '$', contains '.' or NUL)");
      }
      String nested = AttributeNames.nestedProblem(e.getValue());
      if (nested != null) {
        throw new IllegalArgumentException("Attribute '" + name + "' of node '" + id
            + "' holds " + nested);
      }
      try {
        collection.getCodecRegistry().get(Document.class).encode(
            new BsonDocumentWriter(new BsonDocument()), new Document(name, e.getValue()),
            EncoderContext.builder().build());
      } catch (CodecConfigurationException | IllegalArgumentException
          | org.bson.BSONException ex) {
        throw new IllegalArgumentException("Attribute '" + name + "' of node '" + id
            + "' cannot be stored in BSON: " + ex.getMessage(), ex);
      }
    }
  }

  private List<String> reservedNames() {
    List<String> names = new ArrayList<>(structuralFields);
    names.add(ID);
    names.sort(null);
    return names;
  }

  /** A new node document: {@code _id}, then the structure, then the attributes. */
  final Document newDocument(String id, Document structure, Map<String, ?> attributes) {
    Document d = new Document(ID, id);
    d.putAll(structure);
    d.putAll(attributes);
    return d;
  }

  /** The attributes of a stored document: every field but {@code _id} and the structure. */
  final Map<String, Object> attributesOf(Document d) {
    Map<String, Object> attributes = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : d.entrySet()) {
      if (!e.getKey().equals(ID) && !structuralFields.contains(e.getKey())) {
        attributes.put(e.getKey(), e.getValue());
      }
    }
    return TreeStores.copyAttributes(attributes);
  }

  /** Projection of {@code _id} and the given fields. */
  static Bson fields(String... names) {
    return Projections.include(names);
  }

  /**
   * Reads, in one query, the document of the subject of an insert or move and of its position's
   * anchor, and checks them in the reference's order: for an insert the id must be new, for a move
   * it must exist; then the anchor must exist.
   */
  final Map<String, Document> subjectAndAnchor(Reads r, String id, boolean insert,
      Position position, @Nullable Bson projection) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    String anchor = position.anchor();
    Map<String, Document> docs = r.documents(anchor == null ? List.of(id) : List.of(id, anchor),
        projection);
    if (insert && docs.containsKey(id)) {
      throw new DuplicateNodeException(id);
    }
    for (Document d : docs.values()) {
      String problem = layoutProblem(d);
      if (problem != null) {
        throw new TreeException("Node '" + d.get(ID) + "' is not in the " + pattern()
            + " layout: " + problem + " (run check() to see all problems, repair() to complete"
            + " derivable fields)");
      }
    }
    if (!insert && !docs.containsKey(id)) {
      throw new NodeNotFoundException(id);
    }
    if (anchor != null && !docs.containsKey(anchor)) {
      throw new NodeNotFoundException(anchor);
    }
    return docs;
  }

  /** Translates a duplicate-key error on {@code _id} into {@link DuplicateNodeException}. */
  static RuntimeException translate(RuntimeException e, @Nullable String id) {
    if (e instanceof MongoWriteException w
        && w.getError().getCategory() == ErrorCategory.DUPLICATE_KEY && id != null) {
      return new DuplicateNodeException(id);
    }
    if (e instanceof MongoBulkWriteException b && id != null && !b.getWriteErrors().isEmpty()
        && ErrorCategory.fromErrorCode(b.getWriteErrors().get(0).getCode())
            == ErrorCategory.DUPLICATE_KEY) {
      return new DuplicateNodeException(id);
    }
    if (e instanceof MongoException m && id == null
        && ErrorCategory.fromErrorCode(m.getCode()) == ErrorCategory.DUPLICATE_KEY) {
      return new TreeException("A write met a duplicate _id: " + m.getMessage(), m);
    }
    return e;
  }

  /** The ids of a query's results, in order. */
  static List<String> ids(Iterable<Document> docs) {
    List<String> out = new ArrayList<>();
    for (Document d : docs) {
      out.add(d.getString(ID));
    }
    return out;
  }

  /** Plans deletes of the documents of {@code ids}, in slices small enough for one statement. */
  static void deleteAll(Change c, List<String> ids) {
    for (List<String> slice : slices(ids)) {
      c.deleteMany(in(ID, slice));
    }
  }

  /**
   * {@code ids} in slices small enough for one {@code $in} statement: at most 1 MB of encoded ids
   * (and 20 000 ids) each.
   */
  static List<List<String>> slices(List<String> ids) {
    List<List<String>> out = new ArrayList<>();
    int start = 0;
    long bytes = 0;
    for (int i = 0; i < ids.size(); i++) {
      long size = ids.get(i).length() * 3L + 16;
      if (i > start && (i - start == 20_000 || bytes + size > 1_000_000)) {
        out.add(ids.subList(start, i));
        start = i;
        bytes = 0;
      }
      bytes += size;
    }
    if (start < ids.size()) {
      out.add(ids.subList(start, ids.size()));
    }
    return out;
  }

  static void checkMaxDepth(int maxDepth) {
    if (maxDepth < 0) {
      throw new IllegalArgumentException("maxDepth < 0: " + maxDepth);
    }
  }

  /** A filter that matches no document, for probes that must not write anything. */
  static Bson nothing() {
    return Filters.exists(ID, false);
  }

  /** The sibling group whose {@code field} equals {@code value} (null: the roots). */
  static Bson group(String field, @Nullable Object value) {
    return value == null ? isNull(field) : eq(field, value);
  }

  /** Documents whose {@code field} is null or missing, lock and journal excluded. */
  static Bson isNull(String field) {
    return Filters.and(eq(field, null), NODES);
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + collection.getNamespace()
        + (scope == null ? "" : ", " + scope) + "]";
  }
}
