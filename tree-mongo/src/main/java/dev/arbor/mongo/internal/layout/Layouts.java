package dev.arbor.mongo.internal.layout;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Problem;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.FieldNames;
import dev.arbor.mongo.internal.bson.NodeIds;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.protocol.Reads;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * Tells which of the five patterns node documents are laid out in, from their structural fields
 * alone, so that a store never reads, repairs or changes a collection of another pattern as its
 * own (a parent-references store would otherwise take an array of ancestors' {@code ancestors}
 * for an attribute, and its repair would add {@code arborRank} to nested sets).
 *
 * <pre>
 * pattern              needs                          besides, counted if present
 * parent references    parent (id or null)            arborRank
 * child references     children (array)               -
 * array of ancestors   ancestors (array), parent      arborRank
 * materialized paths   path (null or ",...,")         arborRank
 * nested sets          left, right (numbers)          parent, arborDepth
 * </pre>
 *
 * <p>A document fits a pattern when it has the fields the pattern needs; how well is the share of
 * the pattern's fields it has. It is laid out in the patterns it fits best, and of those in the
 * ones with the most fields present: an array-of-ancestors document also fits parent references
 * ({@code parent}), and a nested-sets document too, but they fit their own pattern better. The
 * manual's hand-written collections, without Arbor's {@code arborRank} and {@code arborDepth}, are
 * told apart the same way. A collection is laid out in the patterns most of its sampled documents
 * are laid out in. Attributes can blur this (a parent-references node with an attribute {@code
 * path} that looks like a materialized path fits both); such a document counts for every pattern it
 * fits best, and a store accepts a collection whose layout includes its own pattern.
 */
public final class Layouts {
  /** Node documents read to recognise a collection's layout. */
  static final int SAMPLE = 20;

  private Layouts() {}

  /** The fields of a pattern's layout that a document may have: the needed ones first. */
  public static List<String> fields(TreePattern pattern, FieldNames names) {
    return switch (pattern) {
      case PARENT_REFERENCES -> List.of(names.parent, names.rank);
      case CHILD_REFERENCES -> List.of(names.children);
      case ARRAY_OF_ANCESTORS -> List.of(names.ancestors, names.parent, names.rank);
      case MATERIALIZED_PATHS -> List.of(names.path, names.rank);
      case NESTED_SETS -> List.of(names.left, names.right, names.parent, names.depth);
    };
  }

  /**
   * How many of the pattern's fields the document has with the pattern's types, or -1 if it
   * lacks one the pattern needs.
   */
  static int fit(TreePattern pattern, Document d, FieldNames names) {
    int present = 0;
    List<String> fields = fields(pattern, names);
    for (int i = 0; i < fields.size(); i++) {
      String f = fields.get(i);
      boolean ok = d.containsKey(f) && typed(pattern, f, d.get(f), names);
      boolean needed = i < needed(pattern);
      if (needed && !ok) {
        return -1;
      }
      present += ok ? 1 : 0;
    }
    return present;
  }

  private static int needed(TreePattern pattern) {
    return pattern == TreePattern.ARRAY_OF_ANCESTORS || pattern == TreePattern.NESTED_SETS ? 2
        : 1;
  }

  private static boolean typed(TreePattern pattern, String field, Object v, FieldNames names) {
    boolean numeric = pattern == TreePattern.NESTED_SETS
        ? field.equals(names.left) || field.equals(names.right) || field.equals(names.depth)
        : field.equals(names.rank);
    if (numeric) {
      return v instanceof Number;
    }
    if (field.equals(names.parent) && pattern != TreePattern.CHILD_REFERENCES
        && pattern != TreePattern.MATERIALIZED_PATHS) {
      // The manual's nested sets give a root the parent 0.
      return v == null || v instanceof String
          || pattern == TreePattern.NESTED_SETS && v instanceof Number n && n.intValue() == 0;
    }
    if (pattern == TreePattern.MATERIALIZED_PATHS) {
      return v == null || v instanceof String s && s.length() >= 2 && s.startsWith(",")
          && s.endsWith(",");
    }
    return v instanceof List; // children, ancestors
  }

  /** The patterns a document is laid out in (several when it fits them equally), or none. */
  static Set<TreePattern> of(Document d, FieldNames names) {
    Set<TreePattern> best = EnumSet.noneOf(TreePattern.class);
    double bestShare = -1;
    int bestPresent = -1;
    for (TreePattern p : TreePattern.values()) {
      int present = fit(p, d, names);
      if (present < 0) {
        continue;
      }
      double share = (double) present / fields(p, names).size();
      int order = share != bestShare ? Double.compare(share, bestShare)
          : Integer.compare(present, bestPresent);
      if (order > 0) {
        best.clear();
        bestShare = share;
        bestPresent = present;
      }
      if (order >= 0) {
        best.add(p);
      }
    }
    return best;
  }

