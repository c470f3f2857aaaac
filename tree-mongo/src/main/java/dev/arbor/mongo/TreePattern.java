package dev.arbor.mongo;

import static java.util.Objects.requireNonNull;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Node;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.AttributeNames;
import dev.arbor.mongo.internal.bson.Fits;
import dev.arbor.mongo.internal.bson.NodeIds;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.layout.Layouts;
import dev.arbor.mongo.internal.layout.Validators;
import java.util.Optional;
import java.util.Set;
import org.bson.Document;

/**
 * The five ways the MongoDB manual (Data Models, section 4.2 "Model Tree Structures") stores a
 * tree, each as a {@link TreeStore} over one collection with one document per node: a {@link
 * MongoTree}, which adds the reads that take the driver's filters.
 *
 * <h2>Which one do I need?</h2>
 *
 * <table>
 * <caption>round trips per operation; n = subtree size, N = tree size, d = depth</caption>
 * <tr><th>pattern<th>children<th>ancestors<th>descendants<th>move<th>documents written by a move
 * <tr><td>{@link #PARENT_REFERENCES}<td>1<td>1 ($graphLookup) or d<td>1 ($graphLookup) or d+1<td>
 *     3 + cycle check<td>1
 * <tr><td>{@link #CHILD_REFERENCES}<td>1<td>1 or d<td>1 or d+1<td>3 + cycle check<td>2
 * <tr><td>{@link #ARRAY_OF_ANCESTORS}<td>1<td>1<td>1<td>3<td>n
 * <tr><td>{@link #MATERIALIZED_PATHS}<td>1<td>1<td>1<td>3<td>n
 * <tr><td>{@link #NESTED_SETS}<td>1<td>2<td>2<td>2<td>up to N
 * </table>
 *
 * <p>Each layout's class documentation ({@code ParentReferenceLayout} …) shows its document
 * shape, its indexes and its costs; the {@code tree-bench} module measures them side by side. The
 * round trips above are the pattern's own; making changes all-or-nothing adds a constant: with the
 * lock and journal (the default), one round trip for a change whose plan is one update command
 * (fence, journal and release travel with the steps; three when it deletes), one more when the lock
 * must be taken before planning, and one per isolated read (none for a read that is one query by
 * {@code _id}); with transactions ({@link TreeOptions#withTransactions}), the transaction's
 * commands.
 *
 * <h2>Documents Arbor adds</h2>
 *
 * <p>Besides one document per node, a store keeps a lock document {@code {_id: {arbor: "lock"}}}
 * and, while a change is in flight, journal documents {@code {_id: {arbor: "journal", ...}}} and
 * insert fences {@code {_id: {arbor: "fence", ...}}} in the same collection; their ids are not
 * strings, so they never collide with a node, and every query of the store excludes them.
 * Documents written by a change carry {@code arborOp: {v, s}} (the change's version and step). See
 * docs/guarantees.md. A collection may hold several trees, each opened with {@link
 * TreeOptions#withScope}: then a node's {@code _id} is {@code {s: <scope value>, id: <node id>}}
 * and Arbor's own documents have {@code s} in their {@code _id} too.
 */
public enum TreePattern {
  /** Each node stores its parent's id in {@code parent} (manual §4.2.1). */
  PARENT_REFERENCES,
  /** Each node stores the ordered ids of its children in {@code children} (manual §4.2.2). */
  CHILD_REFERENCES,
  /** Each node stores its ancestors in {@code ancestors} and its parent (manual §4.2.3). */
  ARRAY_OF_ANCESTORS,
  /** Each node stores the path of its ancestors as a string in {@code path} (manual §4.2.4). */
  MATERIALIZED_PATHS,
  /** Each node stores its preorder interval in {@code left} and {@code right} (manual §4.2.5). */
  NESTED_SETS;

  /**
   * Opens a store of this pattern over {@code collection}, which may be empty or already hold a
   * tree in this pattern's layout. Nothing is read or written until the first call; call {@link
   * TreeStore#ensureIndexes()} once to create the indexes the store's queries need (it refuses,
   * as every change and the store's first read do, a collection laid out in another pattern,
   * naming it: see {@link #recognise}).
   *
   * <p>Structural changes are made all-or-nothing with a lock document and a journal kept in the
   * collection (no transactions needed); reads are isolated from concurrent changes. To use
   * multi-document transactions where the server has them, open it with {@link
   * TreeOptions#withTransactions}.
   */
  public MongoTree open(MongoCollection<Document> collection) {
    requireNonNull(collection, "collection");
    return open(collection, ServerCapabilities.probing(collection));
  }

  /** Opens a store of this pattern over {@code collection} with the given options. */
  public MongoTree open(MongoCollection<Document> collection, TreeOptions options) {
    requireNonNull(collection, "collection");
    requireNonNull(options, "options");
    options.checkFor(this);
    return open(collection, options.capabilities(collection));
  }

