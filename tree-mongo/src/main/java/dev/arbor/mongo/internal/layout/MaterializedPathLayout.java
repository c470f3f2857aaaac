package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Filters.regex;
import static dev.arbor.mongo.internal.bson.Queries.checkMaxDepth;
import static dev.arbor.mongo.internal.bson.Queries.deleteAll;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.group;
import static dev.arbor.mongo.internal.bson.Queries.ids;
import static dev.arbor.mongo.internal.bson.Queries.isNull;
import static dev.arbor.mongo.internal.bson.Queries.isNullOrString;
import static dev.arbor.mongo.internal.bson.Queries.lifted;
import static java.nio.charset.StandardCharsets.UTF_8;

import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.read.Forest;
import dev.arbor.mongo.internal.read.KeyedPreorder;
import dev.arbor.mongo.internal.read.Row;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The <i>materialized paths</i> pattern (manual §4.2.4): each node stores the ids of its ancestors
 * as one string, comma-delimited, starting and ending with a comma; a root's path is null.
 *
 * <pre>{@code
 * { _id: "MongoDB", path: ",Books,Programming,Databases,", arborRank: 0 }
 * { _id: "Books",   path: null,                            arborRank: 0 }
 * }</pre>
 *
 * <p><b>Escaping.</b> An id is written into a path with {@code \} doubled and {@code ,} preceded
 * by {@code \}: the node {@code a,b} under {@code x} has the path {@code ,x,} and its children the
 * path {@code ,x,a\,b,}. Ids without commas and backslashes appear verbatim, as in the manual.
 *
 * <p><b>Subtree queries are index ranges</b>, never unanchored regexes: the descendants of a node
 * whose children have the path {@code P} (ending with a comma) are exactly the paths in {@code [P,
 * P')}, where {@code P'} is {@code P} with its last comma replaced by {@code -}, the next
 * character. A depth limit adds an anchored regular expression on the same field that counts the
 * remaining delimiters; the server applies it to the index keys of that range.
 *
 * <p>Beyond the manual: {@code arborRank}, the sibling order (see {@link Ranks}). Authoritative
 * fields: {@code path} and {@code arborRank}.
 *
 * <p>Index: {@code {path: 1, arborRank: 1}} (children by path equality in rank order, roots,
 * descendants by range, neighbour ranks).
 *
 * <h2>Cost per operation</h2>
 *
 * <p>Round trips (rt) count the pattern's own queries and writes. The protocol adds: nothing to
 * a change whose writes are all updates or inserts (the claim or fence, the steps and the release
 * go in one command on MongoDB), two to a change that deletes (a delete command cannot carry the
 * fence), and at most one to an isolated read; docs/guarantees.md has the measured
 * totals.
 *
 * <table>
 * <caption>round trips (rt) and documents read / written; n = subtree size</caption>
 * <tr><th>operation<th>rt<th>read<th>written
 * <tr><td>find, ancestors, depth, isDescendant<td>1<td>1–2<td>0
 * <tr><td>roots<td>1<td>roots<td>0
 * <tr><td>children<td>2<td>children + 1<td>0
 * <tr><td>descendants<td>2<td>n + 1<td>0
 * <tr><td>update<td>2<td>1<td>1 (no journal)
 * <tr><td>insert<td>3<td>2<td>1
 * <tr><td>move<td>3 (4 without pipeline updates: the subtree's paths are read, then each
 *     distinct path rewritten by one updateMany, all in one command)<td>2 (n + 2)<td>n
 * <tr><td>delete<td>2<td>1<td>n
 * <tr><td>subtree, descendantNodes<td>2<td>n+1<td>0
 * <tr><td>descendantNodes with a filter<td>3<td>n structures + matches<td>0
 * <tr><td>childNodes (a page)<td>2<td>page + 1<td>0
 * <tr><td>ancestorNodes<td>2<td>d+1<td>0
 * <tr><td>childCount, descendantCount, isLeaf<td>2<td>1 (then a count)<td>0
 * <tr><td>siblings, previous/next<td>3<td>siblings + 2<td>0
 * <tr><td>subtreeFilter<td>1<td>1<td>0
 * <tr><td>delete lifting children<td>5<td>n + siblings<td>n (paths) + siblings, 1 deleted
 * </table>
 *
 * <p>Choose it for fast subtree and ancestor reads and sorted whole-tree scans; the manual finds
 * it slightly faster than the array of ancestors.
 */
public final class MaterializedPathLayout implements Layout {
  private final LayoutContext context;
  private final String pathField;
  private final String rankField;
  private final Ranks ranks;

  public MaterializedPathLayout(LayoutContext context) {
    this.context = context;
    this.pathField = context.names().path;
    this.rankField = context.names().rank;
    this.ranks = context.ranks();
  }

  @Override
  public LayoutContext context() {
    return context;
  }

  @Override
  public TreePattern pattern() {
    return TreePattern.MATERIALIZED_PATHS;
  }

  /**
   * The ids on the path of node document {@code d}, from its root.
   *
   * @throws dev.arbor.core.TreeException naming the node if its path is not one ({@link
   *     Layout#stringField}, {@link #parse}), which {@code check()} lists
   */
  private List<String> pathOf(Document d) {
    String path = pathIn(d);
    try {
      return parse(path);
    } catch (IllegalArgumentException e) {
      throw new dev.arbor.core.TreeException("node '" + d.get(ID) + "': " + e.getMessage()
          + ": check() lists the problems, repair() cannot guess a path", e);
    }
  }

  @Override
  public @Nullable String layoutProblem(Document d) {
    if (!isNullOrString(d.get(pathField))) {
      return pathField + " is not a string: " + d.get(pathField);
    }
    try {
      parse(d.getString(pathField));
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    return d.get(rankField) instanceof Number ? null 
        : "no numeric " + rankField + " (sibling order)";
  }

  @Override
  public List<IndexModel> indexes() {
    return List.of(new IndexModel(Indexes.ascending(pathField, rankField)));
  }

  // ------------------------------------------------------------------ path strings

  /** An id as written in a path: {@code \} → {@code \\}, {@code ,} → {@code \,}. */
  public static String escape(String id) {
    if (id.indexOf(',') < 0 && id.indexOf('\\') < 0) {
      return id;
    }
    return id.replace("\\", "\\\\").replace(",", "\\,");
  }

  /** The path of the children of a node with path {@code path} and id {@code id}. */
  static String childPath(@Nullable String path, String id) {
    return (path == null ? "," : path) + escape(id) + ",";
  }

  /** The first id of {@code parts} not canonical for the tree's id type, or null. */
  private @Nullable String otherForm(List<String> parts) {
    if (context.ids().isString()) {
      return null;
    }
    for (String part : parts) {
      if (dev.arbor.mongo.internal.bson.NodeIds.refusal(context.ids().type(), part) != null) {
        return part;
      }
    }
    return null;
  }

  /**
   * The ids in a path, root first.
   *
   * @throws IllegalArgumentException if the path is malformed
   */
  static List<String> parse(String path) {
    List<String> ids = new ArrayList<>();
    if (path == null) {
      return ids;
    }
    if (path.length() < 3 || path.charAt(0) != ',' || path.charAt(path.length() - 1) != ',') {
      throw new IllegalArgumentException("malformed path " + path);
    }
    StringBuilder id = new StringBuilder();
    for (int i = 1; i < path.length(); i++) {
      char c = path.charAt(i);
      if (c == '\\') {
        if (++i == path.length()) {
          throw new IllegalArgumentException("dangling escape in path " + path);
        }
        id.append(path.charAt(i));
      } else if (c == ',') {
        if (id.length() == 0) {
          throw new IllegalArgumentException("empty id in path " + path);
        }
        ids.add(id.toString());
        id.setLength(0);
      } else {
        id.append(c);
      }
    }
    if (id.length() > 0) {
      throw new IllegalArgumentException("path does not end with a delimiter: " + path);
    }
    return ids;
  }

  /** The deepest depth limit that descendants send to the server as a regex. */
  public static final int MAX_REGEX_DEPTH = 100;
  /** The longest depth regex sent to the server, in UTF-16 units (PCRE2's limit is 64 K). */
  public static final int MAX_REGEX_LENGTH = 8_192;

  /** The paths starting with {@code prefix} (which ends with a comma): an index range. */
  Bson startsWith(String prefix) {
    String upper = prefix.substring(0, prefix.length() - 1) + (char) (',' + 1);
    return and(gte(pathField, prefix), lt(pathField, upper));
  }

  /**
   * An anchored regular expression for the paths below {@code prefix} with at most {@code extra}
   * further ids. Every character of the prefix but ASCII letters and digits is written as a
   * {@code \x{...}} escape, which PCRE (MongoDB) and java.util.regex read alike.
   */
  /**
   * The paths below {@code prefix} down to {@code maxDepth} levels, as far as the server can be
   * asked: the index range, narrowed by a depth regex when it is small enough. Deeper limits, or
   * longer prefixes, read the whole range and are cut by the caller: MongoDB's PCRE2 refuses
   * compiled patterns past about 64 K units, and a bounded repeat of a group is compiled once per
   * repetition (a bound of 705 already fails).
   */
  Bson below(String prefix, int maxDepth) {
    Bson filter = startsWith(prefix);
    if (maxDepth - 1 <= MAX_REGEX_DEPTH) {
      String depth = depthRegex(prefix, maxDepth - 1);
      if (depth.length() <= MAX_REGEX_LENGTH) {
        filter = and(filter, regex(pathField, depth));
      }
    }
    return filter;
  }

  static String depthRegex(String prefix, int extra) {
    StringBuilder sb = new StringBuilder("^");
    prefix.codePoints().forEach(cp -> {
      if (cp < 128 && Character.isLetterOrDigit(cp)) {
        sb.appendCodePoint(cp);
      } else {
        sb.append("\\x{").append(Integer.toHexString(cp)).append('}');
      }
    });
    // Possessive: an id is runs of plain characters and escapes, never ambiguous, so nothing is
    // given back; and a regex engine that recurses per repetition (Java's, in the embedded
    // server) recurses per run, not per character.
    return sb.append("(?:(?:[^,\\\\]++|\\\\[,\\\\])*+,){0,").append(extra).append("}$")
        .toString();
  }

  // ------------------------------------------------------------------ operations

  @Override
  public void planInsert(Change c, String id, Position position, Map<String, Object> attributes) {
    Map<String, Document> docs = subjectAndAnchor(c, id, true, position,
        fields(pathField, rankField));
    String path = targetPath(position, docs);
    long rank = ranks.rankFor(c, group(pathField, path), position, anchorRank(position, docs),
        null);
    c.insert(context.newDocument(id, new Document(pathField, path).append(rankField, rank),
        attributes));
  }

  @Override
  public void planMove(Change c, String id, Position position) {
    Map<String, Document> docs = subjectAndAnchor(c, id, false, position,
        fields(pathField, rankField));
    if (position instanceof Position.Sibling s && s.siblingId().equals(id)) {
      return;
    }
    String path = targetPath(position, docs);
    String oldPrefix = childPath(pathIn(docs.get(id)), id);
    if (path != null && path.startsWith(oldPrefix)) {
      throw new InvalidMoveException(id, position);
    }
    long rank = ranks.rankFor(c, group(pathField, path), position, anchorRank(position, docs), id);
    String newPrefix = childPath(path, id);
    if (!newPrefix.equals(oldPrefix)) {
      int cut = oldPrefix.getBytes(UTF_8).length;
      if (context.capabilities().pipelineUpdates()) {
        // path = newPrefix + path[cut bytes:]
        Document rest = new Document("$substrBytes", List.of("$" + pathField, cut,
            new Document("$subtract",
                List.of(new Document("$strLenBytes", "$" + pathField), cut))));
        Document rewritten = new Document("$concat",
            List.of(new Document("$literal", newPrefix), rest));
        c.updateMany(startsWith(oldPrefix),
            List.of(new Document("$set", new Document(pathField, rewritten))));
      } else {
        // Without pipeline updates: the subtree's paths are read, and each distinct path (the
        // children of one node) is rewritten with one updateMany, in one round trip.
        java.util.Set<String> oldPaths = new java.util.TreeSet<>();
        for (Document d : c.find(startsWith(oldPrefix)).projection(fields(pathField))) {
          oldPaths.add(pathIn(d));
        }
        for (String old : oldPaths) {
          c.updateMany(eq(pathField, old), Updates.set(pathField,
              newPrefix + old.substring(oldPrefix.length())));
        }
      }
    }
    c.set(id, Updates.combine(Updates.set(pathField, path), Updates.set(rankField, rank)));
  }

  @Override
  public long planDelete(Change c, String id) {
    Document d = c.require(id, fields(pathField));
    Bson subtree = or(eq(ID, id), startsWith(childPath(pathIn(d), id)));
    long n = c.count(subtree);
    if (n == 1) {
      c.deleteOne(subtree); // a leaf: one document
    } else {
      c.deleteMany(subtree);
    }
    return n;
  }

  /**
   * The subtree's paths are read, and each distinct path rewritten without the node's id (one
   * {@code updateMany} each, the children's becoming the node's own path); every sibling of the
   * new group gets a fresh rank (one single-document set each); then the node is deleted.
   */
  @Override
  public void planLift(Change c, String id) {
    String path = pathIn(c.require(id, fields(pathField, rankField)));
    String oldPrefix = childPath(path, id);
    List<String> children = ids(c.find(eq(pathField, oldPrefix)).projection(fields(ID))
        .sort(Sorts.ascending(rankField)));
    if (!children.isEmpty()) {
      java.util.Set<String> oldPaths = new java.util.TreeSet<>();
      for (Document d : c.find(startsWith(oldPrefix)).projection(fields(pathField))) {
        oldPaths.add(pathIn(d));
      }
      for (String old : oldPaths) {
        c.updateMany(eq(pathField, old), Updates.set(pathField, old.equals(oldPrefix) ? path
            : (path == null ? "," : path) + old.substring(oldPrefix.length())));
      }
      List<String> siblings = ids(c.find(group(pathField, path)).projection(fields(ID))
          .sort(Sorts.ascending(rankField)));
      RankPlans.planRegroup(c, rankField, lifted(siblings, id, children), Set.of(), pathField,
          null);
    }
    deleteAll(c, List.of(id));
  }

  /** The node's document, then its descendants by one range of the path index. */
  @Override
  public Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
    Bson projection = withAttributes ? null : fields(pathField, rankField);
    Document x = r.require(id, projection);
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(id, null, 0, withAttributes ? context.attributesOf(x) : Map.of()));
    if (maxDepth > 0) {
      Bson filter = below(childPath(pathIn(x), id), maxDepth);
      for (Document d : r.find(filter).projection(projection)) {
        Row row = row(d);
        rows.add(withAttributes
            ? new Row(row.id(), row.parent(), row.order(), context.attributesOf(d))
            : row);
      }
    }
    return new Rows(pathOf(x).size(), rows);
  }

  @Override
  public ChildGroup childGroup() {
    return new ChildGroup(fields(pathField, rankField),
        d -> eq(pathField, childPath(pathIn(d), idOf(d))), rankField,
        d -> row(d).parent(), d -> pathOf(d).size());
  }

  @Override
  public @Nullable String parentOf(Reads r, String id) {
    return row(r.require(id, fields(pathField))).parent();
  }

  @Override
  public long childCountOf(Reads r, String id) {
    return r.count(eq(pathField, childPath(pathIn(r.require(id, fields(pathField))), id)));
  }

  @Override
  public long descendantCountOf(Reads r, String id) {
    return r.count(startsWith(childPath(pathIn(r.require(id, fields(pathField))), id)));
  }

  /**
   * {@code {$or: [{_id: id}, {path: [P, P')}]}}, {@code P} the path of the node's children: an
   * index range, right until the node or one of its ancestors moves.
   */
  @Override
  public Bson subtreeFilter(Reads r, String id) {
    return or(eq(ID, id),
        startsWith(childPath(pathIn(r.require(id, fields(pathField))), id)));
  }

  @Override
  public Optional<Node> findNode(Reads r, String id) {
    Document d = r.document(id, null);
    if (d == null) {
      return Optional.empty();
    }
    List<String> ancestors = pathOf(d);
    return Optional.of(new Node(id,
        ancestors.isEmpty() ? null : ancestors.get(ancestors.size() - 1),
        ancestors.size(), context.attributesOf(d)));
  }

  @Override
  public List<String> rootIds(Reads r) {
    return ids(r.find(isNull(pathField)).projection(fields(ID))
        .sort(Sorts.ascending(rankField)));
  }

  /** Children by path, the paths of many parents a query (see {@link KeyedPreorder}). */
  @Override
  public KeyedPreorder.Keys preorderKeys() {
    return new KeyedPreorder.Keys() {
      @Override
      public Bson roots() {
        return isNull(pathField);
      }

      @Override
      public Bson order() {
        return Sorts.ascending(rankField);
      }

      @Override
      public String field() {
        return pathField;
      }

      @Override
      public String childKey(Document parent) {
        return childPath(pathIn(parent), idOf(parent));
      }
    };
  }

  @Override
  public List<String> childIds(Reads r, String id) {
    Document d = r.require(id, fields(pathField));
    return ids(r.find(eq(pathField, childPath(pathIn(d), id))).projection(fields(ID))
        .sort(Sorts.ascending(rankField)));
  }

  @Override
  public List<String> ancestorIds(Reads r, String id) {
    return pathOf(r.require(id, fields(pathField)));
  }

  @Override
  public List<String> descendantIds(Reads r, String id, int maxDepth) {
    Document d = r.require(id, fields(pathField));
    checkMaxDepth(maxDepth);
    if (maxDepth == 0) {
      return List.of();
    }
    Bson filter = below(childPath(pathIn(d), id), maxDepth);
    List<Row> rows = new ArrayList<>();
    for (Document c : r.find(filter).projection(fields(pathField, rankField))) {
      rows.add(row(c));
    }
    return new Forest(rows).preorderBelow(id, maxDepth);
  }

  @Override
  public boolean descends(Reads r, String id, String ancestorId) {
    return pathOf(r.requireBoth(id, ancestorId, fields(pathField))[0])
        .contains(ancestorId);
  }

  @Override
  public Iterable<Document> documentsFor(Tree tree) {
    // Built one at a time in preorder: {@code prefix} is the path of the children of the node on
    // top of the stack, and the stack keeps each level's id and the prefix's length below it, so
    // memory grows with the depth and the length of one path, not with the tree.
    return () -> new java.util.Iterator<>() {
      private final java.util.Iterator<Node> entries = tree.entries().iterator();
      private final List<String> ids = new ArrayList<>();
      private final List<Integer> lengths = new ArrayList<>();
      private final StringBuilder prefix = new StringBuilder();
      private final Map<String, Long> nextRank = new HashMap<>();

      @Override
      public boolean hasNext() {
        return entries.hasNext();
      }

      @Override
      public Document next() {
        Node e = entries.next();
        String parent = e.parentId();
        while (!ids.isEmpty() && !ids.get(ids.size() - 1).equals(parent)) {
          ids.remove(ids.size() - 1);
          prefix.setLength(lengths.remove(lengths.size() - 1));
        }
        String path = parent == null ? null : prefix.toString();
        ids.add(e.id());
        lengths.add(prefix.length());
        prefix.append(prefix.length() == 0 ? "," : "").append(escape(e.id())).append(',');
        long rank = nextRank.merge(parent, Ranks.GAP, Long::sum) - Ranks.GAP;
        return context.newDocument(e.id(), new Document(pathField, path).append(rankField, rank),
            e.attributes());
      }
    };
  }

  @Override
  public Forest forest(Reads r, boolean withAttributes) {
    List<Row> rows = new ArrayList<>();
    for (Document d : r.find(NODES)
        .projection(withAttributes ? null : fields(pathField, rankField))) {
      Row row = row(d);
      rows.add(withAttributes
          ? new Row(row.id(), row.parent(), row.order(), context.attributesOf(d))
          : row);
    }
    return new Forest(rows);
  }

  /** Paths are authoritative: repair fills in missing or repeated ranks among siblings. */
  @Override
  public void planRepair(Change c, List<Document> docs) {
    RankPlans.planRankRepair(c, rankField, docs, d -> d.get(pathField));
  }

  @Override
  public void checkDocuments(Map<String, Document> byId, List<Problem> problems) {
    List<Row> rows = new ArrayList<>();
    for (Document d : byId.values()) {
      String id = idOf(d);
      Object path = d.get(pathField);
      if (path != null && !(path instanceof String)) {
        problems.add(new Problem(id, "path is not a string: " + path));
        continue;
      }
      List<String> parts;
      try {
        parts = parse((String) path);
      } catch (IllegalArgumentException e) {
        problems.add(new Problem(id, e.getMessage()));
        continue;
      }
      String odd = otherForm(parts);
      if (odd != null) {
        // the path string of a typed tree holds canonical ids: "01" or upper-case hexadecimal
        // digits name no node, and no query by prefix finds the node under the one meant
        problems.add(new Problem(id, pathField + " " + path + " holds '" + odd + "', which is "
            + dev.arbor.mongo.internal.bson.NodeIds.refusal(context.ids().type(), odd)
            + "; repair() cannot guess a path"));
        continue;
      }
      if (!(d.get(rankField) instanceof Number)) {
        problems.add(new Problem(id, rankField + " is missing or not a number: "
            + d.get(rankField)));
      }
      rows.add(row(d));
    }
    Forest forest = new Forest(rows);
    forest.checkStructure(problems);
    for (Row r : rows) {
      List<String> chain = forest.ancestorsOf(r.id());
      String expected = null;
      for (String a : chain) {
        expected = childPath(expected, a);
      }
      Object stored = byId.get(r.id()).get(pathField);
      if (forest.row(r.parent() == null ? r.id() : r.parent()) != null
          && !java.util.Objects.equals(expected, stored)) {
        problems.add(new Problem(r.id(), "path " + stored
            + " disagrees with the paths of its ancestors (expected " + expected + ")"));
      }
    }
  }

  private @Nullable String targetPath(Position position, Map<String, Document> docs) {
    if (position instanceof Position.Root) {
      return null;
    }
    Document anchor = docs.get(position.anchor());
    if (position instanceof Position.Child) {
      return childPath(pathIn(anchor), position.anchor());
    }
    return pathIn(anchor);
  }

  private long anchorRank(Position position, Map<String, Document> docs) {
    return position instanceof Position.Sibling ? ranks.of(docs.get(position.anchor())) : 0;
  }

  private Row row(Document d) {
    List<String> ancestors = pathOf(d);
    return new Row(idOf(d),
        ancestors.isEmpty() ? null : ancestors.get(ancestors.size() - 1),
        ranks.of(d), Map.of());
  }

  /** The path of node document {@code d} ({@link Layout#stringField}), null for a root. */
  private @Nullable String pathIn(Document d) {
    return Layout.stringField(d, pathField);
  }
}
