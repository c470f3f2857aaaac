package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static dev.arbor.mongo.Queries.checkMaxDepth;
import static dev.arbor.mongo.Queries.fields;
import static dev.arbor.mongo.Queries.graphLookupOutOfMemory;
import static dev.arbor.mongo.Queries.graphLookupRefused;
import static dev.arbor.mongo.Queries.translate;
import static dev.arbor.mongo.Queries.unapplied;
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
abstract class MongoTreeStore implements MongoTree {
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
  final boolean isolatedReads;
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
  /** Attribute checks and the mapping between nodes and documents. */
  final NodeDocuments documents;
  /** The contract's changes, planned by this pattern. */
  private final TreeChanges changes = new TreeChanges(this);
  /** The latest version at which this store (or a view of it) saw the tree quiet. */
  final QuietVersion known;
  /**
   * Called on the calling thread with the version at which each change took effect, or at which a
   * change that threw or did nothing saw the tree: the order of these versions is the serial
   * order of the changes (tests replay it). A view calls its store's.
   */
  volatile java.util.function.LongConsumer onSettled = v -> {};
  /** Documents per load batch (tests lower it). */
  volatile int loadBatchSize = LOAD_BATCH;
  private final List<TreeListener> listeners;
  /** The caller's session of a {@link #withSession} view, or null. */
  final @Nullable ClientSession session;
  /** The store this is a view of, or null. */
  private final @Nullable MongoTreeStore viewOf;
  /** The protocol, once chosen ({@link #protocol()}). */
  private volatile @Nullable Protocol protocol;
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(MongoTreeStore.class);
  /** Whether {@link #requireLayout()} has seen nodes laid out in this pattern. */
  private volatile boolean layoutSeen;

  /**
   * A store, or a view of {@code view}'s store with its session: a view shares the store's lock,
   * transactions, quiet version and listeners, and differs only in its session and protocol.
   */
  MongoTreeStore(MongoCollection<Document> collection, ServerCapabilities capabilities,
      @Nullable View view) {
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
    this.collectionName = collection.getNamespace().getCollectionName();
    this.capabilities = capabilities;
    this.isolatedReads = capabilities.isolatedReads();
    Set<String> structuralFields = Set.copyOf(names.of(pattern()));
    if (view == null) {
      capabilities.checkScope(pattern(), structuralFields); // fixes the scope
      capabilities.checkServer();
    }
    this.scope = capabilities.scope();
    this.listeners = capabilities.listeners();
    this.viewOf = view == null ? null : view.store();
    this.session = view == null ? null : view.session();
    if (viewOf != null) {
      this.ids = viewOf.ids;
      this.data = viewOf.data;
      this.lock = viewOf.lock;
      this.transactions = viewOf.transactions;
      this.known = viewOf.known;
      this.documents = viewOf.documents;
      this.layoutSeen = viewOf.layoutSeen;
      return;
    }
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
    this.known = new QuietVersion();
    Set<String> fields = new HashSet<>(structuralFields);
    fields.add(Step.MARK);
    fields.add(TreeLock.STATE);
    fields.add(TreeLock.JOURNAL);
    if (scope != null) {
      fields.add(scope.field());
    }
    this.documents = new NodeDocuments(Set.copyOf(fields), collection.getCodecRegistry());
  }

  /** The store a view is of, and the view's session. */
  record View(MongoTreeStore store, ClientSession session) {}

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
    return documents.structuralFields();
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

  /**
   * The protocol of this store's calls, chosen once at the first: a store opened with its client
   * makes each change in a transaction of its own where the server runs them ({@link
   * OwnTransactionProtocol}); one opened without uses the fenced lock and journal; a {@link
   * #withSession} view runs in the caller's transaction while its session is in one.
   */
  final Protocol protocol() {
    Protocol p = protocol;
    if (p == null) {
      p = choose();
      protocol = p;
    }
    return p;
  }

  private Protocol choose() {
    java.util.function.LongConsumer settled = v -> settledAt(v);
    FencedJournalProtocol fenced = fenced();
    Protocol own = capabilities.client() == null ? fenced
        : new OwnTransactionProtocol(transactions, session, fenced, settled);
    return session == null ? own
        : new CallersTransactionProtocol(transactions, session, own, isolatedReads);
  }

  /**
   * Whether this store's changes run in transactions of its own: it was opened with its client,
   * and the server runs them (probed once).
   */
  final boolean usesTransactions() {
    return transactions.available();
  }

  /** The fenced lock and journal with this store's session: loads and streams always use it. */
  final FencedJournalProtocol fenced() {
    return new FencedJournalProtocol(lock, data, scope, session, isolatedReads, known,
        v -> settledAt(v));
  }

  private void settledAt(long version) {
    (viewOf != null ? viewOf.onSettled : onSettled).accept(version);
  }

  @Override
  public final MongoTree withSession(ClientSession session) {
    requireNonNull(session, "session");
    return pattern().open(collection, capabilities,
        new View(viewOf != null ? viewOf : this, session));
  }

