package dev.arbor.mongo.internal;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.NodeIdType;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.bson.AttributeNames;
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.bson.FieldNames;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.protocol.LeaseScheduler;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.protocol.Timing;
import dev.arbor.mongo.internal.protocol.Transactions;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.UUID;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * What the server behind a collection does correctly, found by probing it rather than by reading
 * its version. Each probe runs once, lazily, and writes nothing.
 *
 * <ul>
 *   <li>{@link #graphLookup}: {@code $graphLookup} honours {@code startWith}. Probed with a literal
 *       {@code startWith} (a random id) that matches no document: a correct server finds nothing; a
 * server that
 *       starts from the input document's {@code connectFromField} instead (mongo-java-server) finds
 *       the input document. Stores that walk the tree fall back to a level-by-level {@code $in}
 *       walk when this is false.
 *   <li>{@link #pipelineUpdates}: updates given as an aggregation pipeline (MongoDB 4.2+). Probed
 *       with a pipeline update whose filter matches nothing. Stores that rewrite a field from its
 *       own value (path prefixes) fall back to reading the subtree and writing each document in
 *       one bulk write when this is false.
 * </ul>
 *
 * <p>And two checks, once when a store is opened ({@link #checkServer}), refuse what Arbor cannot
 * run on: a server older than MongoDB {@value #MINIMUM_MAJOR_VERSION}.0, and a collection whose
 * default collation is not the simple one.
 */
public final class ServerCapabilities {
  /** How a capability is decided. */
  public enum Mode {
    /** Probe the server. */
    PROBE,
    /** Assume the server has it. */
    ON,
    /** Never use it. */
    OFF
  }


  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ServerCapabilities.class);

  private final MongoCollection<Document> collection;
  private final Mode graphLookupMode;
  private final Mode pipelineMode;
  private @Nullable MongoClient client;
  private boolean isolatedReads = true;
  private boolean subtreeLocks = !"false".equals(System.getProperty("arbor.subtreeLocks"));
  private long leaseMillis = 30_000;
  private long waitMillis = 60_000;
  private Timing timing = Timing.SYSTEM;
  private LeaseScheduler renewals = LeaseScheduler.SYSTEM;
  private org.slf4j.@Nullable Logger log;
  private boolean keepAlive = true;
  private boolean optimisticChanges = true;
  private java.util.function.LongConsumer onSettled = v -> {};
  private long transactionMaxDocuments = Transactions.MAX_DOCUMENTS;
  private TreeLock.Sender sender = TreeLock.BULK;
  private int batchStatements = Encoded.MAX_BATCH_COUNT;
  private int inlineJournalBytes = 4_000_000;
  private int loadBatchSize = MongoTreeStore.LOAD_BATCH;
  private @Nullable Scope scope;
  private @Nullable String scopeField;
  private @Nullable Object scopeValue;
  private List<dev.arbor.core.TreeListener> listeners = List.of();
  private int maxChildren = TreeOptions.DEFAULT_MAX_CHILDREN;
  private FieldNames names = FieldNames.DEFAULTS;
  private NodeIdType idType = NodeIdType.STRING;
  private volatile @Nullable Boolean graphLookup;
  private volatile @Nullable Boolean pipelineUpdates;
  private volatile boolean graphLookupRefused;

  public ServerCapabilities(MongoCollection<Document> collection, Mode graphLookupMode,
      Mode pipelineMode) {
    this.collection = collection;
    this.graphLookupMode = graphLookupMode;
    this.pipelineMode = pipelineMode;
  }

  public static ServerCapabilities probing(MongoCollection<Document> collection) {
    return new ServerCapabilities(collection, Mode.PROBE, Mode.PROBE);
  }

  /** The client to start transactions with, or null: then changes use the lock and journal. */
  public ServerCapabilities client(@Nullable MongoClient client) {
    this.client = client;
    return this;
  }

  public @Nullable MongoClient client() {
    return client;
  }

  /**
   * Whether changes of patterns that can run in lanes ({@link LaneProtocol}) do so when they
   * meet other writers. On by default; the system property {@code arbor.subtreeLocks=false}
   * turns them off (every change then waits for the tree's lock, as before lanes). A store with
   * lanes off still waits for the lanes of other stores of the tree to drain before it takes the
   * tree's lock.
   */
  public ServerCapabilities subtreeLocks(boolean subtreeLocks) {
    this.subtreeLocks = subtreeLocks;
    return this;
  }

  public boolean subtreeLocks() {
    return subtreeLocks;
  }

  /** Whether reads are isolated from concurrent changes (lock protocol only). */
  public ServerCapabilities isolatedReads(boolean isolatedReads) {
    this.isolatedReads = isolatedReads;
    return this;
  }

  public boolean isolatedReads() {
    return isolatedReads;
  }

  /** The lease of the lock: how long a dead holder blocks the tree. */
  public ServerCapabilities lease(long leaseMillis, long waitMillis) {
    this.leaseMillis = leaseMillis;
    this.waitMillis = waitMillis;
    return this;
  }

  long leaseMillis() {
    return leaseMillis;
  }

  long waitMillis() {
    return waitMillis;
  }

  /** The listeners told of each committed change. */
  public ServerCapabilities listeners(List<dev.arbor.core.TreeListener> listeners) {
    this.listeners = List.copyOf(listeners);
    return this;
  }

  public List<dev.arbor.core.TreeListener> listeners() {
    return listeners;
  }

  /** The tree of the collection the store sees ({@link TreeOptions#withScope}), checked at open. */
  public ServerCapabilities scope(@Nullable String field, @Nullable Object value) {
    this.scopeField = field;
    this.scopeValue = value;
    this.scope = null;
    return this;
  }

  /** The scope, or null for a collection that holds one tree. */
  public @Nullable Scope scope() {
    return scope;
  }

  /**
   * Validates the scope option for a store of {@code pattern} whose structure takes {@code
   * reserved} field names, and fixes the scope.
   *
   * @throws IllegalArgumentException naming the option if the field or value is not usable
   */
  void checkScope(TreePattern pattern, java.util.Set<String> reserved) {
    if (scopeField == null) {
      return;
    }
    String field = scopeField;
    String where = "withScope(\"" + field + "\", " + scopeValue + ")";
    if (field.equals(MongoTreeStore.ID) || reserved.contains(field)
        || field.startsWith("arbor")) {
      throw new IllegalArgumentException(where + ": the scope field cannot be '" + field
          + "', a name " + pattern + " reserves for the structure (" + new java.util.TreeSet<>(
              reserved) + ", _id and names starting with 'arbor')");
    }
    String problem = AttributeNames.fieldNameProblem(field);
    if (problem != null) {
      throw new IllegalArgumentException(where + ": the scope field '" + field
          + "' is not a plain MongoDB field name (empty, starts with '$', contains '.' or NUL)");
    }
    if (scopeValue == null) {
      throw new IllegalArgumentException(where + ": the scope value cannot be null");
    }
    org.bson.BsonValue v = Scope.encode(scopeValue, collection.getCodecRegistry());
    switch (v.getBsonType()) {
      case ARRAY, REGULAR_EXPRESSION, NULL, UNDEFINED, MIN_KEY, MAX_KEY, JAVASCRIPT,
          JAVASCRIPT_WITH_SCOPE:
        throw new IllegalArgumentException(where + ": the scope value cannot be of BSON type "
            + v.getBsonType() + " (it must select by equality and be usable as a shard key)");
      case DOCUMENT:
        String key = operatorLikeKey(v, 0);
        if (key != null) {
          throw new IllegalArgumentException(where + ": the scope value cannot hold an"
              + " operator-like key '" + key + "'");
        }
        break;
      default:
        break;
    }
    scope = new Scope(field, v);
  }

  /** The first key starting with {@code $} in {@code v}, at any depth, or null. */
  private static @Nullable String operatorLikeKey(org.bson.BsonValue v, int depth) {
    if (depth > 100) {
      return null; // deeper than BSON allows: the server refuses it
    }
    if (v.isDocument()) {
      for (var e : v.asDocument().entrySet()) {
        String key = e.getKey().startsWith("$") ? e.getKey()
            : operatorLikeKey(e.getValue(), depth + 1);
        if (key != null) {
          return key;
        }
      }
    } else if (v.isArray()) {
      for (org.bson.BsonValue e : v.asArray()) {
        String key = operatorLikeKey(e, depth + 1);
        if (key != null) {
          return key;
        }
      }
    }
    return null;
  }

  /** The most children a {@code children} array may hold (child references). */
  public ServerCapabilities maxChildren(int maxChildren) {
    this.maxChildren = maxChildren;
    return this;
  }

  public int maxChildren() {
    return maxChildren;
  }

  /** The type of node ids. */
  public ServerCapabilities idType(NodeIdType idType) {
    this.idType = idType;
    return this;
  }

  /** The type of node ids. */
  public NodeIdType idType() {
    return idType;
  }

  /** The names of the structural fields. */
  public ServerCapabilities names(FieldNames names) {
    this.names = names;
    return this;
  }

  public FieldNames names() {
    return names;
  }

  /** The local clock of the lock protocol (tests inject their own). */
  public ServerCapabilities timing(Timing timing) {
    this.timing = timing;
    return this;
  }

  public Timing timing() {
    return timing;
  }

  /** What renews held leases in the background (tests inject one they can pause). */
  public ServerCapabilities renewals(LeaseScheduler renewals) {
    this.renewals = renewals;
    return this;
  }

  public LeaseScheduler renewals() {
    return renewals;
  }

  /** What sends the lock protocol's batches and fences (tests inject one that fails). */
  /**
   * Where the lock logs takeovers, replays, stuck changes and long waits (default: the
   * {@link TreeLock} class's logger; tests record it, the doctor quiets it).
   */
  public ServerCapabilities log(org.slf4j.Logger log) {
    this.log = log;
    return this;
  }

  public org.slf4j.@Nullable Logger log() {
    return log;
  }

  /**
   * Whether holds renew their leases in the background (default). Tests that model a paused
   * process, whose every thread stops, turn it off so that a stalled holder's lease expires.
   */
  public ServerCapabilities keepAlive(boolean keepAlive) {
    this.keepAlive = keepAlive;
    return this;
  }

  public boolean keepAlive() {
    return keepAlive;
  }

  /**
   * Whether a store with lanes tries a change on the optimistic path first while it meets no
   * other writer (default; see {@link LaneProtocol}). Tests of lanes turn it off so that every
   * change of a subtree runs in a lane, to hold it there half-way.
   */
  public ServerCapabilities optimisticChanges(boolean optimisticChanges) {
    this.optimisticChanges = optimisticChanges;
    return this;
  }

  public boolean optimisticChanges() {
    return optimisticChanges;
  }

  /**
   * Called on the calling thread with the version at which each change took effect, or at which a
   * change that threw or did nothing saw the tree: the order of these versions is the serial
   * order of the changes (tests and the doctor replay it). Views call their store's.
   */
  public ServerCapabilities onSettled(java.util.function.LongConsumer onSettled) {
    this.onSettled = onSettled;
    return this;
  }

  public java.util.function.LongConsumer onSettled() {
    return onSettled;
  }

  /** The most documents one of Arbor's own transactions writes (tests lower it). */
  public ServerCapabilities transactionMaxDocuments(long transactionMaxDocuments) {
    this.transactionMaxDocuments = transactionMaxDocuments;
    return this;
  }

  public long transactionMaxDocuments() {
    return transactionMaxDocuments;
  }

  public ServerCapabilities sender(TreeLock.Sender sender) {
    this.sender = sender;
    return this;
  }

  public TreeLock.Sender sender() {
    return sender;
  }

  /** The most statements in one batch (tests lower it to make changes of several batches). */
  public ServerCapabilities batchStatements(int batchStatements) {
    this.batchStatements = batchStatements;
    return this;
  }

  public int batchStatements() {
    return batchStatements;
  }

  /**
   * Journals up to this size go into the lock document; larger ones into journal documents
   * (tests lower it to write journals in parts).
   */
  public ServerCapabilities inlineJournalBytes(int inlineJournalBytes) {
    this.inlineJournalBytes = inlineJournalBytes;
    return this;
  }

  public int inlineJournalBytes() {
    return inlineJournalBytes;
  }

  /** Documents per load batch (tests lower it to make loads of several batches). */
  public ServerCapabilities loadBatchSize(int loadBatchSize) {
    this.loadBatchSize = loadBatchSize;
    return this;
  }

  public int loadBatchSize() {
    return loadBatchSize;
  }

  /** The oldest MongoDB Arbor runs on: the journal's keys that start with '$' need 5.0. */
  static final int MINIMUM_MAJOR_VERSION = 5;

  private volatile boolean serverChecked;

  /**
   * Checks, once, when a store is opened, that the server is one Arbor runs on: the version it
   * reports is at least {@value #MINIMUM_MAJOR_VERSION}.0. The version is read from {@code
   * buildInfo} through the store's client where it has one ({@link TreeOptions#withTransactions}),
   * else from the {@code serverInfo} of an {@code explain} of a query that matches nothing (a
   * collection names no database to run {@code buildInfo} in); neither writes anything. A server
   * that has no {@code explain} (the embedded server, which reports 5.0.0 to {@code buildInfo})
   * reports no version and is accepted. Then {@link #requireSimpleCollation} checks the
   * collection's default collation.
   *
   * @throws dev.arbor.core.TreeException naming the collection and the version found and the
   *     minimum, or the collection's default collation if it is not the simple one
   */
  void checkServer(long limitMillis) {
    if (serverChecked) {
      return;
    }
    MongoCollection<Document> bounded = collection.withTimeout(limitMillis,
        java.util.concurrent.TimeUnit.MILLISECONDS);
    requireSupportedVersion(reportedVersion(bounded, limitMillis),
        collection.getNamespace().getFullName());
    requireSimpleCollation(bounded.listIndexes(), collection.getNamespace().getFullName());
    serverChecked = true;
  }

  /**
   * Refuses a collection whose default collation is not the simple one, as its {@code _id} index
   * tells ({@code listIndexes}, which a collection can run; the server gives the {@code _id}
   * index the collection's default collation and refuses any other): under a case-insensitive
   * collation the {@code _id} index would hold ids {@code a} and {@code A} as one, and the lock
   * documents of scopes {@code acme} and {@code ACME} as one, and no query of Arbor's (all in the
   * simple collation) could use an index built in another. Neither collation can be changed
   * after the collection is created.
   *
   * @throws dev.arbor.core.TreeException naming {@code what} and the collation
   */
  public static void requireSimpleCollation(Iterable<Document> indexes, String what) {
    for (Document index : indexes) {
      if (!(index.get("key") instanceof Document key) || !key.keySet().equals(
          java.util.Set.of(MongoTreeStore.ID))) {
        continue;
      }
      if (index.get("collation") instanceof Document collation
          && !"simple".equals(collation.get("locale"))) {
        throw new dev.arbor.core.TreeException("Collection '" + what + "' has the default"
            + " collation " + collation.toJson() + "; Arbor needs a collection whose default"
            + " collation is the simple one (its node ids and lock documents are compared"
            + " byte for byte, and the collation of an existing collection and of its _id"
            + " index cannot be changed): use a collection created without a collation");
      }
    }
  }

  /** The version the server reports, or null if it reports none. */
  private @Nullable String reportedVersion(MongoCollection<Document> collection,
      long limitMillis) {
    com.mongodb.MongoNamespace ns = collection.getNamespace();
    try {
      if (client != null) {
        return version(client.getDatabase(ns.getDatabaseName())
            .withTimeout(limitMillis, java.util.concurrent.TimeUnit.MILLISECONDS)
            .withReadPreference(com.mongodb.ReadPreference.primary())
            .runCommand(new Document("buildInfo", 1)));
      }
      return explainedVersion(collection.withReadPreference(com.mongodb.ReadPreference.primary())
          .find(scope == null ? Queries.nothing()
              : scope.filter(Queries.nothing(), collection.getCodecRegistry()))
          .limit(1).explain());
    } catch (com.mongodb.MongoCommandException e) {
      if (e.getErrorCode() == 59) { // CommandNotFound: no explain (the embedded server)
        return null;
      }
      throw e;
    }
  }

  private static @Nullable String version(Document reply) {
    return reply.get("version") instanceof String v ? v : null;
  }

  /**
   * The lowest version among the {@code serverInfo} documents of an {@code explain} reply (a
   * mongod's at the top; through mongos, each shard's as well), or null if it has none.
   */
  public static @Nullable String explainedVersion(Document reply) {
    List<String> found = new java.util.ArrayList<>();
    serverInfos(reply, found, 0);
    String lowest = null;
    for (String v : found) {
      if (lowest == null || major(v) < major(lowest)) {
        lowest = v;
      }
    }
    return lowest;
  }

  private static void serverInfos(@Nullable Object value, List<String> found, int depth) {
    if (depth > 12) {
      return;
    }
    if (value instanceof Document d) {
      for (java.util.Map.Entry<String, Object> e : d.entrySet()) {
        if (e.getKey().equals("serverInfo") && e.getValue() instanceof Document info
            && version(info) != null) {
          found.add(version(info));
        } else {
          serverInfos(e.getValue(), found, depth + 1);
        }
      }
    } else if (value instanceof List<?> l) {
      for (Object o : l) {
        serverInfos(o, found, depth + 1);
      }
    }
  }

  /** The major version number {@code version} starts with, or MAX_VALUE if none. */
  private static int major(String version) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d{1,9})(\\.|$)")
        .matcher(version);
    return m.find() ? Integer.parseInt(m.group(1)) : Integer.MAX_VALUE;
  }

  /**
   * Refuses a server older than MongoDB {@value #MINIMUM_MAJOR_VERSION}.0; accepts one that
   * reports no version, or one whose version does not start with a number.
   *
   * @throws dev.arbor.core.TreeException naming {@code what}, the version found and the minimum
   */
  public static void requireSupportedVersion(@Nullable String version, String what) {
    if (version == null) {
      return;
    }
    if (major(version) < MINIMUM_MAJOR_VERSION) {
      throw new dev.arbor.core.TreeException("Collection '" + what + "' is on MongoDB " + version
          + "; Arbor needs MongoDB " + MINIMUM_MAJOR_VERSION + ".0 or later (its journal keeps"
          + " field names that start with '$', which older servers refuse)");
    }
  }

  /**
   * Stops using {@code $graphLookup}: the server refused it where it cannot run (in a transaction
   * on a sharded collection), whatever the probe or the mode said.
   */
  public void refuseGraphLookup() {
    if (!graphLookupRefused) {
      graphLookupRefused = true;
      LOG.debug("{}: $graphLookup was refused in a transaction; walks go level by level",
          collection.getNamespace().getFullName());
    }
  }

  /**
   * The collection for a probe, which a store makes during its first change: bounded by the
   * lock's command limit as every read of a change is, so that a stalled connection ends the
   * probe (undecided: the store does without this time and probes again later) instead of
   * holding the change.
   */
  private MongoCollection<Document> probing() {
    return collection.withTimeout(
        dev.arbor.mongo.internal.protocol.LockDocument.commandLimit(leaseMillis, waitMillis),
        java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** Whether {@code $graphLookup} can be used; probes on first call with a non-empty collection. */
  public boolean graphLookup() {
    if (graphLookupRefused) {
      return false;
    }
    if (graphLookupMode != Mode.PROBE) {
      return graphLookupMode == Mode.ON;
    }
    Boolean known = graphLookup;
    if (known != null) {
      return known;
    }
    try {
      Document first = probing().aggregate(List.of(
              new Document("$limit", 1),
              new Document("$project", new Document("_id", 1)),
              new Document("$graphLookup", new Document("from",
                  collection.getNamespace().getCollectionName())
                  .append("startWith", "arbor-probe-" + UUID.randomUUID())
                  .append("connectFromField", "_id")
                  .append("connectToField", "_id")
                  .append("maxDepth", 0)
                  .append("as", "found"))))
          .collation(Reads.SIMPLE).first();
      if (first == null) {
        return false; // empty collection: undecided, and no walk is needed anyway
      }
      known = first.get("found") instanceof List<?> found && found.isEmpty();
    } catch (MongoException e) {
      if (!definite(e)) {
        return false; // the walk this time; probed again next time
      }
      known = false;
    }
    graphLookup = known;
    LOG.debug("{}: $graphLookup {}", collection.getNamespace().getFullName(),
        known ? "works" : "is not used (missing or wrong on this server)");
    return known;
  }

  /** Whether updates given as aggregation pipelines work; probes on first call. */
  public boolean pipelineUpdates() {
    if (pipelineMode != Mode.PROBE) {
      return pipelineMode == Mode.ON;
    }
    Boolean known = pipelineUpdates;
    if (known != null) {
      return known;
    }
    try {
      probing().updateMany(scope == null ? Queries.nothing()
              : scope.filter(Queries.nothing(), collection.getCodecRegistry()),
          List.of(new Document("$set", new Document("arborProbe", "$_id"))),
          new com.mongodb.client.model.UpdateOptions().collation(Reads.SIMPLE));
      known = true;
    } catch (MongoException e) {
      if (!definite(e)) {
        return false; // per-value updates this time; probed again next time
      }
      known = false;
    }
    pipelineUpdates = known;
    LOG.debug("{}: pipeline updates {}", collection.getNamespace().getFullName(),
        known ? "work" : "are missing: moves use per-value updates");
    return known;
  }

  /**
   * Whether a probe's error is the server's answer (it refused the command), rather than a
   * network error or a timeout, which say nothing about what the server can do.
   */
  static boolean definite(MongoException e) {
    return (e instanceof com.mongodb.MongoCommandException
        || e instanceof com.mongodb.MongoWriteException
        || e instanceof com.mongodb.MongoBulkWriteException)
        && !TreeLock.transientError(e);
  }

  @Override
  public String toString() {
    return "graphLookup=" + (graphLookupMode == Mode.PROBE ? graphLookup : graphLookupMode)
        + ", pipelineUpdates=" + (pipelineMode == Mode.PROBE ? pipelineUpdates : pipelineMode);
  }
}
