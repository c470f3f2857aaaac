package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.client.AggregateIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.NodeIds;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The reads of one operation: every query a store makes goes through the object the operation
 * hands it, never through ambient state. A read context knows the session the operation runs in
 * (if any), reads from the primary, and lets the protocol act before each query (a writer renews
 * its lease when due) and check what a query returned (an isolated read folds the lock document
 * into its first query by {@code _id}).
 */
public class Reads {
  /**
   * Documents per cursor batch. Explicit, because a server may otherwise answer a follow-up
   * request with everything left at once (mongo-java-server does, past the driver's 48 MB
   * message limit on large scans).
   */
  static final int BATCH = 5_000;

  /**
   * The simple (binary) collation, sent with every query and write of nodes: a collection created
   * with a locale collation would otherwise order materialized paths differently (its ranges
   * would miss descendants) and compare ids case- or accent-insensitively.
   */
  public static final com.mongodb.client.model.Collation SIMPLE = com.mongodb.client.model.Collation
      .builder().locale("simple").build();

  private final MongoCollection<Document> collection;
  /** Whether each batch of a cursor is bounded by the time limit (else its whole life). */
  private final boolean bounded;
  /** How node ids are stored: read from the collection's decoding codec. */
  public final NodeIds ids;
  /** The tree of the collection this read sees, or null: the collection holds one tree. */
  public final @Nullable Scope scope;
  private final @Nullable ClientSession session;
  private final Runnable beforeQuery;
  private final boolean fold;
  private int queries;
  private @Nullable BsonDocument foldedLock;
  private boolean foldedAll;
  private long foldedMaxMark;
  /**
   * The node documents read by {@code _id} so far, by id, for a {@link Change}: a planner that
   * reads a document again (a footprint, then the plan) is answered from here. Null for the
   * other reads.
   */
  private @Nullable Map<String, Memo> memo;
  /** Other queries a change's planning made, by a key naming the query (see {@link #once}). */
  private @Nullable Map<String, List<Document>> queried;

  /** A document read with {@code fields} (null: the whole document). */
  private record Memo(java.util.@Nullable Set<String> fields, Document document) {}

  /**
   * @param collection the tree's collection, reading from the primary
   * @param session the session of the operation, or null
   * @param beforeQuery run before each query
   * @param fold whether the first query by {@code _id} also reads the lock document
   */
  public Reads(MongoCollection<Document> collection, @Nullable Scope scope,
      @Nullable ClientSession session, Runnable beforeQuery, boolean fold) {
    this(collection, scope, session, beforeQuery, fold, 0);
  }

  /**
   * @param collection the tree's collection, reading from the primary
   * @param session the session of the operation, or null
   * @param beforeQuery run before each query
   * @param fold whether the first query by {@code _id} also reads the lock document
   * @param limitMillis the time limit of each query and of each batch of its cursor (a change's
   *     reads: {@link LockDocument#commandLimitMillis}), 0 for none (the collection's own)
   */
  public Reads(MongoCollection<Document> collection, @Nullable Scope scope,
      @Nullable ClientSession session, Runnable beforeQuery, boolean fold, long limitMillis) {
    this.collection = limitMillis > 0
        ? collection.withTimeout(limitMillis, java.util.concurrent.TimeUnit.MILLISECONDS)
        : collection;
    this.bounded = limitMillis > 0;
    this.ids = NodeIds.of(collection);
    this.scope = scope;
    this.session = session;
    this.beforeQuery = beforeQuery;
    this.fold = fold;
  }

  /**
   * How the cursors of a stream outlive a cut connection ({@link
   * dev.arbor.mongo.internal.read.ResumingCursor}), or null: their errors are thrown.
   */
  private @Nullable ReadRetry retry;

  /** These reads, whose cursors resume after a transient error as {@code retry} says. */
  Reads retrying(ReadRetry retry) {
    this.retry = retry;
    return this;
  }

  /** How this read's cursors outlive a cut connection, or null: they do not. */
  public @Nullable ReadRetry retry() {
    return retry;
  }

  /** Reads with no session, no hook and no folding. */
  static Reads plain(MongoCollection<Document> collection) {
    return new Reads(collection, null, null, () -> {}, false);
  }

  /**
   * {@code filter} restricted to the tree this read sees (see {@link Scope#filter}); {@code
   * filter} itself when the collection holds one tree.
   */
  public final Bson scoped(Bson filter) {
    if (!ids.isString()) {
      return ids.filter(filter.toBsonDocument(BsonDocument.class, collection.getCodecRegistry()));
    }
    return scope == null ? filter : scope.filter(filter, collection.getCodecRegistry());
  }

