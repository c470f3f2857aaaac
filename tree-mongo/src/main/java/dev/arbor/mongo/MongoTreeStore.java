package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static java.util.Objects.requireNonNull;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.InsertManyOptions;
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
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
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

  final MongoCollection<Document> collection;
  final String collectionName;
  final ServerCapabilities capabilities;
  private final Set<String> structuralFields;

  MongoTreeStore(MongoCollection<Document> collection, ServerCapabilities capabilities,
      Set<String> structuralFields) {
    this.collection = requireNonNull(collection, "collection");
    this.collectionName = collection.getNamespace().getCollectionName();
    this.capabilities = capabilities;
    this.structuralFields = Set.copyOf(structuralFields);
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

  @Override
  public long size() {
    return collection.countDocuments();
  }

  @Override
  public void load(Tree tree) {
    requireNonNull(tree, "tree");
    for (Tree.Entry e : tree.entries()) {
      checkAttributes(e.id(), e.attributes());
    }
    requireEmpty();
    List<Document> batch = new ArrayList<>();
    List<String> written = new ArrayList<>();
    try {
      for (Document d : documentsFor(tree)) {
        batch.add(d);
        if (batch.size() == LOAD_BATCH) {
          insertBatch(batch, written);
        }
      }
      insertBatch(batch, written);
    } catch (RuntimeException e) {
      // Leave the store as it was: empty.
      for (int i = 0; i < written.size(); i += IN_BATCH) {
        collection.deleteMany(in(ID, written.subList(i, Math.min(written.size(), i + IN_BATCH))));
      }
      throw translate(e, null);
    }
  }

  private void insertBatch(List<Document> batch, List<String> written) {
    if (batch.isEmpty()) {
      return;
    }
    try {
      collection.insertMany(batch, new InsertManyOptions().ordered(true));
    } finally {
      // On failure some of the batch may be in; deleting ids that are absent is harmless.
      for (Document d : batch) {
        written.add(d.getString(ID));
      }
    }
    batch.clear();
  }

  private void requireEmpty() {
    if (collection.find().projection(Projections.include(ID)).limit(1).first() != null) {
      throw new TreeException("Cannot load into collection '" + collectionName
          + "': it is not empty (" + collection.countDocuments() + " documents)");
    }
  }

  /** The documents of a whole tree, derived fields computed in one pass over its preorder. */
  abstract Iterable<Document> documentsFor(Tree tree);

  @Override
  public Tree snapshot() {
    return forest(true).toTree();
  }

  /** Every node's structure (and attributes, if asked), decoded by the pattern from one scan. */
  abstract Forest forest(boolean withAttributes);

  @Override
  public List<Problem> check() {
    List<Document> docs = new ArrayList<>();
    collection.find().into(docs);
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
    checkDocuments(byId, problems);
    return problems;
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
      if (name.isEmpty() || name.startsWith("$") || name.contains(".")
          || name.indexOf('\0') >= 0) {
        throw new IllegalArgumentException("Attribute name '" + name + "' of node '" + id
            + "' cannot be a MongoDB field name (empty, starts with '$', contains '.' or NUL)");
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
    return collection.find(eq(ID, id)).projection(projection).first();
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
    for (Document d : collection.find(in(ID, ids)).projection(projection)) {
      out.put(d.getString(ID), d);
    }
    return out;
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
    if (!insert && !docs.containsKey(id)) {
      throw new NodeNotFoundException(id);
    }
    if (anchor != null && !docs.containsKey(anchor)) {
      throw new NodeNotFoundException(anchor);
    }
    return docs;
  }

  /** Runs writes in one ordered bulk write (one round trip for up to 100 000 writes). */
  final void write(List<? extends WriteModel<Document>> writes, String id) {
    if (writes.isEmpty()) {
      return;
    }
    try {
      collection.bulkWrite(writes);
    } catch (RuntimeException e) {
      throw translate(e, id);
    }
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
      return new TreeException("Duplicate id while writing to '" + m.getMessage() + "'", m);
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
