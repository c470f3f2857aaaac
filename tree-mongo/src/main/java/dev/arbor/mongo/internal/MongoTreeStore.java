package dev.arbor.mongo.internal;

import static dev.arbor.mongo.internal.bson.Queries.checkMaxDepth;
import static dev.arbor.mongo.internal.bson.Queries.translate;
import static dev.arbor.mongo.internal.bson.Queries.unapplied;
import static java.util.Objects.requireNonNull;

import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexModel;
import dev.arbor.core.Deletion;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeEvent;
import dev.arbor.core.TreeListener;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.MongoTree;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.TypedTree;
import dev.arbor.mongo.internal.bson.FieldNames;
import dev.arbor.mongo.internal.bson.NodeDocuments;
import dev.arbor.mongo.internal.bson.NodeIds;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.layout.Layout;
import dev.arbor.mongo.internal.layout.LayoutContext;
import dev.arbor.mongo.internal.layout.Layouts;
import dev.arbor.mongo.internal.layout.Ranks;
import dev.arbor.mongo.internal.layout.Walker;
import dev.arbor.mongo.internal.protocol.CallersTransactionProtocol;
import dev.arbor.mongo.internal.protocol.FencedJournalProtocol;
import dev.arbor.mongo.internal.protocol.Footprint;
import dev.arbor.mongo.internal.protocol.LaneProtocol;
import dev.arbor.mongo.internal.protocol.Lanes;
import dev.arbor.mongo.internal.protocol.Outcome;
import dev.arbor.mongo.internal.protocol.OwnTransactionProtocol;
import dev.arbor.mongo.internal.protocol.Planner;
import dev.arbor.mongo.internal.protocol.Protocol;
import dev.arbor.mongo.internal.protocol.QuietVersion;
import dev.arbor.mongo.internal.protocol.ReadRetry;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.protocol.Step;
import dev.arbor.mongo.internal.protocol.Transactions;
import dev.arbor.mongo.internal.protocol.TreeLock;
import dev.arbor.mongo.internal.read.KeyedPreorder;
import dev.arbor.mongo.internal.read.NodeReads;
import dev.arbor.mongo.internal.read.StreamedEntries;
import dev.arbor.mongo.internal.read.TreeCheck;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The store every pattern shares, its {@link Layout} the only part that differs: one document per
 * node with {@code _id} = the node id and the attributes as top-level fields; the contract's
 * argument checks; attribute validation; bulk loads in batches ({@link TreeLoads}); snapshots,
 * streams and checks by one scan ({@link StreamedEntries}, {@link TreeCheck}); and the way every
 * operation runs: a read gets a {@link Reads} context and is isolated from concurrent changes, a
 * change ({@link TreeChanges}) gets a {@link Change} context in which the layout plans its steps,
 * which a protocol then makes all-or-nothing (see {@link TreeLock} and {@link Transactions}).
 *
 * <p>Built by {@link TreePattern}, which gives the layout of its pattern; a {@link #withSession}
 * view is a store of its own built from the store it views, sharing its layout, lock,
 * transactions, quiet version and listeners, and differing only in its session and protocol.
 * Thread-safe, as {@link MongoTree} says.
 */
public final class MongoTreeStore implements MongoTree {
  public static final String ID = "_id";
  static final int LOAD_BATCH = 10_000;
  /**
   * Node documents: the lock and journal documents have non-string ids. For a tree of typed ids
   * ({@link TreeOptions#withIdType}) the reads and steps rewrite it to the tree's id type ({@link
   * NodeIds#filter}).
   */
  public static final Bson NODES = Filters.type(ID, BsonType.STRING);

  /** The pattern's fields, documents, plans and queries. */
  public final Layout layout;
  public final MongoCollection<Document> collection;
  public final String collectionName;
  public final ServerCapabilities capabilities;
  /** The collection as Arbor reads it: from the primary, whatever the caller's preference. */
  public final MongoCollection<Document> data;
  /** The tree of the collection this store sees, or null: the collection holds one tree. */
  public final @Nullable Scope scope;
  /** How node ids are stored ({@link TreeOptions#withIdType}). */
  public final NodeIds ids;
  public final TreeLock lock;
  public final Transactions transactions;
  final boolean isolatedReads;
  /** The names of the structural fields ({@link TreeOptions#withFieldName}). */
  public final FieldNames names;
  /** Attribute checks and the mapping between nodes and documents. */
  public final NodeDocuments documents;
  /** The contract's changes, planned by the layout. */
  private final TreeChanges changes = new TreeChanges(this);
  /** The latest version at which this store (or a view of it) saw the tree quiet. */
  public final QuietVersion known;
  /**
   * Called on the calling thread with the version at which each change took effect, or at which a
   * change that threw or did nothing saw the tree: the order of these versions is the serial
   * order of the changes (tests replay it). A view calls its store's.
   */
  private final java.util.function.LongConsumer onSettled;
  /** Documents per load batch ({@link ServerCapabilities#loadBatchSize}; tests lower it). */
  final int loadBatchSize;
  private final List<TreeListener> listeners;
  /** The caller's session of a {@link #withSession} view, or null. */
  final @Nullable ClientSession session;
  /** The store this is a view of, or null. */
  private final @Nullable MongoTreeStore viewOf;
  /** The fenced lock and journal with this store's session: loads and streams always use it. */
  private final FencedJournalProtocol fenced;
  /** The protocol of this store's or view's calls ({@link #protocol()}). */
  private final Protocol protocol;
  /** The lanes of this store's changes, or null: they hold the tree's lock ({@link Lanes}). */
  public final @Nullable Lanes lanes;
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(MongoTreeStore.class);
  /** What the store checks before it writes ({@link #requireLayout()}). */
  private final FirstWrite firstWrite;

  /**
   * A store of {@code pattern} over {@code collection}: checks the scope and the server's
   * options, chooses the {@link Walker}, and builds the pattern's layout with what it needs.
   */
  public MongoTreeStore(TreePattern pattern, MongoCollection<Document> collection,
      ServerCapabilities capabilities) {
    this.collection = requireNonNull(collection, "collection");
    this.names = capabilities.names();
    this.collectionName = collection.getNamespace().getCollectionName();
    this.capabilities = capabilities;
    this.isolatedReads = capabilities.isolatedReads();
    this.loadBatchSize = capabilities.loadBatchSize();
    Set<String> structuralFields = Set.copyOf(names.of(pattern));
    capabilities.checkScope(pattern, structuralFields); // fixes the scope
    this.scope = capabilities.scope();
    this.listeners = capabilities.listeners();
    this.viewOf = null;
    this.session = null;
    MongoCollection<Document> primary = collection.withReadPreference(ReadPreference.primary());
    this.ids = new NodeIds(capabilities.idType(), names);
    this.data = scope == null ? ids.collection(primary) : scope.collection(primary);
    // The lock's state is read at majority: never a state a failover would roll back.
    this.lock = new TreeLock(collection.withDocumentClass(BsonDocument.class)
        .withReadPreference(ReadPreference.primary()).withWriteConcern(WriteConcern.MAJORITY)
        .withReadConcern(com.mongodb.ReadConcern.MAJORITY),
        scope, capabilities.leaseMillis(), capabilities.waitMillis(), capabilities.timing(),
        capabilities.renewals(), capabilities.sender(), capabilities.batchStatements(),
        capabilities.inlineJournalBytes(), capabilities.log(), capabilities.keepAlive());
    // The server's checks, each command bounded by the lock's command limit, made again after a
    // cut or stalled connection as a read is (docs/guarantees.md).
    ReadRetry.opening(lock.lock, () -> capabilities.checkServer(lock.lock.commandLimitMillis()));
    this.transactions = new Transactions(capabilities.client(), data, lock,
        capabilities.transactionMaxDocuments());
    this.onSettled = capabilities.onSettled();
    this.known = new QuietVersion();
    Set<String> fields = new HashSet<>(structuralFields);
    fields.add(Step.MARK);
    fields.add(TreeLock.STATE);
    fields.add(TreeLock.JOURNAL);
    fields.add(Lanes.FIELD);
    if (scope != null) {
      fields.add(scope.field());
    }
    this.documents = new NodeDocuments(Set.copyOf(fields), collection.getCodecRegistry());
    this.layout = Layouts.layout(pattern,
        new LayoutContext(names, ids, scope, new Ranks(names.rank),
        documents, capabilities, collectionName, Walker.of(scope, ids, capabilities)));
    // Lanes where a change can hold only what it touches (see LaneProtocol); nested sets
    // renumber everything to the right of a change and keep the tree's lock. A store with lanes
    // turned off still has them to drain before it takes the tree's lock (another store of the
    // tree may run changes in lanes).
    Lanes drained = capabilities.client() == null && pattern != TreePattern.NESTED_SETS
        ? new Lanes(lock, data, scope, capabilities.renewals()) : null;
    this.lanes = capabilities.subtreeLocks() ? drained : null;
    lock.lanes = drained;
    this.firstWrite = new FirstWrite(pattern, layout, data, scope, names,
        () -> lock.lock.commandLimitMillis(), new UniqueIndexes(primary, lock.lock.timing,
        collection.getNamespace().getFullName(), scope == null ? null : scope.field()));
    this.fenced = newFenced();
    this.protocol = choose();
  }

  /**
   * A view of {@code store} with the caller's {@code session}: it shares the store's layout,
   * lock, transactions, quiet version and listeners, and differs only in its session and
   * protocol.
   */
  private MongoTreeStore(MongoTreeStore store, ClientSession session) {
    this.collection = store.collection;
    this.names = store.names;
    this.collectionName = store.collectionName;
    this.capabilities = store.capabilities;
    this.isolatedReads = store.isolatedReads;
    this.loadBatchSize = store.loadBatchSize;
    this.scope = store.scope;
    this.listeners = store.listeners;
    this.viewOf = store;
    this.session = session;
    this.ids = store.ids;
    this.data = store.data;
    this.lock = store.lock;
    this.transactions = store.transactions;
    this.onSettled = store.onSettled;
    this.known = store.known;
    this.documents = store.documents;
    this.layout = store.layout;
    this.lanes = store.lanes;
    this.firstWrite = store.firstWrite;
    this.fenced = newFenced();
    this.protocol = choose();
  }

  /** The pattern this store implements. */
  public TreePattern pattern() {
    return layout.pattern();
  }

  /** The fields this pattern reserves for the structure, besides {@code _id}. */
  public Set<String> structuralFields() {
    return documents.structuralFields();
  }

  @Override
  public void ensureIndexes() {
    firstWrite.requireForIndexes(); // a unique index of yours, a tree of another pattern
    List<IndexModel> indexes = layout.scopedIndexes(collection.getCodecRegistry());
    if (!indexes.isEmpty()) {
      try {
        collection.createIndexes(indexes);
      } catch (com.mongodb.MongoCommandException e) {
        throw firstWrite.uniqueIndexes.conflict(e);
      }
    }
  }

  // ------------------------------------------------------------------ the protocol

  /**
   * The protocol of this store's calls, chosen once when it is opened: a store opened with its
   * client makes each change in a transaction of its own where the server runs them ({@link
   * OwnTransactionProtocol}); one opened without uses the fenced lock and journal; a {@link
   * #withSession} view runs in the caller's transaction while its session is in one.
   */
  public Protocol protocol() {
    return protocol;
  }

  private Protocol choose() {
    java.util.function.LongConsumer settled = v -> settledAt(v);
    Protocol own = capabilities.client() != null
        ? new OwnTransactionProtocol(transactions, session, fenced, settled)
        : lanes != null ? new LaneProtocol(lanes, fenced, data, scope, isolatedReads,
            capabilities.optimisticChanges(), settled)
        : fenced;
    return session == null ? own
        : new CallersTransactionProtocol(transactions, session, own, isolatedReads);
  }

  /**
   * Whether this store's changes run in transactions of its own: it was opened with its client,
   * and the server runs them (probed once).
   */
  public boolean usesTransactions() {
    return transactions.available();
  }

  /** The fenced lock and journal with this store's session: loads and streams always use it. */
  public FencedJournalProtocol fenced() {
    return fenced;
  }

  private FencedJournalProtocol newFenced() {
    return new FencedJournalProtocol(lock, data, scope, session, isolatedReads, known,
        v -> settledAt(v));
  }

  private void settledAt(long version) {
    onSettled.accept(version);
  }

  @Override
  public MongoTree withSession(ClientSession session) {
    requireNonNull(session, "session");
    return new MongoTreeStore(viewOf != null ? viewOf : this, session);
  }

  @Override
  public <T> TypedTree<T> withDocumentClass(Class<T> documentClass) {
    return new TypedMongoTree<>(this, documentClass, collection.getCodecRegistry());
  }

  /** Whether this is a view whose session is in a transaction of the caller's. */
  boolean inCallersTransaction() {
    return session != null && protocol().inCallersTransaction();
  }

  /**
   * Runs a structural change: {@code planner} reads what it needs through its {@link Change} and
   * plans its steps; the store's {@link #protocol()} then applies them all-or-nothing.
   */
  public Outcome change(String what, @Nullable String subject, Planner planner) {
    return change(what, subject, null, planner);
  }

  /**
   * Runs a structural change that holds only {@code footprint} where the store's protocol can
   * (null: the tree).
   */
  public Outcome change(String what, @Nullable String subject, @Nullable Footprint footprint,
      Planner planner) {
    Outcome o;
    try {
      requireLayout(what);
      o = footprint == null ? protocol().change(what, planner)
          : protocol().change(what, footprint, planner);
    } catch (RuntimeException e) {
      dev.arbor.core.TreeException shared = lock.lock.sharedIds(e);
      throw shared != null ? shared : unapplied(translate(e, subject), what);
    }
    firstWrite.seen(); // the nodes it wrote, if the collection was empty, are of this pattern
    return o;
  }

  /** Refuses, before anything is written, what stops a write: see {@link FirstWrite}. */
  public void requireLayout() {
    firstWrite.require(false);
  }

  /**
   * {@link #requireLayout()} before the change {@code what}: its read is made again after an I/O
   * error or a timeout (a stalled connection) until the lock wait runs out, as a change's other
   * reads are, and then ends the call {@code NOT_APPLIED}, never with a raw driver exception.
   */
  public void requireLayout(String what) {
    long start = lock.lock.timing.nanoTime();
    for (;;) {
      try {
        firstWrite.require(true);
        return;
      } catch (com.mongodb.MongoException e) {
        if (!TreeLock.transientError(e)) {
          throw unapplied(e, what);
        }
        lock.lock.retryPause(e, start, x -> unapplied(x, what));
      }
    }
  }

  /** Notes that the collection holds nodes of this pattern (a load wrote them). */
  void layoutSeen() {
    firstWrite.seen();
  }

  /** Records a quiet version seen; keeps the latest of an epoch. */
  public void remember(TreeLock.Quiet seen) {
    known.remember(seen);
  }

  /** Forgets the quiet version (tests: makes the next change take the lock first). */
  public void forget() {
    known.forget();
  }

  /**
   * Runs a read through the store's {@link #protocol()}: isolated unless isolation is off, and made
   * again after an I/O error or a timeout until the lock wait runs out ({@link #checked}).
   */
  public <T> T read(Function<Reads, T> body) {
    return checked(() -> protocol().read(body));
  }

  /**
   * As {@link #read(Function)}, without first looking at the collection's layout: for {@code
   * check()}, which reports a collection laid out in another pattern as its problem.
   */
  public <T> T readAsItIs(Function<Reads, T> body) {
    return retrying(() -> protocol().read(body));
  }

  /**
   * Runs {@code read}, made again after a transient driver error (a cut connection, a stalled one
   * past a time limit, a primary stepping down) until the lock wait runs out, then ended {@code
   * NOT_APPLIED} ({@link ReadRetry}); in the caller's transaction, once, its errors as the driver
   * gives them (their labels tell the caller's retry loop what to do).
   */
  private <T> T retrying(java.util.function.Supplier<T> read) {
    return protocol().inCallersTransaction() ? read.get() : ReadRetry.run(lock.lock, read);
  }

  /**
   * {@link #retrying} {@code read}, after the store's first read has refused a collection laid
   * out in another pattern ({@link FirstWrite#requireForReads}, made again with the read).
   */
  private <T> T checked(java.util.function.Supplier<T> read) {
    return retrying(() -> {
      firstWrite.requireForReads();
      return read.get();
    });
  }

  /** The ids of {@code nodes}, in order. */
  private static List<String> ids(List<Node> nodes) {
    return nodes.stream().map(Node::id).toList();
  }

  /**
   * Runs a read of {@code top} and of nodes it depends on (its children, subtree or ancestors),
   * which needs no quiet tree where the protocol can tell that changes elsewhere did not touch
   * it ({@link Protocol#read(String, Function, Function)}).
   */
  private <T> T readBelow(String top, Function<Reads, T> body,
      Function<T, java.util.Collection<String>> returned) {
    return checked(() -> protocol().read(top, body, returned));
  }
  // ------------------------------------------------------------------ the public operations

  @Override
  public void insert(String id, Position position,
      Map<String, @Nullable Object> attributes) {
    changes.insert(id, position, attributes);
  }

  @Override
  public void update(String id, Map<String, ? extends @Nullable Object> set) {
    changes.update(id, set);
  }

  @Override
  public void move(String id, Position position) {
    changes.move(id, position);
  }

  @Override
  public long delete(String id) {
    return changes.delete(id);
  }

  @Override
  public long delete(String id, Deletion how) {
    return changes.delete(id, how);
  }

  /** Whether a change must gather what the listeners are told. */
  boolean listening() {
    return !listeners.isEmpty();
  }


  /** Tells the listeners of a committed change; a listener's exception is logged, not thrown. */
  public void tell(TreeEvent event) {
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

  // ------------------------------------------------------------------ reads of the structure

  @Override
  public Optional<Node> find(String id) {
    TreeStores.checkId(id);
    return read(r -> layout.findNode(r, id));
  }

  @Override
  public List<String> roots() {
    return read(layout::rootIds);
  }

  @Override
  public List<String> children(String id) {
    TreeStores.checkId(id);
    return readBelow(id, r -> layout.childIds(r, id), ids -> ids);
  }

  @Override
  public List<String> ancestors(String id) {
    TreeStores.checkId(id);
    // a change of the path from id up marks id itself: it moves or deletes a subtree holding it
    return readBelow(id, r -> layout.ancestorIds(r, id), ids -> ids);
  }

  @Override
  public List<String> descendants(String id, int maxDepth) {
    TreeStores.checkId(id);
    return readBelow(id, r -> layout.descendantIds(r, id, maxDepth), ids -> ids);
  }

  @Override
  public int depth(String id) {
    TreeStores.checkId(id);
    return read(r -> layout.depthOf(r, id));
  }

  @Override
  public boolean isDescendant(String id, String ancestorId) {
    TreeStores.checkId(id);
    TreeStores.checkId(ancestorId);
    return read(r -> layout.descends(r, id, ancestorId));
  }

  // ------------------------------------------------------------------ reads of node data

  @Override
  public Tree subtree(String id, int maxDepth) {
    TreeStores.checkId(id);
    checkMaxDepth(maxDepth);
    return readBelow(id, r -> NodeReads.subtree(layout, r, id, maxDepth),
        tree -> ids(tree.entries()));
  }

  @Override
  public List<Node> descendantNodes(String id, int maxDepth) {
    return descendantNodes(id, maxDepth, null);
  }

  @Override
  public List<Node> descendantNodes(String id, int maxDepth, @Nullable Bson filter) {
    TreeStores.checkId(id);
    checkMaxDepth(maxDepth);
    if (filter == null) { // a filtered read does not return every node it depends on
      return readBelow(id, r -> NodeReads.descendants(layout, r, id, maxDepth, null),
          MongoTreeStore::ids);
    }
    Bson checked = checkFilter(filter);
    return read(r -> NodeReads.descendants(layout, r, id, maxDepth, checked));
  }

  @Override
  public List<Node> childNodes(String id) {
    return childNodes(id, null, Integer.MAX_VALUE, null);
  }

  @Override
  public List<Node> childNodes(String id, @Nullable String after, int limit) {
    return childNodes(id, after, limit, null);
  }

  @Override
  public List<Node> childNodes(String id, @Nullable String after, int limit,
      @Nullable Bson filter) {
    TreeStores.checkId(id);
    if (after != null) {
      TreeStores.checkId(after);
    }
    TreeStores.checkLimit(limit);
    if (filter == null) { // a filtered read does not return every node it depends on
      return readBelow(id, r -> layout.childNodes(r, id, after, limit, null),
          MongoTreeStore::ids);
    }
    Bson checked = checkFilter(filter);
    return read(r -> layout.childNodes(r, id, after, limit, checked));
  }

  @Override
  public List<Node> ancestorNodes(String id) {
    TreeStores.checkId(id);
    return readBelow(id, r -> NodeReads.ancestors(layout, r, id), MongoTreeStore::ids);
  }

  @Override
  public Bson subtreeFilter(String id) {
    TreeStores.checkId(id);
    return read(r -> r.scoped(layout.subtreeFilter(r, id)));
  }

  // ------------------------------------------------------------------ counts and neighbours

  @Override
  public long childCount(String id) {
    TreeStores.checkId(id);
    return read(r -> layout.childCountOf(r, id));
  }

  @Override
  public long descendantCount(String id) {
    TreeStores.checkId(id);
    return read(r -> layout.descendantCountOf(r, id));
  }

  @Override
  public boolean isLeaf(String id) {
    TreeStores.checkId(id);
    return read(r -> layout.childCountOf(r, id) == 0);
  }

  @Override
  public List<String> siblings(String id) {
    TreeStores.checkId(id);
    return read(r -> {
      List<String> all = new ArrayList<>(siblingsAndSelf(r, id));
      all.remove(id);
      return all;
    });
  }

  @Override
  public Optional<String> previousSibling(String id) {
    return neighbour(id, -1);
  }

  @Override
  public Optional<String> nextSibling(String id) {
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
    String parent = layout.parentOf(r, id);
    return parent == null ? layout.rootIds(r) : layout.childIds(r, parent);
  }

  @Override
  public long size() {
    return read(r -> r.count(NODES));
  }

  // ------------------------------------------------------------------ whole trees

  /** Loads a whole tree into the empty store: see {@link TreeLoads#load(Tree)}. */
  @Override
  public void load(Tree tree) {
    TreeLoads.reported(this, () -> {
      new TreeLoads(this).load(tree);
      return tree.size();
    });
  }

  /**
   * Loads entries in preorder into the empty store: see {@link TreeLoads#load(java.util.Iterator)}.
   */
  @Override
  public long load(java.util.Iterator<? extends Node> entries) {
    return TreeLoads.reported(this, () -> new TreeLoads(this).load(entries));
  }

  /** Grafts a whole tree, checked first: see {@link TreeLoads#graft(String, Tree)}. */
  @Override
  public long graft(@Nullable String parentId, Tree tree) {
    return TreeLoads.reported(this, () -> new TreeLoads(this).graft(parentId, tree));
  }

  /** Grafts entries in preorder: see {@link TreeLoads#graft(String, java.util.Iterator)}. */
  @Override
  public long graft(@Nullable String parentId,
      java.util.Iterator<? extends Node> entries) {
    return TreeLoads.reported(this, () -> new TreeLoads(this).graft(parentId, entries));
  }

  /**
   * Grafts {@code tree} node by node, as the contract's default does (in a caller's transaction).
   */
  long graftOneByOne(@Nullable String parentId, Tree tree) {
    return MongoTree.super.graft(parentId, tree);
  }

  @Override
  public Tree snapshot() {
    return read(r -> layout.forest(r, true).toTree());
  }

  /**
   * Streams the forest in preorder by the layout's walk ({@link Layout#preorder}), in bounded
   * client memory; see {@link StreamedEntries} for what it guarantees. In a transaction of the
   * caller's, the forest is read whole, as {@link #snapshot()} does.
   */
  @Override
  public java.util.stream.Stream<Node> entries() {
    if (inCallersTransaction()) {
      return snapshot().entries().stream();
    }
    checked(() -> null); // the stream's own reads are made again by its cursors
    StreamedEntries it = new StreamedEntries(this, fenced());
    return java.util.stream.StreamSupport.stream(java.util.Spliterators.spliteratorUnknownSize(
        it, java.util.Spliterator.ORDERED | java.util.Spliterator.NONNULL), false)
        .onClose(it::close);
  }

  /** @see Layout#preorderKeys */
  public KeyedPreorder.@Nullable Keys preorderKeys() {
    return layout.preorderKeys();
  }

  @Override
  public List<Problem> check() {
    return new TreeCheck(this).check();
  }

  /**
   * Completes a stuck or interrupted change, then, under the lock, rewrites the derived and
   * missing structural fields from the authoritative ones in one all-or-nothing change, and
   * returns what {@link #check()} still finds.
   */
  @Override
  public List<Problem> repair() {
    return new TreeCheck(this).repair();
  }

  // ------------------------------------------------------------------ attributes and documents

  /** @see NodeDocuments#checkAttributes */
  void checkAttributes(String id, Map<String, ?> attributes) {
    documents.checkAttributes(id, attributes);
  }

  /** @see NodeDocuments#checkAttributeNames */
  void checkAttributeNames(String id, Map<String, ?> attributes) {
    documents.checkAttributeNames(id, attributes);
  }

  /** @see NodeDocuments#attributesOf */
  public Map<String, Object> attributesOf(Document d) {
    return documents.attributesOf(d);
  }

  /** @see NodeDocuments#checkFilter */
  Bson checkFilter(Bson filter) {
    return documents.checkFilter(filter);
  }

  @Override
  public String toString() {
    return "MongoTreeStore[" + layout.pattern() + ", " + collection.getNamespace()
        + (scope == null ? "" : ", " + scope) + "]";
  }
}