  /** The {@code _id} of the tree's lock document. */
  final BsonDocument lockId() {
    return scope == null ? TreeLock.LOCK_ID : scope.ownKey("lock");
  }

  /** The session of the operation, or null. */
  final @Nullable ClientSession session() {
    return session;
  }

  private void before() {
    beforeQuery.run();
    queries++;
  }

  /** A query. */
  public final FindIterable<Document> find(Bson query) {
    before();
    Bson filter = scoped(query);
    return bounded(session == null ? collection.find(filter) : collection.find(session, filter))
        .batchSize(BATCH).collation(SIMPLE);
  }

  private <T> FindIterable<T> bounded(FindIterable<T> found) {
    return bounded ? found.timeoutMode(com.mongodb.client.cursor.TimeoutMode.ITERATION) : found;
  }

  /** An aggregation. */
  public final AggregateIterable<Document> aggregate(List<? extends Bson> stages) {
    before();
    List<Bson> pipeline = new ArrayList<>();
    if (ids.isString()) {
      pipeline.addAll(stages);
    } else {
      List<BsonDocument> bson = new ArrayList<>();
      for (Bson s : stages) {
        bson.add(s.toBsonDocument(BsonDocument.class, collection.getCodecRegistry()));
      }
      pipeline.addAll(ids.stages(bson));
    }
    if (scope != null) {
      pipeline.add(0, new Document("$match", scope.equality()));
    }
    AggregateIterable<Document> a = session == null ? collection.aggregate(pipeline)
        : collection.aggregate(session, pipeline);
    return (bounded ? a.timeoutMode(com.mongodb.client.cursor.TimeoutMode.ITERATION) : a)
        .batchSize(BATCH).collation(SIMPLE);
  }

  /** A count of the documents {@code filter} selects. */
  public final long count(Bson query) {
    before();
    Bson filter = scoped(query);
    com.mongodb.client.model.CountOptions o = new com.mongodb.client.model.CountOptions()
        .collation(SIMPLE);
    return session == null ? collection.countDocuments(filter, o)
        : collection.countDocuments(session, filter, o);
  }

  /**
   * Reads the documents of several ids in one query; {@code projection} null reads whole
   * documents.
   *
   * @return the documents by id; ids that do not exist are absent
   */
  public final Map<String, Document> documents(List<String> ids, @Nullable Bson projection) {
    java.util.Set<String> fields = memo == null ? null : included(projection);
    // kept only for a change, and for projections of known fields (or none: whole documents)
    boolean remembered = memo != null && (projection == null || fields != null);
    if (remembered) {
      Map<String, Document> known = new HashMap<>();
      for (String id : ids) {
        Memo m = memo.get(id);
        if (m == null || !covers(m.fields(), fields)) {
          known = null;
          break;
        }
        known.put(id, new Document(m.document()));
      }
      if (known != null) {
        return known;
      }
    }
    before();
    boolean folding = fold && queries == 1;
    List<Object> keys = new ArrayList<>(ids);
    Bson p = projection;
    if (folding) {
      keys.add(lockId());
      p = foldedProjection(projection);
    }
    Map<String, Document> out = new HashMap<>();
    Bson filter = scoped(in(MongoTreeStore.ID, keys));
    FindIterable<Document> found = bounded(session == null ? collection.find(filter)
        : collection.find(session, filter));
    for (Document d : found.projection(p).collation(SIMPLE)) {
      Object id = d.get(MongoTreeStore.ID);
      if (id instanceof String s) {
        out.put(s, d);
        if (folding) {
          foldedMaxMark = Math.max(foldedMaxMark, TreeLock.markOf(d));
        }
      } else if (folding) {
        foldedLock = d.toBsonDocument(BsonDocument.class, collection.getCodecRegistry());
      }
    }
    if (folding) {
      foldedAll = out.keySet().containsAll(ids);
    }
    if (remembered) {
      for (Map.Entry<String, Document> e : out.entrySet()) {
        Memo m = memo.get(e.getKey());
        if (m == null || covers(fields, m.fields())) {
          memo.put(e.getKey(), new Memo(fields, new Document(e.getValue())));
        }
      }
    }
    return out;
  }