  /**
   * A schema validator for a collection of this pattern, to install with {@code createCollection}
   * or {@code collMod} (MongoDB's schema validation): node documents must have a string {@code
   * _id} and this pattern's structural fields with their types (a {@code parent} that is a
   * string or null, {@code ancestors} an array of strings, numeric {@code arborRank}, {@code
   * left}, {@code right} and {@code arborDepth}, ...); Arbor's lock, journal and fence documents,
   * whose {@code _id} is a document with an {@code arbor} key, pass. Every document Arbor writes
   * satisfies it, at every step of every change. Attributes are not constrained. A fresh
   * document each call. For stores opened with options that name the fields or keep several
   * trees in the collection, use {@link #validator(TreeOptions)}.
   *
   * <pre>{@code
   * database.createCollection("categories", new CreateCollectionOptions().validationOptions(
   *     new ValidationOptions().validator(TreePattern.ARRAY_OF_ANCESTORS.validator())));
   * }</pre>
   */
  public Document validator() {
    return validator(TreeOptions.defaults());
  }

  /**
   * The schema validator for a collection of this pattern whose stores are opened with {@code
   * options}: as {@link #validator()}, with the structural fields under the names the options
   * give them ({@link TreeOptions#withFieldName}), and, for a collection that holds several
   * trees ({@link TreeOptions#withScope}), a node {@code _id} that is a document {@code {s, id}}
   * with a string {@code id}, and the scope field required (of any type: the collection holds
   * the trees of every scope value); node ids ({@code _id}, the parent, the items of {@code
   * children} and ancestors) of the options' {@link TreeOptions#withIdType id type} ({@code
   * objectId}, {@code binData} for UUIDs, {@code long} or {@code int} for longs).
   *
   * @throws IllegalArgumentException naming the option if the options do not fit this pattern
   */
  public Document validator(TreeOptions options) {
    requireNonNull(options, "options");
    options.checkFor(this);
    return Validators.of(this, options.names(), options.scopeField(), options.idType());
  }

  /**
   * Whether every node that {@code entries} give would fit in one document of this pattern,
   * checked as a load checks it before writing anything, but over a stream: the entries are read
   * once, in preorder (as {@link dev.arbor.core.Tree#entries()} and a {@link
   * dev.arbor.core.json.TreeJsonReader} give them), holding only the path from the root, so a
   * file too large for memory can be checked before it is loaded with {@link
   * TreeStore#load(java.util.Iterator)}, which otherwise finds an oversized node only when it
   * reaches it (and then undoes what it wrote). Sizes are measured in encoded BSON, computed
   * without building documents, attributes encoded with the driver's default codecs; field names
   * and ids count at their default sizes. {@link #measure} gives, in the same pass, the total of
   * the documents in every pattern.
   *
   * @return the refusal a load would throw, naming the first node too large, its depth and size
   *     and the patterns that would hold the tree; empty if every node fits
   * @throws IllegalArgumentException naming the entry if the entries are not in preorder
   */
  public Optional<NodeTooLargeException> sizeRefusal(
      java.util.Iterator<? extends dev.arbor.core.Node> entries) {
    return measure(entries).refusal(this);
  }

  /**
   * What the tree that {@code entries} give would cost in each pattern, measured before any of
   * it is written: per pattern, the total and the largest of the node documents a load writes,
   * and the refusal of a document past MongoDB's 16 MB ({@link #sizeRefusal} for every pattern at
   * once). Sizes are measured in encoded BSON. The entries are read once, in preorder (as {@link
   * dev.arbor.core.Tree#entries()} and a {@link dev.arbor.core.json.TreeJsonReader} give them),
   * holding only the path from the root, so a file too large for memory, or whose documents
   * would total more than the server can hold, is measured in one pass; each document's size is
   * computed without building it (attributes encoded with the driver's default codecs), as the
   * load with the default options would write it.
   *
   * <pre>{@code
   * TreeSizes sizes = TreePattern.measure(TreeJson.reader(in));
   * long bytes = sizes.totalBytes(TreePattern.MATERIALIZED_PATHS);  // the sum of its documents
   * }</pre>
   *
   * @throws IllegalArgumentException naming the entry if the entries are not in preorder
   */
  public static TreeSizes measure(
      java.util.Iterator<? extends dev.arbor.core.Node> entries) {
    requireNonNull(entries, "entries");
    return Fits.measure(entries, com.mongodb.MongoClientSettings.getDefaultCodecRegistry());
  }

  /**
   * Whether a node's document in this pattern grows with the node's depth: an array of ancestors
   * and a materialized path hold the whole path from the root, so a tree's documents total the
   * sum of its nodes' depths (the square of the depth for a chain: a 100 000-level chain of short
   * ids is tens of GB of materialized paths). Parent references, child references and nested
   * sets keep documents whose size does not depend on depth, and hold a tree in space linear in
   * its number of nodes.
   */
  public boolean documentsGrowWithDepth() {
    return this == ARRAY_OF_ANCESTORS || this == MATERIALIZED_PATHS;
  }

  /**
   * Opens a store of this pattern over {@code collection} whose nodes are the collection's
   * document class {@code T} (a record or a POJO), encoded and decoded by the collection's codec
   * registry; as {@link #open(MongoCollection)} otherwise. See {@link TypedTree}.
   *
   * @throws IllegalArgumentException if the registry has no codec for the document class
   */
  public <T> TypedTree<T> openTyped(MongoCollection<T> collection) {
    return openTyped(collection, TreeOptions.defaults());
  }

