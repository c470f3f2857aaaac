package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.or;
import static dev.arbor.mongo.internal.bson.Queries.checkMaxDepth;
import static dev.arbor.mongo.internal.bson.Queries.countOrRequire;
import static dev.arbor.mongo.internal.bson.Queries.deleteAll;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.group;
import static dev.arbor.mongo.internal.bson.Queries.ids;
import static dev.arbor.mongo.internal.bson.Queries.isNull;
import static dev.arbor.mongo.internal.bson.Queries.isReference;
import static dev.arbor.mongo.internal.bson.Queries.lifted;

import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.PushOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.Node;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.bson.MistypedId;
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
 * The <i>array of ancestors</i> pattern (manual §4.2.3): each node stores the ids of all its
 * ancestors, root first, and its parent.
 *
 * <pre>{@code
 * { _id: "MongoDB", ancestors: ["Books", "Programming", "Databases"], parent: "Databases", arborRank: 0 }
 * { _id: "Books",   ancestors: [],                                    parent: null,        arborRank: 0 }
 * }</pre>
 *
 * <p>Beyond the manual: {@code arborRank}, the sibling order (see {@link Ranks}). Authoritative
 * fields: {@code parent} and {@code arborRank}; {@code ancestors} is derived from the parent chain.
 *
 * <p>Indexes: {@code {ancestors: 1}} (multikey: descendants, subtree moves and deletes), {@code
 * {parent: 1, arborRank: 1}} (children in order, roots, neighbour ranks).
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
 * <caption>round trips (rt) and documents read / written; n = subtree size, d = depth</caption>
 * <tr><th>operation<th>rt<th>read<th>written
 * <tr><td>find, ancestors, depth<td>1<td>1<td>0
 * <tr><td>children, roots<td>1 (2 for a leaf)<td>children<td>0
 * <tr><td>descendants<td>1 (2 for a leaf, or with a depth limit)<td>n<td>0
 * <tr><td>isDescendant<td>1<td>2<td>0
 * <tr><td>update<td>2<td>1<td>1 (no journal)
 * <tr><td>insert<td>3<td>2<td>1
 * <tr><td>move<td>3<td>2<td>n (pipeline update) or 2n (servers without pipeline updates)
 * <tr><td>delete<td>1<td>n (parents and ancestors, in the query that counts them)<td>n
 * <tr><td>subtree, descendantNodes<td>1 (2 with a depth limit)<td>n+1<td>0
 * <tr><td>descendantNodes with a filter<td>2 (3 with a depth limit)<td>n structures + matches<td>0
 * <tr><td>childNodes (a page)<td>2<td>page + 1<td>0
 * <tr><td>ancestorNodes<td>2<td>d+1<td>0
 * <tr><td>childCount, descendantCount, isLeaf<td>1 (2 when 0)<td>0 (a count)<td>0
 * <tr><td>siblings, previous/next<td>2<td>siblings + 1<td>0
 * <tr><td>subtreeFilter<td>1<td>1<td>0
 * <tr><td>delete lifting children<td>4<td>siblings + children<td>n (ancestors) + siblings, 1
 *     deleted
 * </table>
 *
 * <p>Choose it for subtree reads and ancestor reads at one query each, with moves that rewrite only
 * the moved subtree. The manual calls it "slightly slower than materialized paths but more
 * straightforward to use".
 */
final class ArrayOfAncestorsLayout implements Layout {
  private final LayoutContext context;
  private final String parentField;
  private final String ancestorsField;
  private final String rankField;
  private final Ranks ranks;

  ArrayOfAncestorsLayout(LayoutContext context) {
    this.context = context;
    this.parentField = context.names().parent;
    this.ancestorsField = context.names().ancestors;
    this.rankField = context.names().rank;
    this.ranks = context.ranks();
  }

  @Override
  public LayoutContext context() {
    return context;
  }