  /**
   * Keeps the documents this object reads by {@code _id}, to answer the same reads again without
   * a query: for a change's planning only, which writes nothing while it reads (its steps are
   * sent once the plan is complete), so a document read again is the one read before, as it
   * would be under the change's marks or lock, or within the version its claim checks.
   */
  final void remember() {
    memo = new HashMap<>();
    queried = new HashMap<>();
  }

  /**
   * The documents {@code query} returns, read once per {@code key} while a change plans ({@link
   * #remember}: a footprint read under the marks, then the plan's own read of the same), else
   * read at every call. {@code key} names the query whole (its filter, projection and limit).
   */
  public final List<Document> once(String key, java.util.function.Supplier<List<Document>> query) {
    if (queried == null) {
      return query.get();
    }
    List<Document> known = queried.get(key);
    if (known == null) {
      known = List.copyOf(query.get());
      queried.put(key, known);
    }
    List<Document> copies = new ArrayList<>(known.size());
    for (Document d : known) {
      copies.add(new Document(d));
    }
    return copies;
  }

  /**
   * Whether a document read with the fields {@code read} holds every field of {@code wanted}
   * (null: the whole document).
   */
  private static boolean covers(java.util.@Nullable Set<String> read,
      java.util.@Nullable Set<String> wanted) {
    return read == null || wanted != null && read.containsAll(wanted);
  }

  /** The fields an inclusion projection names ({@code _id} included), or null for another. */
  private java.util.@Nullable Set<String> included(@Nullable Bson projection) {
    if (projection == null) {
      return null;
    }
    BsonDocument p = projection.toBsonDocument(BsonDocument.class,
        collection.getCodecRegistry());
    java.util.Set<String> out = new java.util.HashSet<>();
    out.add(MongoTreeStore.ID);
    for (Map.Entry<String, org.bson.BsonValue> e : p.entrySet()) {
      org.bson.BsonValue v = e.getValue();
      if (!(v.isNumber() && v.asNumber().intValue() == 1 || v.isBoolean() && v.asBoolean()
          .getValue()) || e.getKey().startsWith("$") || e.getKey().contains(".")) {
        return null;
      }
      out.add(e.getKey());
    }
    return out;
  }

  private Bson foldedProjection(@Nullable Bson projection) {
    if (projection == null) {
      return new BsonDocument(TreeLock.JOURNAL, new BsonInt32(0));
    }
    BsonDocument p = projection.toBsonDocument(BsonDocument.class,
        collection.getCodecRegistry()).clone();
    p.put(Step.MARK, new BsonInt32(1));
    p.put(TreeLock.STATE, new BsonInt32(1));
    return p;
  }

  /**
   * The lock document read by the first query, if that query was by {@code _id}, found every id it
   * asked for, and the operation made no other query; null otherwise.
   */
  final @Nullable BsonDocument foldedLock() {
    return queries == 1 && foldedAll ? foldedLock : null;
  }

  /** The highest change version among the node documents the folded query returned. */
  final long foldedMaxMark() {
    return foldedMaxMark;
  }

  /** The document of {@code id} with the given projection (null: the whole document), or null. */
  public final @Nullable Document document(String id, @Nullable Bson projection) {
    TreeStores.checkId(id);
    return documents(List.of(id), projection).get(id);
  }

  /**
   * The document of {@code id}.
   *
   * @throws NodeNotFoundException if there is none
   */
  public final Document require(String id, @Nullable Bson projection) {
    Document d = document(id, projection);
    if (d == null) {
      throw new NodeNotFoundException(id);
    }
    return d;
  }

  /**
   * Reads the documents of {@code id} and {@code other} in one query.
   *
   * @return the two documents, {@code id}'s first
   * @throws NodeNotFoundException naming {@code id} if it is missing, else {@code other}
   */
  public final Document[] requireBoth(String id, String other, @Nullable Bson projection) {
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
  public final List<String> childrenOrRequire(Bson filter, Bson order, String id) {
    List<String> children = Queries.ids(find(filter)
        .projection(Queries.fields(MongoTreeStore.ID)).sort(order));
    if (children.isEmpty()) {
      require(id, Queries.fields(MongoTreeStore.ID));
    }
    return children;
  }

  /** Whether a document with this {@code _id} exists. */
  final boolean exists(BsonValue id) {
    before();
    Bson filter = scoped(eq(MongoTreeStore.ID, id));
    return bounded(session == null ? collection.find(filter) : collection.find(session, filter))
        .projection(Queries.fields(MongoTreeStore.ID)).collation(SIMPLE).first() != null;
  }
}
