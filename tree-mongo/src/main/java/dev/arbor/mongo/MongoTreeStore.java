package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static java.util.Objects.requireNonNull;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadConcern;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.AggregateIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStores;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import dev.arbor.core.Node;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.conversions.Bson;

/**
 * What the five MongoDB stores share: one document per node with {@code _id} = the node id and the
 * attributes as top-level fields; attribute validation; reads of single nodes; bulk loads in
 * batches; snapshots and checks by one scan; server capability probes.
 */
abstract class MongoTreeStore implements TreeStore {
  static final String ID = "_id";
  static final int LOAD_BATCH = 10_000;
  static final int IN_BATCH = 20_000;
  /** Node documents: the lock and journal documents have non-string ids. */
  static final Bson NODES = Filters.type(ID, BsonType.STRING);

  private static final ThreadLocal<ClientSession> SESSION = new ThreadLocal<>();
  private static final ThreadLocal<List<WriteModel<Document>>> PLAN = new ThreadLocal<>();

  final MongoCollection<Document> collection;
  final String collectionName;
  final ServerCapabilities capabilities;
  final TreeLock lock;
  private final MongoClient client;
  private final boolean isolatedReads;
  private final Set<String> structuralFields;
  private volatile Boolean transactions;
  /** Whether {@link #requireLayout()} has seen nodes laid out in this pattern. */
  private volatile boolean layoutSeen;

  MongoTreeStore(MongoCollection<Document> collection, ServerCapabilities capabilities,
      Set<String> structuralFields) {
    this.collection = requireNonNull(collection, "collection");
    this.collectionName = collection.getNamespace().getCollectionName();
    this.capabilities = capabilities;
    this.client = capabilities.client();
    this.isolatedReads = capabilities.isolatedReads();
    this.lock = new TreeLock(collection, capabilities.leaseMillis(), capabilities.waitMillis());
    Set<String> fields = new java.util.HashSet<>(structuralFields);
    fields.add(TreeLock.MARK);
    this.structuralFields = Set.copyOf(fields);
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
    if (!indexes.isEmpty()) {
      collection.createIndexes(indexes);
    }
  }

  // ------------------------------------------------------------------ changes and reads

  /** How structural changes are made all-or-nothing. */
  enum Protocol {
    /** One multi-document transaction per change (replica sets, sharded clusters). */
    TRANSACTIONS,
    /** The lock document and the journal of guarded steps ({@link TreeLock}). */
    LOCK_AND_JOURNAL
  }

  /** The protocol this store uses, probed once: transactions need a client and a server that
   * runs them. */
  final Protocol protocol() {
    Boolean known = transactions;
    if (known == null) {
      known = client != null && probeTransactions();
      transactions = known;
    }
    return known ? Protocol.TRANSACTIONS : Protocol.LOCK_AND_JOURNAL;
  }