  /**
   * The layout of a collection from some of its node documents: the patterns the most of them
   * are laid out in; none if none fits any pattern (or there are none).
   */
  public static Set<TreePattern> of(Iterable<Document> docs, FieldNames names) {
    Map<TreePattern, Integer> votes = new EnumMap<>(TreePattern.class);
    for (Document d : docs) {
      for (TreePattern p : of(d, names)) {
        votes.merge(p, 1, Integer::sum);
      }
    }
    int most = votes.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    Set<TreePattern> out = EnumSet.noneOf(TreePattern.class);
    votes.forEach((p, n) -> {
      if (n == most) {
        out.add(p);
      }
    });
    return out;
  }

  /** Up to {@value #SAMPLE} node documents of the collection, in natural order. */
  public static List<Document> sample(MongoCollection<Document> collection) {
    return sample(collection, null);
  }

  /**
   * Up to {@value #SAMPLE} node documents of one tree of the collection, in natural order: the
   * tree of {@code scope}, or the collection's one tree if it is null.
   */
  public static List<Document> sample(MongoCollection<Document> collection,
      @Nullable Scope scope) {
    NodeIds ids = NodeIds.of(collection);
    return collection.find(scope == null ? ids.filter(MongoTreeStore.NODES.toBsonDocument(
            BsonDocument.class, collection.getCodecRegistry()))
            : scope.filter(MongoTreeStore.NODES, collection.getCodecRegistry()))
                .collation(Reads.SIMPLE).limit(SAMPLE)
        .into(new ArrayList<>());
  }

  /**
   * A collection read as one pattern but laid out in another.
   *
   * @param seen the pattern it is laid out in
   * @param nodeId the first node laid out so
   * @param fields that node's fields of the pattern seen
   */
  record Mismatch(TreePattern seen, String nodeId, List<String> fields) {
    String describe(TreePattern pattern, String collectionName, String node) {
      return "collection '" + collectionName + "' is laid out in the " + seen + " pattern, not "
          + pattern + " (" + node + " has " + String.join(", ", fields) + "): open it with"
          + " TreePattern." + seen + ", or convert it";
    }
  }

  /**
   * Whether {@code docs} read as {@code pattern} are laid out in another pattern: null if their
   * layout includes {@code pattern} or is unknown.
   */
  static Mismatch mismatch(TreePattern pattern, Iterable<Document> docs, FieldNames names) {
    Set<TreePattern> layout = of(docs, names);
    if (layout.isEmpty() || layout.contains(pattern)) {
      return null;
    }
    TreePattern seen = layout.iterator().next();
    for (Document d : docs) {
      if (of(d, names).contains(seen)) {
        List<String> present = new ArrayList<>();
        for (String f : fields(seen, names)) {
          if (d.containsKey(f)) {
            present.add(f);
          }
        }
        return new Mismatch(seen, String.valueOf(d.get(MongoTreeStore.ID)), present);
      }
    }
    throw new AssertionError(layout); // some document voted for it
  }

  /** The problem {@link dev.arbor.core.TreeStore#check()} reports for a mismatch, or null. */
  public static Problem problem(TreePattern pattern, Iterable<Document> docs, String collectionName,
      FieldNames names) {
    Mismatch m = mismatch(pattern, docs, names);
    if (m == null) {
      String unreadable = unreadable(pattern, docs, names, collectionName);
      return unreadable == null ? null
          : new Problem(String.valueOf(docs.iterator().next().get(MongoTreeStore.ID)),
              unreadable);
    }
    return new Problem(m.nodeId(), m.describe(pattern, collectionName, "this node"));
  }

  /**
   * Why {@code docs} cannot be read as {@code pattern} when none of them fits any pattern under
   * the store's field names (typically a collection whose fields have other names than the
   * store was told), or null if some fit or there are none.
   */
  static String unreadable(TreePattern pattern, Iterable<Document> docs, FieldNames names,
      String collectionName) {
    if (!docs.iterator().hasNext() || !of(docs, names).isEmpty()) {
      return null;
    }
    Document first = docs.iterator().next();
    List<String> has = new ArrayList<>(first.keySet());
    has.remove(MongoTreeStore.ID);
    return "collection '" + collectionName + "' holds nodes laid out in no pattern under the"
        + " field names this store reads (" + pattern + " needs " + String.join(", ",
            fields(pattern, names).subList(0, needed(pattern))) + "; node '"
        + first.get(MongoTreeStore.ID) + "' has " + (has.isEmpty() ? "no other field"
            : String.join(", ", has)) + "): open it with the names its fields have"
        + " (TreeOptions.withFieldName)";
  }

