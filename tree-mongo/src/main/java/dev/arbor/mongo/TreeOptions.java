package dev.arbor.mongo;

import static java.util.Objects.requireNonNull;

import com.mongodb.client.MongoClient;
import dev.arbor.core.TreeListener;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.FieldNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Options of a store opened with {@link TreePattern#open(com.mongodb.client.MongoCollection,
 * TreeOptions)}. Immutable; start from {@link #defaults()}:
 *
 * <pre>{@code
 * TreeStore tree = TreePattern.NESTED_SETS.open(collection,
 *     TreeOptions.defaults().withTransactions(client).withLease(Duration.ofSeconds(10)));
 * }</pre>
 *
 * <table>
 * <caption>options</caption>
 * <tr><th>option<th>default<th>effect
 * <tr><td>{@link #withTransactions transactions}<td>off<td>each change in one transaction of
 *     this client where the server runs transactions; elsewhere the lock and journal
 * <tr><td>{@link #withIsolatedReads isolated reads}<td>on<td>reads check the lock document
 *     before and after (2 round trips) and never return a half-done change; turn off only where
 *     there is a single writer or a half-done state is acceptable
 * <tr><td>{@link #withLease lease}<td>30 s<td>how long a dead lock holder blocks the tree
 * <tr><td>{@link #withLockWait lock wait}<td>60 s<td>how long a call waits for the lock before
 *     throwing {@link dev.arbor.core.TreeException}
 * <tr><td>{@link #withListener listeners}<td>none<td>told of each committed change
 * <tr><td>{@link #withScope scope}<td>none: one tree per collection<td>the store sees one of
 *     several trees kept in the collection, with a lock of its own
 * <tr><td>{@link #withFieldName field names}<td>the manual's, and {@code arborRank}, {@code
 *     arborDepth}<td>the names of the structural fields ({@link TreeField})
 * <tr><td>{@link #withIdType id type}<td>{@link NodeIdType#STRING}<td>the BSON type of node
 *     ids in {@code _id}, the parent, children and ancestors ({@code ObjectId}, UUID, long)
 * <tr><td>{@link #withMaxChildren max children}<td>{@value #DEFAULT_MAX_CHILDREN}<td>child
 *     references only: the most children a node's {@code children} array may hold
 * </table>
 *
 * <p>Options are checked when set, and against the pattern when the store is opened: an option
 * a pattern has no use for is refused then, naming the option.
 */
public final class TreeOptions {
  /**
   * The default bound of a {@code children} array: 100 000 children. An element of the array
   * takes 12 bytes of BSON besides the id (type, index key of up to 6 bytes, length,
   * terminator), so 100 000 children of 36-character ids (UUIDs) make a parent of about 4.8 MB,
   * under a third of MongoDB's 16 MB document limit, which the byte check enforces whatever the
   * bound (it takes over for ids longer than about 150 characters). The bound is a count rather
   * than bytes because that is what the cost grows with: every insert, move and page of children
   * under the parent reads or rewrites the whole array, and the multikey index on {@code
   * children} holds one entry per element. Lower it where a parent that wide is a mistake.
   */
  public static final int DEFAULT_MAX_CHILDREN = 100_000;
  /** The largest bound accepted: a million ids of one character already take 8 MB of BSON. */
  static final int MAX_MAX_CHILDREN = 1_000_000;
  private static final int UNSET = -1;
  private static final TreeOptions DEFAULTS = new TreeOptions(null, true, 30_000, 60_000,
      List.of(), null, null, UNSET, FieldNames.DEFAULTS, NodeIdType.STRING);

  private final @Nullable MongoClient client;
  private final boolean isolatedReads;
  private final long leaseMillis;
  private final long waitMillis;
  private final List<TreeListener> listeners;
  private final @Nullable String scopeField;
  private final @Nullable Object scopeValue;
  private final int maxChildren;
  private final FieldNames names;
  private final NodeIdType idType;

  private TreeOptions(@Nullable MongoClient client, boolean isolatedReads, long leaseMillis,
      long waitMillis, List<TreeListener> listeners, @Nullable String scopeField,
      @Nullable Object scopeValue, int maxChildren, FieldNames names, NodeIdType idType) {
    this.idType = idType;
    this.names = names;
    this.scopeField = scopeField;
    this.scopeValue = scopeValue;
    this.client = client;
    this.isolatedReads = isolatedReads;
    this.leaseMillis = leaseMillis;
    this.waitMillis = waitMillis;
    this.listeners = listeners;
    this.maxChildren = maxChildren;
  }

  /** The defaults: lock and journal, isolated reads, 30 s lease, 60 s lock wait. */
  public static TreeOptions defaults() {
    return DEFAULTS;
  }

  /** Runs each change in a transaction of {@code client} where the server runs transactions. */
  public TreeOptions withTransactions(MongoClient client) {
    return new TreeOptions(requireNonNull(client, "client"), isolatedReads, leaseMillis,
        waitMillis, listeners,
        scopeField, scopeValue, maxChildren, names, idType);
  }

  /** Whether reads are isolated from concurrent changes made with the lock and journal. */
  public TreeOptions withIsolatedReads(boolean isolatedReads) {
    return new TreeOptions(client, isolatedReads, leaseMillis, waitMillis, listeners,
        scopeField, scopeValue, maxChildren, names, idType);
  }

  /** How long the lock is held at most by a holder that stopped answering. */
  public TreeOptions withLease(Duration lease) {
    return new TreeOptions(client, isolatedReads, positive(lease, "lease"), waitMillis,
        listeners,
        scopeField, scopeValue, maxChildren, names, idType);
  }

  /** How long a call waits for the lock. */
  public TreeOptions withLockWait(Duration wait) {
    return new TreeOptions(client, isolatedReads, leaseMillis, positive(wait, "lock wait"),
        listeners,
        scopeField, scopeValue, maxChildren, names, idType);
  }

  /**
   * Adds a listener told after each committed change made through the store (see {@link
   * TreeListener}); listeners are called in the order they were added.
   */
  public TreeOptions withListener(TreeListener listener) {
    requireNonNull(listener, "listener");
    List<TreeListener> more = new ArrayList<>(listeners);
    more.add(listener);
    return new TreeOptions(client, isolatedReads, leaseMillis, waitMillis, List.copyOf(more),
        scopeField, scopeValue, maxChildren, names, idType);
  }

  /**
   * Opens one of several trees kept in one collection: the store sees, writes, locks, counts,
   * checks, repairs, snapshots and loads only the documents whose {@code field} equals {@code
   * value}, and has a lock and journal of its own, so writers of different trees never wait for
   * each other. The same node id may exist in several trees. Every pattern supports it (parent
   * and child references then walk the tree level by level instead of with {@code
   * $graphLookup}); docs/data-api.md, "Several trees in one collection", says how the documents are
   * stored, which indexes and which shard key to use.
   *
   * <pre>{@code
   * MongoTree acme = TreePattern.MATERIALIZED_PATHS.open(categories,
   *     TreeOptions.defaults().withScope("tenant", "acme"));
   * }</pre>
   *
   * <p>Checked when the store is opened: the field must be a plain field name that the pattern
   * does not reserve (not {@code _id}, no {@code arbor} prefix), the value non-null, encodable
   * in BSON, and selectable by equality (not an array nor a regular expression).
   *
   * @throws IllegalArgumentException (at open) naming the option if the field or value is not
   *     usable
   */
  public TreeOptions withScope(String field, Object value) {
    requireNonNull(field, "withScope: field");
    if (value == null) {
      throw new IllegalArgumentException("withScope(\"" + field + "\", null): the scope value"
          + " cannot be null");
    }
    return new TreeOptions(client, isolatedReads, leaseMillis, waitMillis, listeners, field,
        value, maxChildren, names, idType);
  }

  /**
   * {@link TreePattern#CHILD_REFERENCES} only: the most children one node may have, that is the
   * longest {@code children} array the store writes (default {@value #DEFAULT_MAX_CHILDREN}; see
   * {@link #DEFAULT_MAX_CHILDREN} for why). An insert, move or delete lifting children that would
   * give a node more, and a load of a tree with a wider node, throw {@link
   * dev.arbor.core.TreeException} naming the parent, and nothing is written. Whatever the bound,
   * a {@code children} array that would pass MongoDB's 16 MB document limit (measured in encoded
   * BSON) is refused the same way. A node that needs more children than this needs another
   * pattern: parent references, an array of ancestors or materialized paths keep each child in
   * its own document.
   *
   * @throws IllegalArgumentException if {@code maxChildren} is not between 1 and 1 000 000
   */
  public TreeOptions withMaxChildren(int maxChildren) {
    if (maxChildren < 1 || maxChildren > MAX_MAX_CHILDREN) {
      throw new IllegalArgumentException("maxChildren must be between 1 and " + MAX_MAX_CHILDREN
          + ": " + maxChildren);
    }
    return new TreeOptions(client, isolatedReads, leaseMillis, waitMillis, listeners,
        scopeField, scopeValue, maxChildren, names, idType);
  }

  /**
   * Names a structural field of the node documents: {@code withFieldName(TreeField.PARENT,
   * "parentId")} opens a collection whose nodes keep their parent's id in {@code parentId}. The
   * store reads, writes, indexes, checks and repairs that field under that name; the other
   * fields keep their names (the defaults are in {@link TreeField}). Fields whose name is a
   * default take no ordinary domain word, so most collections need none of this.
   *
   * <pre>{@code
   * MongoTree tree = TreePattern.NESTED_SETS.open(collection, TreeOptions.defaults()
   *     .withFieldName(TreeField.LEFT, "lft").withFieldName(TreeField.RIGHT, "rgt"));
   * }</pre>
   *
   * <p>Checked when set: the name must be a plain MongoDB field name (not empty, no {@code $}
   * first, no {@code .}: top-level fields only) and not one of Arbor's ({@code _id}, {@code
   * arborOp}, {@code arborLock}, {@code arborJournal}, {@code arborProbe}, {@code arborLane}).
   * Checked when the store is opened: the pattern must keep the field ({@link TreeField#usedBy}),
   * no two of its fields may share a name, and the scope field must differ from all of them.
   *
   * @throws IllegalArgumentException naming the option if the name is not usable
   */
  public TreeOptions withFieldName(TreeField field, String name) {
    requireNonNull(field, "withFieldName: field");
    requireNonNull(name, "withFieldName: name");
    String problem = FieldNames.problem(name);
    if (problem != null) {
      throw new IllegalArgumentException("TreeOptions.withFieldName(" + field + ", \"" + name
          + "\"): " + problem);
    }
    return new TreeOptions(client, isolatedReads, leaseMillis, waitMillis, listeners,
        scopeField, scopeValue, maxChildren, names.with(field, name), idType);
  }

  /**
   * Stores node ids as {@code type} (default {@link NodeIdType#STRING}): in {@code _id} and in
   * the fields naming other nodes (parent, children, ancestors), so that a collection whose ids
   * are {@code ObjectId}s, UUIDs or longs opens as it is. The contract keeps naming nodes by
   * strings, the canonical form of each stored id ({@link NodeIdType} gives the mapping); an id
   * not in that form is refused by {@code insert}, {@code load} and {@code graft}, naming it.
   *
   * <pre>{@code
   * MongoTree tree = TreePattern.PARENT_REFERENCES.open(collection, TreeOptions.defaults()
   *     .withIdType(NodeIdType.OBJECT_ID).withFieldName(TreeField.PARENT, "parentId"));
   * tree.insert(new ObjectId().toHexString(), Position.lastRoot());
   * }</pre>
   *
   * <p>Checked when the store is opened: a type other than {@code STRING} cannot be combined
   * with {@link #withScope} yet.
   *
   * @throws IllegalArgumentException (at open) naming the option if combined with a scope
   */
  public TreeOptions withIdType(NodeIdType type) {
    requireNonNull(type, "withIdType: type");
    return new TreeOptions(client, isolatedReads, leaseMillis, waitMillis, listeners,
        scopeField, scopeValue, maxChildren, names, type);
  }

  /** The id type of stores opened with these options. */
  NodeIdType idType() {
    return idType;
  }

  /**
   * The name {@code field} has in stores opened with these options: the one given with {@link
   * #withFieldName}, else its {@linkplain TreeField#defaultName() default}.
   */
  public String fieldName(TreeField field) {
    return names.name(requireNonNull(field, "field"));
  }

  /** The structural field names of stores opened with these options. */
  FieldNames names() {
    return names;
  }

  /** The scope field, or null for one tree per collection. */
  @Nullable String scopeField() {
    return scopeField;
  }

  /** The scope value, or null for one tree per collection. */
  @Nullable Object scopeValue() {
    return scopeValue;
  }

  /**
   * Checks the options against the pattern a store is opened with.
   *
   * @throws IllegalArgumentException naming an option the pattern has no use for
   */
  void checkFor(TreePattern pattern) {
    if (maxChildren != UNSET && pattern != TreePattern.CHILD_REFERENCES) {
      throw new IllegalArgumentException("TreeOptions.withMaxChildren applies to "
          + TreePattern.CHILD_REFERENCES + " only: " + pattern + " keeps no children array");
    }
    names.checkFor(pattern);
    if (idType != NodeIdType.STRING && scopeField != null) {
      throw new IllegalArgumentException("TreeOptions.withIdType(" + idType + ") cannot be"
          + " combined with withScope(\"" + scopeField + "\", ...) yet: a scoped tree stores"
          + " string node ids");
    }
  }

  private static long positive(Duration d, String what) {
    requireNonNull(d, what);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive: " + d);
    }
    return d.toMillis();
  }

  ServerCapabilities capabilities(com.mongodb.client.MongoCollection<org.bson.Document> c) {
    return ServerCapabilities.probing(c).client(client).isolatedReads(isolatedReads)
        .lease(leaseMillis, waitMillis).listeners(listeners).scope(scopeField, scopeValue)
        .maxChildren(maxChildren == UNSET ? DEFAULT_MAX_CHILDREN : maxChildren).names(names)
            .idType(idType);
  }

  @Override
  public String toString() {
    return "TreeOptions[transactions=" + (client != null) + ", isolatedReads=" + isolatedReads
        + ", lease=" + leaseMillis + "ms, lockWait=" + waitMillis + "ms"
        + (scopeField == null ? "" : ", scope=" + scopeField + ":" + scopeValue)
        + (maxChildren == UNSET ? "" : ", maxChildren=" + maxChildren)
        + (names.given().isEmpty() ? "" : ", fieldNames=" + names)
        + (idType == NodeIdType.STRING ? "" : ", idType=" + idType) + "]";
  }
}
