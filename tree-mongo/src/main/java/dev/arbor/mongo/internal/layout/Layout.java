package dev.arbor.mongo.internal.layout;

import static com.mongodb.client.model.Filters.in;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static java.util.Objects.requireNonNull;

import com.mongodb.client.model.IndexModel;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.Node;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.bson.MistypedId;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.read.Forest;
import dev.arbor.mongo.internal.read.KeyedPreorder;
import dev.arbor.mongo.internal.read.NodeReads;
import dev.arbor.mongo.internal.read.PreorderCursor;
import dev.arbor.mongo.internal.read.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * One of the manual's five tree patterns as the documents of a collection: its fields, the
 * documents it writes, the plans of its changes and the queries of its reads. {@link
 * MongoTreeStore} is the skeleton every pattern shares (the contract's checks, the protocol that
 * makes changes all-or-nothing and reads isolated, listeners, loads, checks); it asks its layout
 * only what differs between patterns.
 *
 * <p>A layout holds no state of its own beyond its {@link LayoutContext} (field names, id type,
 * scope, ranks, the node-document mapping, the server's capabilities, the {@link Walker}): it is
 * immutable, and one instance serves a store and all its {@code withSession} views, from any
 * thread. Every read runs on the {@link Reads} (or {@link Change}) context the store's protocol
 * hands it; every plan adds steps to its {@link Change}, which the protocol then applies.
 *
 * <p>The implementations, one per pattern, each document their document shape, their indexes,
 * the cost of each operation and when to choose them: {@link ParentReferenceLayout}, {@link
 * ChildReferenceLayout}, {@link ArrayOfAncestorsLayout}, {@link MaterializedPathLayout}, {@link
 * NestedSetLayout}.
 */
public interface Layout {
  /**
   * The id (or path) in field {@code field} of node document {@code d}, null if it has none.
   *
   * @throws dev.arbor.core.TreeException naming the node if the field holds something else (a
   *     number, an array: a collection written by another tool, the manual's nested-set root
   *     {@code parent: 0}, which its layout reads as a root first), which {@code check()} lists and
   *     {@code repair()} rewrites where it is derived, rather than a {@code ClassCastException}
   */
  static @org.jspecify.annotations.Nullable String stringField(org.bson.Document d, String field) {
    Object v = d.get(field);
    if (v == null || v instanceof String) {
      return (String) v;
    }
    throw notAnId(d, field, v);
  }

  /**
   * The ids in array field {@code field} of node document {@code d} (children, ancestors), empty
   * if it has none.
   *
   * @throws dev.arbor.core.TreeException naming the node if the field is not an array of ids (an
   *     item of another type, {@link MistypedId}), as {@link #stringField}
   */
  static java.util.List<String> idList(org.bson.Document d, String field) {
    Object v = d.get(field);
    if (v == null) {
      return java.util.List.of();
    }
    if (!(v instanceof java.util.List<?> list)) {
      throw notAnId(d, field, v);
    }
    for (Object each : list) {
      if (!(each instanceof String)) {
        throw notAnId(d, field, each);
      }
    }
    @SuppressWarnings("unchecked")
    java.util.List<String> ids = (java.util.List<String>) list;
    return ids;
  }

  /**
   * The ids in a child references {@code children} array {@code field} of node document {@code
   * d}, as {@link #idList}, the refusal of an item that is no id at all (a number, a null, a
   * document another tool wrote) telling what {@code repair()} does with it: it drops it (the
   * array is authoritative, nothing derives it).
   *
   * @throws dev.arbor.core.TreeException naming the node, the array and the item
   */
  static java.util.List<String> childIdList(org.bson.Document d, String field) {
    if (d.get(field) instanceof java.util.List<?> list) {
      for (Object each : list) {
        if (!(each instanceof String) && !(each instanceof MistypedId)) {
          throw new dev.arbor.core.TreeException("node '" + d.get("_id") + "' has " + field + " "
              + dev.arbor.mongo.internal.bson.NodeIds.shown(list) + " holding "
              + dev.arbor.mongo.internal.bson.NodeIds.shown(each) + ", which is not a node id:"
              + " check() lists the problems, repair() drops the items that are not node ids (a"
              + " change refused for it wrote nothing)");
        }
      }
    }
    return idList(d, field);
  }

  /**
   * Whether reference {@code ref} (a parent, an item of children or ancestors, as decoded) names
   * node {@code id}: it is {@code id}, or another form of it ({@link MistypedId}).
   */
  static boolean names(@org.jspecify.annotations.Nullable Object ref, String id) {
    return id.equals(ref) || ref instanceof MistypedId m && m.candidates().contains(id);
  }

  /**
   * The problem of {@code field} of node {@code id} holding {@code m}, in the words of the id
   * type, telling whether {@code repair()} rewrites it (it is another form of the id of exactly
   * one node of {@code ids}).
   */
  static Problem mistyped(String id, String field, MistypedId m,
      java.util.function.Predicate<Object> ids) {
    int existing = 0;
    for (String candidate : m.candidates()) {
      existing += ids.test(candidate) ? 1 : 0;
    }
    return new Problem(id, m.problem(field, existing));
  }

  /**
   * The id {@code repair()} writes for reference {@code ref}: itself if it is an id, the one
   * existing node it is another form of ({@link MistypedId}), else null (left as it is).
   */
  static @org.jspecify.annotations.Nullable String repaired(@org.jspecify.annotations.Nullable
      Object ref, java.util.function.Predicate<Object> ids) {
    if (ref instanceof String s) {
      return s;
    }
    if (!(ref instanceof MistypedId m)) {
      return null;
    }
    String found = null;
    for (String candidate : m.candidates()) {
      if (ids.test(candidate)) {
        if (found != null) {
          return null; // a legacy UUID naming two nodes: no guess
        }
        found = candidate;
      }
    }
    return found;
  }

  /**
   * Plans the rewrite of reference field {@code field} of node {@code id}, holding {@code m}, as
   * {@code value} (an id or a list of ids, converted to the id type by the change). A number
   * equal to the id (a long written as a double) is unset first: an update that sets a field to
   * a value it compares equal to may leave the stored value as it is.
   */
  static void rewrite(Change c, Object id, String field, @org.jspecify.annotations.Nullable
      Object stored, Object value) {
    if (holdsNumber(stored)) {
      c.set(id, com.mongodb.client.model.Updates.unset(field));
    }
    c.set(id, com.mongodb.client.model.Updates.set(field, value));
  }

  private static boolean holdsNumber(@org.jspecify.annotations.Nullable Object stored) {
    if (stored instanceof MistypedId m) {
      return m.value() instanceof Number || m.value() instanceof org.bson.types.Decimal128;
    }
    if (stored instanceof List<?> list) {
      for (Object each : list) {
        if (holdsNumber(each)) {
          return true;
        }
      }
    }
    return false;
  }

  /** The refusal of a read or change that meets {@code v}, not an id, in {@code field}. */
  private static dev.arbor.core.TreeException notAnId(org.bson.Document d, String field,
      @org.jspecify.annotations.Nullable Object v) {
    if (v instanceof MistypedId m) {
      return new dev.arbor.core.TreeException("node '" + d.get("_id") + "' has in " + field
          + " " + m + ", which " + "is not " + MistypedId.article(m.type())
          + ", the type of this tree's ids: check() lists the problems, repair() rewrites"
          + " another form of an existing node's id as its id (a change refused for it wrote"
          + " nothing)");
    }
    return new dev.arbor.core.TreeException("node '" + d.get("_id") + "' has " + field + " "
        + dev.arbor.mongo.internal.bson.NodeIds.shown(v) + ", which is not a node id nor a path: check() lists the problems, repair() rewrites"
        + " the fields derived from the authoritative ones");
  }


  /** What a layout is built from. */
  public LayoutContext context();

  // ------------------------------------------------------------------ the pattern and its fields

  /** The pattern this layout implements. */
  public TreePattern pattern();

  /** The indexes this pattern's queries need. */
  public List<IndexModel> indexes();

  /**
   * The {@link #indexes()} as the store creates them: for a scoped tree each led by the scope
   * field (each tree's queries use it, and a collection sharded on the scope field keeps them
   * local to one shard), and all with the collation of Arbor's queries (a collection whose
   * default collation is another is refused at open; an index without one would take the
   * collection's).
   */
  public default List<IndexModel> scopedIndexes(CodecRegistry codecs) {
    List<IndexModel> indexes = indexes();
    Scope scope = context().scope();
    if (scope != null) {
      List<IndexModel> scoped = new ArrayList<>();
      for (IndexModel m : indexes) {
        BsonDocument keys = new BsonDocument(scope.field(), new BsonInt32(1));
        keys.putAll(m.getKeys().toBsonDocument(BsonDocument.class, codecs));
        scoped.add(new IndexModel(keys, m.getOptions()));
      }
      indexes = scoped;
    }
    for (IndexModel m : indexes) {
      m.getOptions().collation(Reads.SIMPLE);
    }
    return indexes;
  }

  /**
   * What is wrong with the structural fields of one document (read with the projection the
   * layout plans with), or null if they have the pattern's types; a graft refuses to start from a
   * document in another layout, and so do changes unless {@link #changeProblem} says otherwise.
   */
  public @Nullable String layoutProblem(Document d);

  /**
   * What stops a change (an insert, move or delete) from starting from document {@code d}, or
   * null: by default its {@link #layoutProblem}. A pattern whose changes can work on documents
   * that lack a field the layout adds (nested sets without {@code arborDepth}, as the manual
   * writes them) accepts them here; a graft, which writes from the parent's fields, still asks
   * for {@link #layoutProblem}.
   */
  public default @Nullable String changeProblem(Document d) {
    return layoutProblem(d);
  }

  // ------------------------------------------------------------------ plans of changes

  /** Plans an insert; attributes are already checked. */
  public void planInsert(Change c, String id, Position position, Map<String, Object> attributes);

  /** Plans a move. */
  public void planMove(Change c, String id, Position position);

  /**
   * Plans a delete.
   *
   * @return the number of nodes the steps delete, or -1 to take the count of deleted documents
   *     (0 meaning the node did not exist)
   */
  public long planDelete(Change c, String id);

  /**
   * Plans the delete of {@code id} alone, its children taking its place among its siblings in
   * their order.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public void planLift(Change c, String id);

  // ------------------------------------------------------------------ reads of the structure

  /** The node {@code id} with its attributes, if it exists. */
  public Optional<Node> findNode(Reads r, String id);

  /** The roots in order. */
  public List<String> rootIds(Reads r);

  /**
   * The children of {@code id} in order.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public List<String> childIds(Reads r, String id);

  /**
   * The ancestors of {@code id}, root first.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public List<String> ancestorIds(Reads r, String id);

  /**
   * The descendants of {@code id} in preorder, down to {@code maxDepth} levels.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public List<String> descendantIds(Reads r, String id, int maxDepth);

  /** Whether {@code id} is a descendant of {@code ancestorId}; both must exist. */
  public boolean descends(Reads r, String id, String ancestorId);

  /**
   * The parent of {@code id}, null for a root: by default the {@code parent} field of its
   * document, which parent references, the array of ancestors and nested sets keep.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public default @Nullable String parentOf(Reads r, String id) {
    String parentField = context().names().parent;
    return r.require(id, fields(parentField)).getString(parentField);
  }

  /** A node's parent (null for a root) and the ids of its descendants. */
  public record Family(@Nullable String parent, List<String> descendants) {}

  /**
   * The parent of {@code id} and the ids of its descendants, as a change in a lane reads them
   * under its marks (its footprint): by default {@link #parentOf} then {@link #descendantIds};
   * patterns whose node and children one query finds read a leaf's in one round trip.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public default Family parentAndDescendants(Reads r, String id) {
    String parent = parentOf(r, id);
    return new Family(parent, descendantIds(r, id, Integer.MAX_VALUE));
  }

  /** The depth of {@code id}: the number of its ancestors, unless the pattern stores it. */
  public default int depthOf(Reads r, String id) {
    return ancestorIds(r, id).size();
  }

  /** The number of children of {@code id}; by default, its children's ids. */
  public default long childCountOf(Reads r, String id) {
    return childIds(r, id).size();
  }

  /** The number of descendants of {@code id}; by default, its descendants' ids. */
  public default long descendantCountOf(Reads r, String id) {
    return descendantIds(r, id, Integer.MAX_VALUE).size();
  }

  /**
   * The filter of the subtree of {@code id}; by default the ids of the subtree.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public default Bson subtreeFilter(Reads r, String id) {
    List<String> ids = new ArrayList<>();
    ids.add(id);
    ids.addAll(descendantIds(r, id, Integer.MAX_VALUE));
    return in(ID, ids);
  }

  // ------------------------------------------------------------------ reads of node data

  /**
   * The rows of a subtree: the top node's first (its parent null), then its descendants in any
   * order; and the top node's depth, or -1 where the pattern does not know it without more reads.
   */
  public record Rows(int depth, List<Row> rows) {}

  /**
   * The rows of {@code id} and its descendants down to {@code maxDepth} levels, with the
   * attributes if asked (otherwise the structure alone).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  public Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes);

  /**
   * How a pattern finds the children of a node in one query: the projection of the node's
   * document to read, the filter of its children given that document, the field that orders
   * siblings, a child's parent from its document (read with the same projection), and the node's
   * depth from its document (-1 if the pattern does not store it).
   */
  public record ChildGroup(@Nullable Bson projection, Function<Document, Bson> children,
      String order,
      Function<Document, String> parent, ToIntFunction<Document> depth) {}

  /** How this pattern finds children; child references, which override the reads, return null. */
  public @Nullable ChildGroup childGroup();

  /**
   * A page of children: the document of {@code id} (and of {@code after}) by {@code _id}, then
   * one query of the sibling group in order, from after {@code after}'s place, filtered, limited
   * ({@link NodeReads#childPage}). Child references override it (the order is the array of the
   * parent).
   */
  public default List<Node> childNodes(Reads r, String id, @Nullable String after, int limit,
      @Nullable Bson filter) {
    return NodeReads.childPage(this, r, id, after, limit, filter);
  }

  // ------------------------------------------------------------------ the whole tree

  /** Every node's structure (and attributes, if asked), decoded by the pattern from one scan. */
  public Forest forest(Reads r, boolean withAttributes);

  /**
   * The pattern's preorder walk over {@code r}: by default a {@link KeyedPreorder} over {@link
   * #preorderKeys()}.
   */
  public default PreorderCursor preorder(Reads r) {
    return new KeyedPreorder(r, requireNonNull(preorderKeys(), "preorderKeys"),
        context().documents()::attributesOf);
  }

  /**
   * How the pattern's children name their parent, for {@link KeyedPreorder}; null for a pattern
   * that walks otherwise (and overrides {@link #preorder}).
   */
  public default KeyedPreorder.@Nullable Keys preorderKeys() {
    return null;
  }

  /** The documents of a whole tree, derived fields computed in one pass over its preorder. */
  public Iterable<Document> documentsFor(Tree tree);

  /**
   * Checks, before anything is written, that the pattern can store {@code tree}; by default it
   * can.
   *
   * @throws TreeException naming the node it cannot store
   */
  public default void checkLoad(Tree tree) {}

  // ------------------------------------------------------------------ check and repair

  /** Checks the pattern's fields of every document, appending problems that name the node. */
  public void checkDocuments(Map<String, Document> byId, List<Problem> problems);

  /**
   * Plans the steps that rebuild derived fields and fill in missing ones, from a scan of every
   * node document (in the collection's natural order, which orders siblings that have no rank).
   */
  public void planRepair(Change c, List<Document> docs);

  // ------------------------------------------------------------------ shared by the planners

  /**
   * Reads, in one query, the document of the subject of an insert or move and of its position's
   * anchor, and checks them in the reference's order: for an insert the id must be new, for a move
   * it must exist; then the anchor must exist.
   */
  public default Map<String, Document> subjectAndAnchor(Reads r, String id, boolean insert,
      Position position, @Nullable Bson projection) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    String anchor = position.anchor();
    Map<String, Document> docs = r.documents(anchor == null ? List.of(id) : List.of(id, anchor),
        projection);
    return checkedSubjectAndAnchor(id, insert, anchor, docs);
  }

  /**
   * What {@link #subjectAndAnchorWith} read: the subject's and the anchor's documents by id, and
   * the documents the extra filter selected ({@code others}: all of them, or as many as the
   * planner said it needs), or null when they crowded out an id and are not known.
   */
  public record Found(Map<String, Document> docs, @Nullable List<Document> others) {}

  /**
   * As {@link #subjectAndAnchor}, and in the same query the documents {@code also} selects (the
   * planner needs at most {@code most} of them: a child for a leaf check, a parent). The query is
   * {@code $or} of the ids and {@code also}, limited to the ids plus {@code most}; when {@code
   * also} selects more and they crowd out an id, {@link Found#others} is null and the ids are
   * read again by themselves (a round trip more, never for a leaf of a sound tree).
   */
  public default Found subjectAndAnchorWith(Reads r, String id, boolean insert, Position position,
      @Nullable Bson projection, Bson also, int most) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    String anchor = position.anchor();
    List<String> keys = anchor == null ? List.of(id) : List.of(id, anchor);
    int limit = keys.size() + most;
    Map<String, Document> docs = new java.util.HashMap<>();
    List<Document> others = new ArrayList<>();
    int read = 0;
    for (Document d : r.find(com.mongodb.client.model.Filters.or(in(ID, keys), also))
        .projection(projection).limit(limit)) {
      read++;
      if (d.get(ID) instanceof String each && keys.contains(each)) {
        docs.put(each, d);
      }
      others.add(d); // an id's document may match the filter too: the planner tells
    }
    // Crowded: the filter's documents filled the limit before every id's was read.
    boolean crowded = read >= limit && !docs.keySet().containsAll(keys);
    if (crowded) {
      docs = r.documents(keys, projection);
    }
    return new Found(checkedSubjectAndAnchor(id, insert, anchor, docs), crowded ? null : others);
  }

  private Map<String, Document> checkedSubjectAndAnchor(String id, boolean insert,
      @Nullable String anchor, Map<String, Document> docs) {
    if (insert && docs.containsKey(id)) {
      throw new DuplicateNodeException(id);
    }
    for (Document d : docs.values()) {
      String problem = changeProblem(d);
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
}