  /**
   * As {@link #require}, without looking for a tree of another id type when the sample is empty
   * (a read of such a store answers an empty tree, and its {@code check()} names the option).
   *
   * @return the sample read
   * @throws TreeException naming the pattern the collection is laid out in and a node, or the
   *     fields a store of {@code pattern} does not find under the names it was given
   */
  public static List<Document> requireLaidOut(TreePattern pattern,
      MongoCollection<Document> collection, @Nullable Scope scope, FieldNames names) {
    List<Document> docs = sample(collection, scope);
    Mismatch m = mismatch(pattern, docs, names);
    String name = collection.getNamespace().getCollectionName();
    if (m != null) {
      String message = m.describe(pattern, name, "node '" + m.nodeId() + "'");
      throw new TreeException("C" + message.substring(1));
    }
    String unreadable = unreadable(pattern, docs, names, name);
    if (unreadable != null) {
      throw new TreeException("C" + unreadable.substring(1));
    }
    return docs;
  }

  /**
   * Throws unless a sample of the collection's nodes is laid out in {@code pattern} (or the
   * collection holds none).
   *
   * @return the sample read: empty if the collection holds no node (it may still be filled by
   *     others)
   * @throws TreeException naming the pattern the collection is laid out in and a node
   */
  public static List<Document> require(TreePattern pattern, MongoCollection<Document> collection,
      @Nullable Scope scope, FieldNames names) {
    List<Document> docs = requireLaidOut(pattern, collection, scope, names);
    String name = collection.getNamespace().getCollectionName();
    if (docs.isEmpty() && scope == null) {
      String other = otherIdType(collection, name, names.of(pattern));
      if (other != null) {
        throw new TreeException(other);
      }
    }
    return docs;
  }

  /**
   * Why a store that sees no node (none has an {@code _id} of its id type) must not write into
   * {@code collection}: it holds nodes (documents with a field of the pattern's {@code
   * structural} fields) whose {@code _id} is of another type, a tree stored with
   * another id type ({@code TreeOptions.withIdType}), which this store would neither read nor
   * keep apart from its own; or null if it holds none. (Arbor's own documents have a document
   * as {@code _id}.)
   */
  private static @Nullable String otherIdType(MongoCollection<Document> collection,
      String name, java.util.Collection<String> structural) {
    NodeIds ids = NodeIds.of(collection);
    List<Document> laidOut = new ArrayList<>();
    for (String field : structural) {
      laidOut.add(new Document(field, new Document("$exists", true)));
    }
    BsonDocument d = collection.withDocumentClass(BsonDocument.class)
        .find(new Document("$and", List.of(new Document(MongoTreeStore.ID,
            new Document("$not", new Document("$type", "object"))),
            new Document("$or", laidOut))))
        .projection(new Document(MongoTreeStore.ID, 1)).limit(1).first();
    if (d == null) {
      return null;
    }
    dev.arbor.mongo.NodeIdType type = NodeIds.typeOf(d.get(MongoTreeStore.ID));
    if (type == ids.type()) {
      return null; // a node this store reads, though not a canonical one: not another tree
    }
    return "Collection '" + name + "' holds nodes whose _id is a " + d.get(MongoTreeStore.ID)
        .getBsonType().name().toLowerCase(java.util.Locale.ROOT) + " (" + d.toJson() + "), and"
        + " none whose _id is of this store's id type, " + ids.type() + ": "
        + (type == null ? "it is not a tree of ids Arbor stores"
        : "open it with " + NodeIds.option(type))
        + "; nothing was written";
  }

  /** The layout of this pattern: its fields, its documents, its plans and its queries. */
  public static Layout layout(TreePattern pattern, LayoutContext context) {
    return switch (pattern) {
      case PARENT_REFERENCES -> new ParentReferenceLayout(context);
      case CHILD_REFERENCES -> new ChildReferenceLayout(context);
      case ARRAY_OF_ANCESTORS -> new ArrayOfAncestorsLayout(context);
      case MATERIALIZED_PATHS -> new MaterializedPathLayout(context);
      case NESTED_SETS -> new NestedSetLayout(context);
    };
  }
}