  private boolean probeTransactions() {
    try (ClientSession session = client.startSession()) {
      session.withTransaction(() -> collection.find(session, eq(ID, TreeLock.LOCK_ID)).first());
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * Runs a structural change: {@code planner} reads what it needs and submits its writes with
   * {@link #write}; they are then applied all-or-nothing, in a transaction or under the lock.
   *
   * @return the result of the writes, null if none were planned
   */
  final BulkWriteResult change(String what, String subject, Runnable planner) {
    requireLayout();
    try {
      if (protocol() == Protocol.TRANSACTIONS) {
        try (ClientSession session = client.startSession()) {
          return session.withTransaction(() -> {
            SESSION.set(session);
            try {
              // Every change writes the lock document, so concurrent changes conflict and
              // are retried one after the other: no write skew (two moves making a cycle).
              collection.updateOne(session, eq(ID, TreeLock.LOCK_ID), Updates.inc("version", 1),
                  new UpdateOptions().upsert(true));
              List<WriteModel<Document>> writes = plan(planner);
              return writes.isEmpty() ? null : collection.bulkWrite(session, writes);
            } finally {
              SESSION.remove();
            }
          }, TransactionOptions.builder().readConcern(ReadConcern.SNAPSHOT)
              .writeConcern(WriteConcern.MAJORITY).build());
        }
      }
      return lock.run(what, () -> plan(planner));
    } catch (RuntimeException e) {
      throw translate(e, subject);
    }
  }

  private static List<WriteModel<Document>> plan(Runnable planner) {
    List<WriteModel<Document>> writes = new ArrayList<>();
    PLAN.set(writes);
    try {
      planner.run();
      return writes;
    } finally {
      PLAN.remove();
    }
  }

  /**
   * Refuses, before anything is written, a collection whose nodes are laid out in another pattern
   * ({@link Layouts}); one sample read until nodes of this pattern have been seen.
   */
  private void requireLayout() {
    if (!layoutSeen) {
      layoutSeen = Layouts.require(pattern(), collection);
    }
  }

  /** Submits writes to the change being planned on this thread. */
  final void write(List<? extends WriteModel<Document>> writes, String id) {
    List<WriteModel<Document>> plan = PLAN.get();
    if (plan == null) {
      throw new IllegalStateException("write outside of a change");
    }
    plan.addAll(writes);
  }

  /** Runs a read, isolated from concurrent changes where the protocol needs it. */
  final <T> T read(Supplier<T> read) {
    if (!isolatedReads || SESSION.get() != null || PLAN.get() != null
        || protocol() == Protocol.TRANSACTIONS) {
      return read.get();
    }
    return lock.read(read);
  }

  /**
   * Documents per cursor batch. Explicit, because a server may otherwise answer a follow-up
   * request with everything left at once (mongo-java-server does, past the driver's 48 MB
   * message limit on large scans).
   */
  static final int BATCH = 5_000;

  /** A find in the current transaction, if any. */
  final FindIterable<Document> find(Bson filter) {
    ClientSession s = SESSION.get();
    return (s == null ? collection.find(filter) : collection.find(s, filter)).batchSize(BATCH);
  }

  /** An aggregation in the current transaction, if any. */
  final AggregateIterable<Document> aggregate(List<? extends Bson> pipeline) {
    ClientSession s = SESSION.get();
    return (s == null ? collection.aggregate(pipeline) : collection.aggregate(s, pipeline))
        .batchSize(BATCH);
  }

  /** The sibling group whose {@code field} equals {@code value} (null: the roots). */
  static Bson group(String field, Object value) {
    return value == null ? isNull(field) : eq(field, value);
  }

  /** Documents whose {@code field} is null or missing, lock and journal excluded. */
  static Bson isNull(String field) {
    return Filters.and(eq(field, null), NODES);
  }

  // ------------------------------------------------------------------ the public operations

  @Override
  public final void insert(String id, Position position, Map<String, Object> attributes) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    Map<String, Object> copy = TreeStores.copyAttributes(attributes);
    checkAttributes(id, copy);
    change("insert '" + id + "' at " + position, id, () -> planInsert(id, position, copy));
  }

  @Override
  public final void move(String id, Position position) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    change("move '" + id + "' to " + position, id, () -> planMove(id, position));
  }

  @Override
  public final long delete(String id) {
    TreeStores.checkId(id);
    long[] planned = new long[1];
    BulkWriteResult result = change("delete '" + id + "'", id,
        () -> planned[0] = planDelete(id));
    if (planned[0] >= 0) {
      return planned[0];
    }
    long deleted = result == null ? 0 : result.getDeletedCount();
    if (deleted == 0) {
      throw new NodeNotFoundException(id);
    }
    return deleted;
  }

  /** The pattern this store implements. */
  abstract TreePattern pattern();

  /**
   * What is wrong with the structural fields of one document (read with the projection the
   * store plans with), or null if they have the pattern's types; changes refuse to start from a
   * document in another layout.
   */
  abstract String layoutProblem(Document d);

  static boolean isNullOrString(Object o) {
    return o == null || o instanceof String;
  }

  /** Plans an insert; attributes are already checked. */
  abstract void planInsert(String id, Position position, Map<String, Object> attributes);

  /** Plans a move. */
  abstract void planMove(String id, Position position);

  /**
   * Plans a delete.
   *
   * @return the number of nodes the writes delete, or -1 to take the count of deleted documents
   *     (0 meaning the node did not exist)
   */
  abstract long planDelete(String id);

  @Override
  public final Optional<Node> find(String id) {
    TreeStores.checkId(id);
    return read(() -> findNode(id));
  }

  @Override
  public final List<String> roots() {
    return read(this::rootIds);
  }

  @Override
  public final List<String> children(String id) {
    TreeStores.checkId(id);
    return read(() -> childIds(id));
  }

  @Override
  public final List<String> ancestors(String id) {
    TreeStores.checkId(id);
    return read(() -> ancestorIds(id));
  }

  @Override
  public final List<String> descendants(String id, int maxDepth) {
    TreeStores.checkId(id);
    return read(() -> descendantIds(id, maxDepth));
  }

  @Override
  public final int depth(String id) {
    TreeStores.checkId(id);
    return read(() -> depthOf(id));
  }

  @Override
  public final boolean isDescendant(String id, String ancestorId) {
    TreeStores.checkId(id);
    TreeStores.checkId(ancestorId);
    return read(() -> descends(id, ancestorId));
  }

  abstract Optional<Node> findNode(String id);

  abstract List<String> rootIds();

  abstract List<String> childIds(String id);

  abstract List<String> ancestorIds(String id);

  abstract List<String> descendantIds(String id, int maxDepth);

  /** The depth of {@code id}: the number of its ancestors, unless the pattern stores it. */
  int depthOf(String id) {
    return ancestorIds(id).size();
  }

  abstract boolean descends(String id, String ancestorId);

  @Override
  public long size() {
    return read(() -> {
      ClientSession s = SESSION.get();
      return s == null ? collection.countDocuments(NODES) : collection.countDocuments(s, NODES);
    });
  }

  /**
   * Loads a whole tree into the empty store: documents computed in one pass, inserted in ordered
   * batches of {@value #LOAD_BATCH}. Under the lock, with a journal whose only step is the undo
   * (delete every node): a load interrupted half-way is rolled back by the next access.
   */
  @Override
  public void load(Tree tree) {
    requireNonNull(tree, "tree");
    for (Tree.Entry e : tree.entries()) {
      checkAttributes(e.id(), e.attributes());
    }
    requireLayout();
    try {
      lock.runLoad("load " + tree.size() + " nodes", this::requireEmpty, () -> {
        List<WriteModel<Document>> batch = new ArrayList<>();
        for (Document d : documentsFor(tree)) {
          batch.add(new com.mongodb.client.model.InsertOneModel<>(d));
          if (batch.size() == LOAD_BATCH) {
            lock.executor.execute(collection, batch);
            batch = new ArrayList<>();
          }
        }
        if (!batch.isEmpty()) {
          lock.executor.execute(collection, batch);
        }
      });
    } catch (RuntimeException e) {
      throw translate(e, null);
    }
  }

  private void requireEmpty() {
    if (find(NODES).projection(Projections.include(ID)).limit(1).first() != null) {
      throw new TreeException("Cannot load into collection '" + collectionName
          + "': it is not empty (" + collection.countDocuments(NODES) + " nodes)");
    }
  }

  /** The documents of a whole tree, derived fields computed in one pass over its preorder. */
  abstract Iterable<Document> documentsFor(Tree tree);

  @Override
  public Tree snapshot() {
    return read(() -> forest(true).toTree());
  }

  /** Every node's structure (and attributes, if asked), decoded by the pattern from one scan. */
  abstract Forest forest(boolean withAttributes);

  @Override
  public List<Problem> check() {
    return read(this::checkNow);
  }

  private List<Problem> checkNow() {
    List<Document> docs = new ArrayList<>();
    // Every document but Arbor's lock and journal: one whose _id is not a string is not a node
    // the store can read, and is reported.
    find(Filters.exists(ID + ".arbor", false)).into(docs);
    List<Problem> problems = new ArrayList<>();
    Map<String, Document> byId = new LinkedHashMap<>();
    for (Document d : docs) {
      Object id = d.get(ID);
      if (!(id instanceof String s) || s.isEmpty()) {
        problems.add(new Problem(String.valueOf(id), "_id is not a non-empty string"));
        continue;
      }
      byId.put(s, d);
    }
    Problem layout = Layouts.problem(pattern(), byId.values(), collectionName);
    if (layout != null) { // the pattern's own checks would only list its missing fields
      problems.add(0, layout);
      return problems;
    }
    checkDocuments(byId, problems);
    return problems;
  }

  /**
   * Finishes an interrupted change, then, under the lock, rewrites the derived and missing
   * structural fields from the authoritative ones in one all-or-nothing change, and returns what
   * {@link #check()} still finds.
   */
  @Override
  public List<Problem> repair() {
    requireLayout(); // never rewrites a collection into another pattern: convert does
    lock.recover();
    change("repair", null, () -> {
      List<Document> docs = new ArrayList<>();
      find(NODES).into(docs);
      planRepair(docs);
    });
    return check();
  }

  /**
   * Plans the writes that rebuild derived fields and fill in missing ones, from a scan of every
   * node document (in the collection's natural order, which orders siblings that have no rank).
   */
  abstract void planRepair(List<Document> docs);

  /**
   * Plans rank writes for every sibling group in which a rank is missing, not a number, or
   * repeated: the group is renumbered in its current order (ranked nodes by rank, then the others
   * in scan order).
   *
   * @param parentOf the parent of each document, null for a root (documents whose parent is
   *     unknown are left out)
   */
  final void planRankRepair(List<Document> docs, java.util.function.Function<Document, Object>
      parentOf) {
    Map<Object, List<Document>> groups = new LinkedHashMap<>();
    for (Document d : docs) {
      groups.computeIfAbsent(java.util.Optional.ofNullable(parentOf.apply(d)),
          k -> new ArrayList<>()).add(d);
    }
    List<WriteModel<Document>> writes = new ArrayList<>();
    for (List<Document> group : groups.values()) {
      java.util.Set<Long> seen = new java.util.HashSet<>();
      boolean sound = true;
      for (Document d : group) {
        sound &= d.get(Ranks.RANK) instanceof Number n && seen.add(n.longValue());
      }
      if (sound) {
        continue;
      }
      List<Document> ordered = new ArrayList<>(group);
      ordered.sort(java.util.Comparator.comparing(
          (Document d) -> d.get(Ranks.RANK) instanceof Number n ? n.longValue() : Long.MAX_VALUE));
      long rank = 0;
      for (Document d : ordered) {
        writes.add(new com.mongodb.client.model.UpdateOneModel<>(eq(ID, d.get(ID)),
            Updates.set(Ranks.RANK, rank)));
        rank += Ranks.GAP;
      }
    }
    write(writes, null);
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

  /** The document of {@code id} with the given projection (null = whole document). */
  final Document document(String id, Bson projection) {
    TreeStores.checkId(id);
    return find(eq(ID, id)).projection(projection).first();
  }

  /**
   * The document of {@code id}.
   *
   * @throws NodeNotFoundException if there is none
   */
  final Document require(String id, Bson projection) {
    Document d = document(id, projection);
    if (d == null) {
      throw new NodeNotFoundException(id);
    }
    return d;
  }

  /**
   * Reads the documents of several ids in one query.
   *
   * @return the documents by id; ids that do not exist are absent
   */
  final Map<String, Document> documents(List<String> ids, Bson projection) {
    Map<String, Document> out = new HashMap<>();
    for (Document d : find(in(ID, ids)).projection(projection)) {
      out.put(d.getString(ID), d);
    }
    return out;
  }

  /**
   * Reads the documents of {@code id} and {@code other} in one query.
   *
   * @return the two documents, {@code id}'s first
   * @throws NodeNotFoundException naming {@code id} if it is missing, else {@code other}
   */
  final Document[] requireBoth(String id, String other, Bson projection) {
    Map<String, Document> docs = documents(List.of(id, other), projection);
    for (String each : List.of(id, other)) {
      if (!docs.containsKey(each)) {
        throw new NodeNotFoundException(each);
      }
    }
    return new Document[] {docs.get(id), docs.get(other)};
  }

  /**
   * The ids {@code filter} selects in {@code order}; when there are none, checks that {@code id}
   * exists (one more round trip, for leaves only).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  final List<String> childrenOrRequire(Bson filter, Bson order, String id) {
    List<String> children = ids(find(filter).projection(fields(ID)).sort(order));
    if (children.isEmpty()) {
      require(id, fields(ID));
    }
    return children;
  }

  /**
   * Reads, in one query, the document of the subject of an insert or move and of its position's
   * anchor, and checks them in the reference's order: for an insert the id must be new, for a move
   * it must exist; then the anchor must exist.
   */
  final Map<String, Document> subjectAndAnchor(String id, boolean insert, Position position,
      Bson projection) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    String anchor = position.anchor();
    Map<String, Document> docs = documents(anchor == null ? List.of(id) : List.of(id, anchor),
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
  static RuntimeException translate(RuntimeException e, String id) {
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

  /** Deletes of the documents of {@code ids}, in slices small enough for one {@code $in}. */
  static List<WriteModel<Document>> deletesOf(List<String> ids) {
    List<WriteModel<Document>> deletes = new ArrayList<>();
    for (List<String> slice : slices(ids)) {
      deletes.add(new com.mongodb.client.model.DeleteManyModel<>(in(ID, slice)));
    }
    return deletes;
  }

  /** {@code ids} in slices small enough for one {@code $in} query. */
  static List<List<String>> slices(List<String> ids) {
    List<List<String>> out = new ArrayList<>();
    for (int i = 0; i < ids.size(); i += IN_BATCH) {
      out.add(ids.subList(i, Math.min(ids.size(), i + IN_BATCH)));
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

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + collection.getNamespace() + "]";
  }
}