  @Override
  public TreePattern pattern() {
    return TreePattern.ARRAY_OF_ANCESTORS;
  }

  @Override
  public @Nullable String layoutProblem(Document d) {
    if (!isReference(d.get(parentField))) {
      return parentField + " is not an id: " + d.get(parentField);
    }
    if (!(d.get(ancestorsField) instanceof List)) {
      return ancestorsField + " is not an array: " + d.get(ancestorsField);
    }
    return d.get(rankField) instanceof Number ? null 
        : "no numeric " + rankField + " (sibling order)";
  }

  @Override
  public List<IndexModel> indexes() {
    return List.of(
        new IndexModel(Indexes.ascending(ancestorsField)),
        new IndexModel(Indexes.ascending(parentField, rankField)));
  }

  @Override
  public void planInsert(Change c, String id, Position position, Map<String, Object> attributes) {
    Map<String, Document> docs = subjectAndAnchor(c, id, true, position, null);
    Target t = target(position, docs);
    long rank = ranks.rankFor(c, group(parentField, t.parent), position, t.anchorRank, null);
    Document structure = new Document(parentField, t.parent).append(ancestorsField, t.ancestors)
        .append(rankField, rank);
    c.insert(context.newDocument(id, structure, attributes));
  }

  @Override
  public void planMove(Change c, String id, Position position) {
    Map<String, Document> docs = subjectAndAnchor(c, id, false, position, fields(parentField,
        ancestorsField, rankField));
    if (position instanceof Position.Sibling s && s.siblingId().equals(id)) {
      return;
    }
    Target t = target(position, docs);
    if (position.anchor() != null) {
      // The new chain is the anchor's array, which is derived: its cycle check and the arrays
      // written for the subtree trust it, so one that visibly disagrees with the anchor's parent
      // (a parent changed alone) is refused rather than believed.
      refuseStaleEnd(docs.get(position.anchor()), id, position);
    }
    if (t.parent != null && (t.parent.equals(id) || t.ancestors.contains(id))) {
      throw new InvalidMoveException(id, position);
    }
    long rank = ranks.rankFor(c, group(parentField, t.parent), position, t.anchorRank, id);
    List<String> oldAncestors = ancestorsOf(docs.get(id));
    c.set(id, Updates.combine(Updates.set(parentField, t.parent),
        Updates.set(ancestorsField, t.ancestors),
        Updates.set(rankField, rank)));
    if (!oldAncestors.equals(t.ancestors)) {
      if (context.capabilities().pipelineUpdates()) {
        // ancestors = newPrefix ++ ancestors[oldPrefix.length:]; the prefix is a literal, never
        // read as an expression (an id may start with '$').
        c.updateMany(eq(ancestorsField, id), List.of(new Document("$set",
            new Document(ancestorsField, new Document("$concatArrays", List.of(
                new Document("$literal", t.ancestors),
                new Document("$slice", List.of("$" + ancestorsField, oldAncestors.size(),
                    Integer.MAX_VALUE))))))));
      } else {
        // Without pipeline updates: the old prefix is pulled, then the new one pushed in front
        // (two guarded updateMany, whatever the size of the subtree).
        if (!oldAncestors.isEmpty()) {
          c.updateMany(eq(ancestorsField, id), Updates.pullAll(ancestorsField, oldAncestors));
        }
        if (!t.ancestors.isEmpty()) {
          c.updateMany(eq(ancestorsField, id),
              Updates.pushEach(ancestorsField, t.ancestors, new PushOptions().position(0)));
        }
      }
    }
  }