  @Override
  public final <T> TypedTree<T> withDocumentClass(Class<T> documentClass) {
    return new TypedMongoTree<>(this, documentClass, collection.getCodecRegistry());
  }

  /** Whether this is a view whose session is in a transaction of the caller's. */
  final boolean inCallersTransaction() {
    return session != null && protocol().inCallersTransaction();
  }

  /**
   * Runs a structural change: {@code planner} reads what it needs through its {@link Change} and
   * plans its steps; the store's {@link #protocol()} then applies them all-or-nothing.
   */
  final Outcome change(String what, @Nullable String subject, Planner planner) {
    requireLayout();
    Outcome o;
    try {
      o = protocol().change(what, planner);
    } catch (RuntimeException e) {
      throw unapplied(translate(e, subject), what);
    }
    layoutSeen = true; // the nodes it wrote, if the collection was empty, are of this pattern
    return o;
  }

  /**
   * Refuses, before anything is written, a collection whose nodes are laid out in another pattern
   * ({@link Layouts}); one sample read until nodes of this pattern have been seen.
   */
  final void requireLayout() {
    if (!layoutSeen) {
      layoutSeen = Layouts.require(pattern(), data, scope, names);
    }
  }

  /** Notes that the collection holds nodes of this pattern (a load wrote them). */
  final void layoutSeen() {
    layoutSeen = true;
  }

  /** Records a quiet version seen; keeps the latest of an epoch. */
  final void remember(TreeLock.Quiet seen) {
    known.remember(seen);
  }

  /** Forgets the quiet version (tests: makes the next change take the lock first). */
  final void forget() {
    known.forget();
  }

  /** Runs a read through the store's {@link #protocol()}: isolated unless isolation is off. */
  final <T> T read(Function<Reads, T> body) {
    return protocol().read(body);
  }
  // ------------------------------------------------------------------ the public operations

  @Override
  public final void insert(String id, Position position,
      Map<String, @Nullable Object> attributes) {
    changes.insert(id, position, attributes);
  }

  @Override
  public final void update(String id, Map<String, ? extends @Nullable Object> set) {
    changes.update(id, set);
  }

  @Override
  public final void move(String id, Position position) {
    changes.move(id, position);
  }

  @Override
  public final long delete(String id) {
    return changes.delete(id);
  }

  @Override
  public final long delete(String id, Deletion how) {
    return changes.delete(id, how);
  }

  /** Whether a change must gather what the listeners are told. */
  final boolean listening() {
    return !listeners.isEmpty();
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
    return read(r -> NodeReads.subtree(this, r, id, maxDepth));
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
    return read(r -> NodeReads.descendants(this, r, id, maxDepth, checked));
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
    return NodeReads.childPage(this, r, id, after, limit, filter);
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
    return read(r -> NodeReads.ancestors(this, r, id));
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
   * Loads a whole tree into the empty store: see {@link TreeLoads#load(Tree)}.
   */
  @Override
  public void load(Tree tree) {
    new TreeLoads(this).load(tree);
  }

  /** Loads entries in preorder into the empty store: see {@link TreeLoads#load(java.util.Iterator)}. */
  @Override
  public long load(java.util.Iterator<? extends Tree.Entry> entries) {
    return new TreeLoads(this).load(entries);
  }

  /** Grafts a whole tree, checked first: see {@link TreeLoads#graft(String, Tree)}. */
  @Override
  public long graft(@Nullable String parentId, Tree tree) {
    return new TreeLoads(this).graft(parentId, tree);
  }

  /** Grafts entries in preorder: see {@link TreeLoads#graft(String, java.util.Iterator)}. */
  @Override
  public long graft(@Nullable String parentId,
      java.util.Iterator<? extends Tree.Entry> entries) {
    return new TreeLoads(this).graft(parentId, entries);
  }

  /** Grafts {@code tree} node by node, as the contract's default does (in a caller's transaction). */
  final long graftOneByOne(@Nullable String parentId, Tree tree) {
    return MongoTree.super.graft(parentId, tree);
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
    StreamedEntries it = new StreamedEntries(this, fenced());
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

  /** Every node's structure (and attributes, if asked), decoded by the pattern from one scan. */
  abstract Forest forest(Reads r, boolean withAttributes);

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

  /** @see NodeDocuments#checkAttributes */
  final void checkAttributes(String id, Map<String, ?> attributes) {
    documents.checkAttributes(id, attributes);
  }

  /** @see NodeDocuments#newDocument */
  final Document newDocument(String id, Document structure, Map<String, ?> attributes) {
    return NodeDocuments.newDocument(id, structure, attributes);
  }

  /** @see NodeDocuments#attributesOf */
  final Map<String, Object> attributesOf(Document d) {
    return documents.attributesOf(d);
  }

  /** @see NodeDocuments#checkFilter */
  final Bson checkFilter(Bson filter) {
    return documents.checkFilter(filter);
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

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + collection.getNamespace()
        + (scope == null ? "" : ", " + scope) + "]";
  }
}