  /** As {@link #openTyped(MongoCollection)}, with the given options. */
  public <T> TypedTree<T> openTyped(MongoCollection<T> collection, TreeOptions options) {
    requireNonNull(collection, "collection");
    requireNonNull(options, "options");
    return open(collection.withDocumentClass(Document.class), options)
        .withDocumentClass(collection.getDocumentClass());
  }

  /**
   * Says which pattern the tree in {@code collection} is laid out in, from the structural fields
   * of a few of its node documents (at most {@value Layouts#SAMPLE}; documents with string {@code
   * _id}s, the lock and journal documents have others): {@code parent} for parent references,
   * {@code children} for child references, {@code ancestors} with {@code parent} for an array of
   * ancestors, {@code path} for materialized paths, {@code left} and {@code right} for nested sets
   * (a document that has the fields of two patterns is laid out in the one whose fields it has
   * more fully: an array of ancestors and nested sets have a {@code parent} too). Reads one batch
   * of documents, writes nothing.
   *
   * <p>Every store makes the same check before its first change, load, repair or read, and
   * refuses a collection laid out in another pattern, naming it; {@link TreeStore#check()}
   * reports it.
   *
   * @return the pattern, or empty for an empty collection or one whose documents fit no pattern,
   *     or two equally (attributes named like another pattern's fields can make them)
   */
  public static Optional<TreePattern> recognise(MongoCollection<Document> collection) {
    return recognise(collection, TreeOptions.defaults());
  }

  /**
   * As {@link #recognise(MongoCollection)}, reading the structural fields under the names
   * {@code options} give them ({@link TreeOptions#withFieldName}; names a pattern does not keep
   * are ignored here), the node ids of the options' type ({@link TreeOptions#withIdType}), and
   * the nodes of the options' tree if they have a scope ({@link TreeOptions#withScope}).
   *
   * @throws IllegalArgumentException if the options' scope value cannot be stored in BSON
   */
  public static Optional<TreePattern> recognise(MongoCollection<Document> collection,
      TreeOptions options) {
    requireNonNull(collection, "collection");
    requireNonNull(options, "options");
    Set<TreePattern> layout = Layouts.of(options.scopeField() != null
        ? Layouts.sample(collection, new Scope(options.scopeField(),
            Scope.encode(options.scopeValue(), collection.getCodecRegistry())))
        : Layouts.sample(new NodeIds(options.idType(), options.names()).collection(collection)),
        options.names());
    return layout.size() == 1 ? Optional.of(layout.iterator().next()) : Optional.empty();
  }

  /**
   * Why {@code name} is refused as the name of an attribute of a node of this pattern ({@code
   * attribute} true) or as a key inside an attribute's value ({@code attribute} false), or empty
   * if it is accepted. Attributes may not take {@code _id}, the pattern's structural fields or
   * Arbor's own names ({@link #reservedNames()}); at any depth, MongoDB field names cannot be
   * empty, start with {@code $} or contain {@code .} or NUL. Stores refuse such attributes with an
   * {@link IllegalArgumentException} before writing; this lets a reader of another format refuse
   * them first, where it can say where they are.
   */
  public Optional<String> nameRefusal(String name, boolean attribute) {
    return nameRefusal(name, attribute, TreeOptions.defaults());
  }

  /**
   * As {@link #nameRefusal(String, boolean)}, for stores opened with {@code options}: the
   * structural fields under the names the options give them, and the scope field, are reserved.
   */
  public Optional<String> nameRefusal(String name, boolean attribute, TreeOptions options) {
    requireNonNull(name, "name");
    Set<String> reserved = reservedNames(options);
    if (attribute && reserved.contains(name)) {
      return Optional.of("reserved by this pattern for the tree structure (reserved: "
          + String.join(", ", reserved) + ")");
    }
    return Optional.ofNullable(AttributeNames.fieldNameProblem(name));
  }

  /**
   * The attribute names stores of this pattern keep for themselves, sorted: {@code _id}, the
   * pattern's structural fields (see the table in docs/patterns.md), {@code arborOp}, the mark a
   * change leaves on the documents it writes, and {@code arborLock} and {@code arborJournal}, the
   * fields of the lock and journal documents.
   */
  public Set<String> reservedNames() {
    return reservedNames(TreeOptions.defaults());
  }

  /**
   * As {@link #reservedNames()}, for stores opened with {@code options}: the structural fields
   * under the names the options give them, and the scope field of a scoped tree.
   *
   * @throws IllegalArgumentException naming the option if the options do not fit this pattern
   */
  public Set<String> reservedNames(TreeOptions options) {
    requireNonNull(options, "options");
    options.checkFor(this);
    return AttributeNames.reserved(this, options.names(), options.scopeField());
  }

  /** A store of this pattern: the skeleton every pattern shares, with this pattern's layout. */
  MongoTree open(MongoCollection<Document> collection, ServerCapabilities capabilities) {
    return new MongoTreeStore(this, collection, capabilities);
  }

}