  @Override
  public long planDelete(Change c, String id) {
    Bson subtree = or(eq(ID, id), eq(ancestorsField, id));
    // The subtree's parents, in the query that counts it (and tells whether the node exists):
    // the subtree is found by the derived ancestors, and a node a stale array lists under it
    // whose parent is elsewhere must not go with it. The same query finds the node's children
    // by parent (one more branch of the $or, on the parent index): a child whose stale array
    // leaves the node out would be left behind, an orphan.
    List<Document> found = c.find(or(eq(ID, id), eq(ancestorsField, id), eq(parentField, id)))
        .projection(fields(parentField, ancestorsField)).into(new ArrayList<>());
    long n = found.size();
    if (n == 0) {
      throw new NodeNotFoundException(id);
    }
    java.util.Set<Object> ids = new java.util.HashSet<>();
    for (Document d : found) {
      ids.add(d.get(ID));
    }
    for (Document d : found) {
      Object parent = d.get(parentField);
      if (!id.equals(d.get(ID)) && !(d.get(ancestorsField) instanceof List<?> listed
          && listed.stream().anyMatch(a -> Layout.names(a, id)))) {
        throw new dev.arbor.core.TreeException("Cannot delete '" + id + "': node '" + idOf(d)
            + "' is its child (its " + parentField + ") but its " + ancestorsField + " "
            + dev.arbor.mongo.internal.bson.NodeIds.shown(d.get(ancestorsField))
            + " leave it out, so the delete, which finds the subtree by the " + ancestorsField
            + ", would leave that node and its descendants behind as orphans: the "
            + ancestorsField + " disagree with the parents, which are authoritative; check()"
            + " lists the problems, repair() rebuilds the " + ancestorsField + " from the"
            + " parents. Nothing was written.");
      }
      if (!id.equals(d.get(ID)) && !ids.contains(parent)) {
        throw new dev.arbor.core.TreeException("Cannot delete '" + id + "': node '" + idOf(d)
            + "' lists it among its " + ancestorsField + " but its " + parentField + " '"
            + parent + "' is not in its subtree: the " + ancestorsField + " disagree with the"
            + " parents, which are authoritative; check() lists the problems, repair() rebuilds"
            + " the " + ancestorsField + " from the parents. Nothing was written.");
      }
    }
    if (n == 1) {
      c.deleteOne(subtree); // a leaf: one document
    } else {
      c.deleteMany(subtree);
    }
    return n;
  }

  /**
   * The node's id is pulled from the {@code ancestors} of its descendants (one {@code
   * updateMany}), the children regrouped under its parent in its place (a fresh rank for every
   * sibling of the new group, one single-document set each); then the node is deleted.
   */
  @Override
  public void planLift(Change c, String id) {
    String parent = parentOf(c.require(id, fields(parentField, rankField)));
    List<String> children = childIds(c, id);
    if (!children.isEmpty()) {
      c.updateMany(eq(ancestorsField, id), Updates.pull(ancestorsField, id));
      List<String> siblings = parent == null ? rootIds(c) : childIds(c, parent);
      RankPlans.planRegroup(c, rankField, lifted(siblings, id, children),
          new java.util.HashSet<>(children), parentField,
          parent);
    }
    deleteAll(c, List.of(id));
  }

  /**
   * The whole subtree in one query ({@code {$or: [{_id: id}, {ancestors: id}]}}); with a depth
   * limit, the node's document first, then its descendants with the limit on the array's length.
   */
  @Override
  public Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
    Bson projection = withAttributes ? null : fields(parentField, rankField, ancestorsField);
    List<Row> rows = new ArrayList<>();
    Row top = null;
    int depth = -1;
    if (maxDepth == Integer.MAX_VALUE) {
      for (Document d : r.find(or(eq(ID, id), eq(ancestorsField, id))).projection(projection)) {
        Map<String, Object> attributes = withAttributes ? context.attributesOf(d) : Map.of();
        if (idOf(d).equals(id)) {
          top = new Row(id, null, 0, attributes);
          depth = ancestorsOf(d).size();
        } else {
          rows.add(new Row(idOf(d), parentOf(d), ranks.of(d), attributes));
        }
      }
      if (top == null) {
        throw new NodeNotFoundException(id);
      }
    } else {
      Document x = r.require(id, projection);
      top = new Row(id, null, 0, withAttributes ? context.attributesOf(x) : Map.of());
      depth = ancestorsOf(x).size();
      if (maxDepth > 0) {
        Bson filter = eq(ancestorsField, id);
        if ((long) depth + maxDepth < Integer.MAX_VALUE) {
          filter = and(filter, exists(ancestorsField + "." + (depth + maxDepth), false));
        }
        for (Document d : r.find(filter).projection(projection)) {
          rows.add(new Row(idOf(d), parentOf(d), ranks.of(d),
              withAttributes ? context.attributesOf(d) : Map.of()));
        }
      }
    }
    rows.add(0, top);
    return new Rows(depth, rows);
  }

  @Override
  public ChildGroup childGroup() {
    return new ChildGroup(fields(parentField, rankField, ancestorsField),
        d -> eq(parentField, idOf(d)),
        rankField, d -> parentOf(d), d -> ancestorsOf(d).size());
  }

  @Override
  public long childCountOf(Reads r, String id) {
    return countOrRequire(r, eq(parentField, id), id);
  }

  @Override
  public long descendantCountOf(Reads r, String id) {
    return countOrRequire(r, eq(ancestorsField, id), id);
  }

  /** {@code {$or: [{_id: id}, {ancestors: id}]}}: index-backed, and right whatever changes. */
  @Override
  public Bson subtreeFilter(Reads r, String id) {
    r.require(id, fields(ID));
    return or(eq(ID, id), eq(ancestorsField, id));
  }

  @Override
  public Optional<Node> findNode(Reads r, String id) {
    Document d = r.document(id, null);
    if (d == null) {
      return Optional.empty();
    }
    return Optional.of(new Node(id, parentOf(d), ancestorsOf(d).size(), context.attributesOf(d)));
  }

  @Override
  public List<String> rootIds(Reads r) {
    return ids(r.find(isNull(parentField)).projection(fields(ID))
        .sort(Sorts.ascending(rankField)));
  }

  /** Children by parent, many parents a query (see {@link KeyedPreorder}). */
  @Override
  public KeyedPreorder.Keys preorderKeys() {
    return KeyedPreorder.byParent(parentField, rankField);
  }

  @Override
  public List<String> childIds(Reads r, String id) {
    return r.childrenOrRequire(eq(parentField, id), Sorts.ascending(rankField), id);
  }

  @Override
  public List<String> ancestorIds(Reads r, String id) {
    return ancestorsOf(r.require(id, fields(ancestorsField)));
  }

  /** The node and its descendants in one query (the ancestors' multikey index and _id). */
  @Override
  public Family parentAndDescendants(Reads r, String id) {
    TreeStores.checkId(id);
    Document node = null;
    List<String> below = new ArrayList<>();
    for (Document d : r.find(or(eq(ID, id), eq(ancestorsField, id)))
        .projection(fields(parentField))) {
      if (id.equals(d.get(ID))) {
        node = d;
      } else {
        below.add(idOf(d));
      }
    }
    if (node == null) {
      throw new NodeNotFoundException(id);
    }
    return new Family(parentOf(node), below);
  }

  @Override
  public List<String> descendantIds(Reads r, String id, int maxDepth) {
    TreeStores.checkId(id);
    List<Row> rows = new ArrayList<>();
    boolean found = false;
    if (maxDepth == Integer.MAX_VALUE) {
      // The manual's query, on the multikey index alone (an $or with the node's own _id is
      // index-backed on MongoDB, but scans elsewhere): a node that has descendants exists, and
      // only a leaf (or a missing node) costs a second query, by _id.
      for (Document d : r.find(eq(ancestorsField, id)).projection(fields(parentField, rankField))) {
        found = true;
        rows.add(row(d));
      }
      if (!found) {
        r.require(id, fields(ID));
        return List.of();
      }
    } else {
      int depth = ancestorsOf(r.require(id, fields(ancestorsField))).size();
      checkMaxDepth(maxDepth);
      if (maxDepth == 0) {
        return List.of();
      }
      Bson filter = eq(ancestorsField, id);
      if ((long) depth + maxDepth < Integer.MAX_VALUE) {
        filter = and(filter, exists(ancestorsField + "." + (depth + maxDepth), false));
      }
      for (Document d : r.find(filter).projection(fields(parentField, rankField))) {
        rows.add(row(d));
      }
    }
    return new Forest(rows).preorderBelow(id, maxDepth);
  }

  @Override
  public boolean descends(Reads r, String id, String ancestorId) {
    return ancestorsOf(r.requireBoth(id, ancestorId, fields(ancestorsField))[0])
        .contains(ancestorId);
  }

  @Override
  public Iterable<Document> documentsFor(Tree tree) {
    // Built one at a time in preorder from a stack of the current node's ancestors: the
    // documents' total grows with depth squared, memory here only with depth.
    return () -> new java.util.Iterator<>() {
      private final java.util.Iterator<Node> entries = tree.entries().iterator();
      private final List<String> stack = new ArrayList<>();
      private final Map<String, Long> nextRank = new HashMap<>();

      @Override
      public boolean hasNext() {
        return entries.hasNext();
      }

      @Override
      public Document next() {
        Node e = entries.next();
        String parent = e.parentId();
        while (!stack.isEmpty() && !stack.get(stack.size() - 1).equals(parent)) {
          stack.remove(stack.size() - 1);
        }
        List<String> chain = new ArrayList<>(stack);
        stack.add(e.id());
        long rank = nextRank.merge(parent, Ranks.GAP, Long::sum) - Ranks.GAP;
        return context.newDocument(e.id(), new Document(parentField, parent)
            .append(ancestorsField, chain)
            .append(rankField, rank), e.attributes());
      }
    };
  }

  @Override
  public Forest forest(Reads r, boolean withAttributes) {
    List<Row> rows = new ArrayList<>();
    for (Document d : r.find(NODES)
        .projection(withAttributes ? null : fields(parentField, rankField))) {
      rows.add(new Row(idOf(d), parentOf(d), ranks.of(d),
          withAttributes ? context.attributesOf(d) : Map.of()));
    }
    return new Forest(rows);
  }

  /**
   * Repair fills in missing or repeated ranks and rewrites {@code ancestors} from the parent chain
   * of every node that a chain of existing parents links to a root.
   */
  @Override
  public void planRepair(Change c, List<Document> docs) {
    RankPlans.planRankRepair(c, rankField, docs, d -> d.get(parentField));
    Set<Object> ids = new java.util.HashSet<>();
    for (Document d : docs) {
      ids.add(d.get(ID));
    }
    List<Row> rows = new ArrayList<>();
    for (Document d : docs) {
      Object parent = d.get(parentField);
      if (parent == null || parent instanceof String) {
        rows.add(row(d));
      } else if (parent instanceof MistypedId m && Layout.repaired(m, ids::contains) != null) {
        // another form of an existing node's id: rewritten as the id
        String id = Layout.repaired(m, ids::contains);
        Layout.rewrite(c, d.get(ID), parentField, m, id);
        rows.add(new Row(idOf(d), id, ranks.of(d), Map.of()));
      }
    }
    Forest forest = new Forest(rows);
    Set<String> reachable = new java.util.HashSet<>(forest.preorderBelow(null, Integer.MAX_VALUE));
    for (Document d : docs) {
      String id = idOf(d);
      if (reachable.contains(id)) {
        List<String> expected = forest.ancestorsOf(id);
        if (!expected.equals(d.get(ancestorsField))) {
          Layout.rewrite(c, id, ancestorsField, d.get(ancestorsField), expected);
        }
      }
    }
  }

  @Override
  public void checkDocuments(Map<String, Document> byId, List<Problem> problems) {
    List<Row> rows = new ArrayList<>();
    for (Document d : byId.values()) {
      String id = idOf(d);
      Object parent = d.get(parentField);
      if (parent instanceof MistypedId m) {
        problems.add(Layout.mistyped(id, parentField, m, byId::containsKey));
        continue;
      }
      if (parent != null && !(parent instanceof String)) {
        problems.add(new Problem(id, "parent is not a string: " + parent));
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
      Object stored = byId.get(r.id()).get(ancestorsField);
      List<String> expected = forest.ancestorsOf(r.id());
      MistypedId mistyped = stored instanceof List<?> list ? list.stream()
          .filter(MistypedId.class::isInstance).map(MistypedId.class::cast).findFirst()
          .orElse(null) : null;
      if (mistyped != null) {
        problems.add(new Problem(r.id(), ancestorsField + " holds " + mistyped + ", which is not "
            + MistypedId.article(mistyped.type()) + " (repair() rewrites the " + ancestorsField
            + " from the parent chain " + expected + ")"));
      } else if (!(stored instanceof List<?> list) || !list.equals(expected)) {
        problems.add(new Problem(r.id(), "ancestors " + stored
            + " disagree with the parent chain " + expected));
      }
    }
  }

  /**
   * Refuses a move of {@code id} to {@code position} planned from the array of {@code anchor}
   * (the document of the position's anchor) when that array does not end with the anchor's own
   * parent: a stale array another tool left, which would make the move's cycle check and the
   * arrays it writes wrong. Only what the document read tells: an array stale above its last
   * item is not seen (docs/patterns.md).
   */
  private void refuseStaleEnd(Document anchor, String id, Position position) {
    Object parent = anchor.get(parentField);
    List<?> chain = anchor.get(ancestorsField) instanceof List<?> l ? l : List.of();
    Object last = chain.isEmpty() ? null : chain.get(chain.size() - 1);
    boolean agree = parent == null ? chain.isEmpty() : last != null && (parent.equals(last)
        || parent instanceof String p && Layout.names(last, p)
        || last instanceof String a && Layout.names(parent, a));
    if (!agree) {
      throw new dev.arbor.core.TreeException("Cannot move '" + id + "' to " + position
          + ": node '" + idOf(anchor) + "' has " + parentField + " "
          + (parent == null ? "null" : "'" + dev.arbor.mongo.internal.bson.NodeIds.shown(parent)
              + "'") + " but " + ancestorsField + " "
          + dev.arbor.mongo.internal.bson.NodeIds.shown(chain) + ", which do not end with it:"
          + " the move takes the new chain from the " + ancestorsField + ", which disagree with"
          + " the parents, the authoritative ones (it could make a cycle of parents); check()"
          + " lists the problems, repair() rebuilds the " + ancestorsField + " from the"
          + " parents. Nothing was written.");
    }
  }

  private Target target(Position position, Map<String, Document> docs) {
    if (position instanceof Position.Root) {
      return new Target(null, List.of(), 0);
    }
    Document anchor = docs.get(position.anchor());
    if (position instanceof Position.Child) {
      List<String> chain = new ArrayList<>(ancestorsOf(anchor));
      chain.add(position.anchor());
      return new Target(position.anchor(), chain, 0);
    }
    return new Target(parentOf(anchor), ancestorsOf(anchor), ranks.of(anchor));
  }

  /** Where a node goes: its parent, its ancestors, and the rank of its sibling anchor (or 0). */
  private record Target(@Nullable String parent, List<String> ancestors, long anchorRank) {}

  private Row row(Document d) {
    return new Row(idOf(d), parentOf(d), ranks.of(d), Map.of());
  }

  private List<String> ancestorsOf(Document d) {
    return Layout.idList(d, ancestorsField);
  }

  /** The parent id of node document {@code d} ({@link Layout#stringField}), null for a root. */
  private @Nullable String parentOf(Document d) {
    return Layout.stringField(d, parentField);
  }
}
