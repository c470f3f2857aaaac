package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.or;
import static dev.arbor.mongo.internal.bson.Queries.countOrRequire;
import static dev.arbor.mongo.internal.bson.Queries.deleteAll;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.group;
import static dev.arbor.mongo.internal.bson.Queries.ids;
import static dev.arbor.mongo.internal.bson.Queries.isNull;
import static dev.arbor.mongo.internal.bson.Queries.isReference;
import static dev.arbor.mongo.internal.bson.Queries.lifted;
import static dev.arbor.mongo.internal.bson.Queries.slices;

import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.Indexes;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * The <i>parent references</i> pattern (manual §4.2.1): each node stores the id of its parent.
 *
 * <pre>{@code
 * { _id: "MongoDB", parent: "Databases", arborRank: 0 }
 * { _id: "Books",   parent: null,        arborRank: 0 }
 * }</pre>
 *
 * <p>Beyond the manual: {@code arborRank}, the sibling order (see {@link Ranks}). Authoritative
 * fields: {@code parent} and {@code arborRank}; nothing is derived.
 *
 * <p>Index: {@code {parent: 1, arborRank: 1}} (children in order, roots, neighbour ranks, the
 * {@code $graphLookup} and level walks).
 *
 * <p>Recursive reads use one {@code $graphLookup} where the server runs it correctly (probed, see
 * {@link ServerCapabilities}); elsewhere a level-by-level {@code $in} walk.
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
 * <caption>round trips (rt) with $graphLookup / with the walk; n = subtree size, d =
 * depth</caption>
 * <tr><th>operation<th>rt<th>read<th>written
 * <tr><td>children, roots<td>1 (2 for a leaf)<td>children<td>0
 * <tr><td>ancestors, depth<td>1 / d+1<td>d+1<td>0
 * <tr><td>find<td>2 / d+2<td>d+2<td>0
 * <tr><td>descendants<td>1 (2 for a leaf) / depth of subtree + 2<td>n<td>0
 * <tr><td>update<td>2<td>1<td>1 (no journal)
 * <tr><td>insert<td>3<td>2<td>1
 * <tr><td>move<td>3 for a leaf (its first query finds no child); 4 / d+3 (cycle check walks
 *     up from the target)<td>d+3<td>1
 * <tr><td>delete<td>2 for a leaf (its first query finds no child); 3 / subtree depth + 4<td>n
 *     <td>n
 * <tr><td>subtree<td>descendants + 1 per 20 000 nodes (their documents by id)<td>n+1<td>0
 * <tr><td>descendantNodes<td>as subtree, + ancestors (the depth)<td>n+d+1<td>0
 * <tr><td>childNodes (a page)<td>2 + ancestors (the depth)<td>page + d + 1<td>0
 * <tr><td>ancestorNodes<td>ancestors + 1<td>d+1<td>0
 * <tr><td>childCount, isLeaf<td>1 (2 for a leaf)<td>0<td>0
 * <tr><td>descendantCount, subtreeFilter<td>as descendants<td>n<td>0
 * <tr><td>siblings, previous/next<td>2<td>siblings + 1<td>0
 * <tr><td>delete lifting children<td>4<td>siblings + children<td>siblings + children, 1 deleted
 * </table>
 *
 * <p>Choose it when writes dominate: a move writes one document whatever the subtree size; subtree
 * reads pay for it with a recursive query.
 */
final class ParentReferenceLayout implements Layout, ReferenceReads.Links {
  private final LayoutContext context;
  private final String parentField;
  private final String rankField;
  private final Ranks ranks;
  /** The reads defined by the two walks, {@link #ancestorsOf} and {@link #subtree}. */
  private final ReferenceReads references;

  ParentReferenceLayout(LayoutContext context) {
    this.context = context;
    this.parentField = context.names().parent;
    this.rankField = context.names().rank;
    this.ranks = context.ranks();
    this.references = new ReferenceReads(context, this);
  }

  @Override
  public LayoutContext context() {
    return context;
  }

  @Override
  public List<String> ancestorIds(Reads r, String id) {
    return ancestorsOf(r, id);
  }

  @Override
  public List<String> descendantIds(Reads r, String id, int maxDepth) {
    return references.descendantIds(r, id, maxDepth);
  }

  /** The node and one of its children in one query: a leaf's family needs no walk down. */
  @Override
  public Family parentAndDescendants(Reads r, String id) {
    TreeStores.checkId(id);
    Document node = null;
    boolean leaf = true;
    for (Document d : nodeAndOneChild(r, id)) {
      if (id.equals(d.get(ID))) {
        node = d;
      } else {
        leaf = false;
      }
    }
    if (node == null) {
      // not found, or found beside a child only (limit 2): the default reads tell which
      return Layout.super.parentAndDescendants(r, id);
    }
    return new Family(parentOf(node),
        leaf ? List.of() : descendantIds(r, id, Integer.MAX_VALUE));
  }

  /**
   * The node and one of its children (their parents only), in one query: a leaf's family needs no
   * walk down. Read once while a change plans: a lane reads it for its footprint under its marks,
   * then its plan of a delete reads the same.
   */
  private List<Document> nodeAndOneChild(Reads r, String id) {
    return r.once("nodeAndOneChild:" + parentField + ":" + id, () -> r.find(or(eq(ID, id),
        eq(parentField, id))).projection(fields(parentField)).limit(2)
        .into(new ArrayList<>()));
  }

  @Override
  public Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
    return references.subtreeRows(r, id, maxDepth, withAttributes);
  }

  @Override
  public boolean descends(Reads r, String id, String ancestorId) {
    return references.descends(r, id, ancestorId);
  }

  @Override
  public TreePattern pattern() {
    return TreePattern.PARENT_REFERENCES;
  }

  @Override
  public @Nullable String layoutProblem(Document d) {
    if (!isReference(d.get(parentField))) {
      return parentField + " is not an id: " + d.get(parentField);
    }
    return d.get(rankField) instanceof Number ? null 
        : "no numeric " + rankField + " (sibling order)";
  }

  @Override
  public List<IndexModel> indexes() {
    return List.of(new IndexModel(Indexes.ascending(parentField, rankField)));
  }

  @Override
  public void planInsert(Change c, String id, Position position, Map<String, Object> attributes) {
    Map<String, Document> docs = subjectAndAnchor(c, id, true, position,
        fields(parentField, rankField));
    refuseSelfParent(docs, id, position, "insert");
    String parent = targetParent(position, docs);
    long rank = ranks.rankFor(c, group(parentField, parent), position, anchorRank(position, docs),
        null);
    c.insert(context.newDocument(id, new Document(parentField, parent).append(rankField, rank),
        attributes));
  }

  @Override
  public void planMove(Change c, String id, Position position) {
    // In the same query, one child of the node if it has any: a leaf cannot be moved below
    // itself, and its move needs no walk up from the target.
    Found found = subjectAndAnchorWith(c, id, false, position, fields(parentField, rankField),
        eq(parentField, id), 1);
    Map<String, Document> docs = found.docs();
    if (position instanceof Position.Sibling s && s.siblingId().equals(id)) {
      return;
    }
    if (!id.equals(position.anchor())) {
      refuseSelfParent(docs, id, position, "move");
    }
    boolean leaf = found.others() != null
        && found.others().stream().noneMatch(d -> Layout.names(d.get(parentField), id));
    String parent = targetParent(position, docs);
    if (parent != null && (parent.equals(id) || !leaf && targetAncestors(c, id, position, parent)
        .contains(id))) {
      throw new InvalidMoveException(id, position);
    }
    long rank = ranks.rankFor(c, group(parentField, parent), position, anchorRank(position, docs),
        id);
    c.set(id, Updates.combine(Updates.set(parentField, parent), Updates.set(rankField, rank)));
  }

  @Override
  public long planDelete(Change c, String id) {
    List<String> doomed = new ArrayList<>();
    doomed.add(id);
    // The node and one of its children, in one query: a leaf needs no walk down.
    TreeStores.checkId(id);
    boolean found = false;
    boolean leaf = true;
    for (Document d : nodeAndOneChild(c, id)) {
      found |= id.equals(d.get(ID));
      leaf &= !Layout.names(d.get(parentField), id); // in another form too: refused below
    }
    if (leaf && !found) {
      throw new NodeNotFoundException(id);
    }
    for (Row r : leaf ? List.<Row>of() : subtree(c, id, Integer.MAX_VALUE)) {
      doomed.add(r.id());
    }
    deleteAll(c, doomed);
    return doomed.size();
  }

  /**
   * The children regrouped under the node's parent in its place: every sibling of the new group
   * gets a fresh rank (one single-document set each), the children their new parent; then the
   * node is deleted.
   */
  @Override
  public void planLift(Change c, String id) {
    String parent = parentOf(c.require(id, fields(parentField, rankField)));
    List<String> children = childIds(c, id);
    if (!children.isEmpty()) {
      List<String> siblings = parent == null ? rootIds(c) : childIds(c, parent);
      RankPlans.planRegroup(c, rankField, lifted(siblings, id, children), new HashSet<>(children),
          parentField, parent);
    }
    deleteAll(c, List.of(id));
  }

  @Override
  public ChildGroup childGroup() {
    return new ChildGroup(fields(parentField, rankField), d -> eq(parentField, idOf(d)),
        rankField,
        d -> parentOf(d), d -> -1);
  }

  @Override
  public long childCountOf(Reads r, String id) {
    return countOrRequire(r, eq(parentField, id), id);
  }

  @Override
  public Optional<Node> findNode(Reads r, String id) {
    Document d = r.document(id, null);
    if (d == null) {
      return Optional.empty();
    }
    return Optional.of(new Node(id, parentOf(d), ancestorsOf(r, id).size(),
        context.attributesOf(d)));
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

  /**
   * The ancestors of {@code id}, root first: one {@code $graphLookup} up the {@code parent} links,
   * or one query per level (see {@link Walker}).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  @Override
  public List<String> ancestorsOf(Reads r, String id) {
    TreeStores.checkId(id);
    Up up = context.walker().run(r, new Walker.Walk<>() {
      @Override
      public Up byGraphLookup(Reads r) {
        return upByGraphLookup(r, id);
      }

      @Override
      public Up byLevels(Reads r) {
        return upByLevels(r, id);
      }
    });
    List<String> chain = new ArrayList<>();
    Set<String> seen = new HashSet<>(List.of(id));
    for (String p = up.parent; p != null && up.parents.containsKey(p); p = up.parents.get(p)) {
      if (!seen.add(p)) {
        throw cycle(p);
      }
      chain.add(0, p);
    }
    return chain;
  }

  /** The ancestors of a move's new parent; a cycle among them refuses the move, naming it. */
  private List<String> targetAncestors(Change c, String id, Position position, String parent) {
    try {
      return ancestorsOf(c, parent);
    } catch (dev.arbor.core.TreeException e) {
      if (e.getClass() != dev.arbor.core.TreeException.class) {
        throw e; // a node not found, a tree changed meanwhile: as they are
      }
      throw new dev.arbor.core.TreeException("Cannot move '" + id + "' to " + position + ": "
          + e.getMessage() + ". Nothing was written", e);
    }
  }

  /**
   * Refuses to {@code what} (insert, move) {@code id} at {@code position} when the anchor's
   * document, read already, names the anchor as its own parent: the node would go under a cycle
   * of parent links, out of every root's reach. Only this shortest cycle is seen without a walk
   * up from the target, which an insert and a leaf's move do not pay (docs/guarantees.md); a
   * subtree's move walks up and refuses any cycle ({@link #targetAncestors}).
   */
  private void refuseSelfParent(Map<String, Document> docs, String id, Position position,
      String what) {
    String anchor = position.anchor();
    if (anchor != null && Layout.names(docs.get(anchor).get(parentField), anchor)) {
      throw new dev.arbor.core.TreeException("Cannot " + what + " '" + id + "'"
          + (what.equals("move") ? " to " : " at ") + position
          + ": " + cycle(anchor).getMessage() + ". Nothing was written");
    }
  }

  /**
   * What a walk that meets {@code id} again throws: the parent links from it lead back to it,
   * so no answer (its ancestors, its subtree) is true; a change that meets it writes nothing.
   */
  private static dev.arbor.core.TreeException cycle(String id) {
    return new dev.arbor.core.TreeException("node '" + id + "' is its own ancestor (a cycle of"
        + " parent links): check() lists the problems; repair() cannot settle a cycle, set one"
        + " of its nodes' parent yourself");
  }

  /** A node's parent, and the parent of each of its ancestors found (null for a root). */
  private record Up(@Nullable String parent, Map<String, String> parents) {}

  private Up upByGraphLookup(Reads r, String id) {
    Map<String, String> parents = new HashMap<>();
    String parent = null;
    // Unwound and projected: the ancestors travel one per result document (never one
    // document past 16 MB), with only the fields the chain needs.
    boolean found = false;
    for (Document d : r.aggregate(List.of(
        new Document("$match", new Document(ID, id)),
        new Document("$project", new Document(parentField, 1)),
        new Document("$graphLookup", new Document("from", context.collectionName())
            .append("startWith", "$" + parentField)
            .append("connectFromField", parentField)
            .append("connectToField", ID)
            .append("as", "up")),
        new Document("$unwind", new Document("path", "$up")
            .append("preserveNullAndEmptyArrays", true)),
        new Document("$project", new Document(parentField, 1).append("up." + ID, 1)
            .append("up." + parentField, 1))))) {
      found = true;
      parent = parentOf(d);
      Document up = d.get("up", Document.class);
      if (up != null) {
        parents.put(idOf(up), parentOf(up));
      }
    }
    if (!found) {
      throw new NodeNotFoundException(id);
    }
    return new Up(parent, parents);
  }

  private Up upByLevels(Reads r, String id) {
    Map<String, String> parents = new HashMap<>();
    String parent = parentOf(r.require(id, fields(parentField)));
    Set<String> seen = new HashSet<>();
    for (String p = parent; p != null && seen.add(p); ) {
      Document d = r.document(p, fields(parentField));
      if (d == null) {
        break; // an orphan: check() reports it
      }
      parents.put(p, parentOf(d));
      p = parentOf(d);
    }
    return new Up(parent, parents);
  }

  /**
   * The rows of the descendants of {@code id}, down to {@code maxDepth} levels (at least 1): one
   * {@code $graphLookup} down the {@code parent} links, or one {@code $in} query per level (see
   * {@link Walker}).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  @Override
  public List<Row> subtree(Reads r, String id, int maxDepth) {
    TreeStores.checkId(id);
    return context.walker().run(r, new Walker.Walk<>() {
      @Override
      public List<Row> byGraphLookup(Reads r) {
        return subtreeByGraphLookup(r, id, maxDepth);
      }

      @Override
      public List<Row> byLevels(Reads r) {
        return subtreeByWalk(r, id, maxDepth);
      }
    });
  }

  private List<Row> subtreeByGraphLookup(Reads r, String id, int maxDepth) {
    List<Row> rows = new ArrayList<>();
    Document lookup = new Document("from", context.collectionName())
        .append("startWith", "$" + ID)
        .append("connectFromField", ID)
        .append("connectToField", parentField)
        .append("as", "down");
    if (maxDepth != Integer.MAX_VALUE) {
      lookup.append("maxDepth", maxDepth - 1);
    }
    for (Document d : r.aggregate(List.of(
            new Document("$match", new Document(ID, id)),
            new Document("$project", new Document(ID, 1)),
            new Document("$graphLookup", lookup),
            new Document("$unwind", "$down"),
            new Document("$project", new Document("down." + ID, 1).append("down." + parentField, 1)
                .append("down." + rankField, 1))))
        .allowDiskUse(true)) {
      Row row = row(d.get("down", Document.class));
      if (row.id().equals(id)) {
        throw cycle(id); // its subtree holds it: a cycle of parent links
      }
      rows.add(row);
    }
    if (rows.isEmpty()) {
      r.require(id, fields(ID));
    }
    return rows;
  }

  private List<Row> subtreeByWalk(Reads r, String id, int maxDepth) {
    List<Row> rows = new ArrayList<>();
    r.require(id, fields(ID));
    List<String> level = List.of(id);
    Set<String> seen = new HashSet<>(level);
    for (int depth = 1; depth <= maxDepth && !level.isEmpty(); depth++) {
      List<String> next = new ArrayList<>();
      for (List<String> slice : slices(level)) {
        for (Document d : r.find(in(parentField, slice))
            .projection(fields(parentField, rankField))) {
          // a document of another id type names a parent of this tree: not a node of it
          if (d.get(ID) instanceof String child && seen.add(child)) {
            rows.add(row(d));
            next.add(child);
          } else if (id.equals(d.get(ID))) {
            throw cycle(id); // its subtree holds it: a cycle of parent links
          }
        }
      }
      level = next;
    }
    return rows;
  }

  @Override
  public Iterable<Document> documentsFor(Tree tree) {
    Map<String, Long> nextRank = new HashMap<>();
    List<Document> docs = new ArrayList<>(tree.size());
    for (Node e : tree.entries()) {
      long rank = nextRank.merge(e.parentId(), Ranks.GAP, Long::sum) - Ranks.GAP;
      docs.add(context.newDocument(e.id(), new Document(parentField, e.parentId())
          .append(rankField, rank),
          e.attributes()));
    }
    return docs;
  }

  @Override
  public Forest forest(Reads r, boolean withAttributes) {
    List<Row> rows = new ArrayList<>();
    for (Document d : r.find(NODES)
        .projection(withAttributes ? null : fields(parentField, rankField))) {
      if (d.get(ID) instanceof String id) { // else of another id type: not a node of this tree
        rows.add(new Row(id, parentOf(d), ranks.of(d),
            withAttributes ? context.attributesOf(d) : Map.of()));
      }
    }
    return new Forest(rows);
  }

  /**
   * Parent references derive nothing: repair fills in missing or repeated ranks, and rewrites a
   * parent given in another form of an existing node's id ({@link MistypedId}) as that id.
   */
  @Override
  public void planRepair(Change c, List<Document> docs) {
    RankPlans.planRankRepair(c, rankField, docs, d -> d.get(parentField));
    Set<Object> ids = new HashSet<>();
    for (Document d : docs) {
      ids.add(d.get(ID));
    }
    for (Document d : docs) {
      if (d.get(parentField) instanceof MistypedId m) {
        String parent = Layout.repaired(m, ids::contains);
        if (parent != null) {
          Layout.rewrite(c, d.get(ID), parentField, m, parent);
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
    new Forest(rows).checkStructure(problems);
  }

  private @Nullable String targetParent(Position position,
      Map<String, Document> docs) {
    if (position instanceof Position.Root) {
      return null;
    }
    if (position instanceof Position.Child) {
      return position.anchor();
    }
    return parentOf(docs.get(position.anchor()));
  }

  private long anchorRank(Position position, Map<String, Document> docs) {
    return position instanceof Position.Sibling ? ranks.of(docs.get(position.anchor())) : 0;
  }

  private Row row(Document d) {
    return new Row(idOf(d), parentOf(d), ranks.of(d), Map.of());
  }

  /** The parent id of node document {@code d} ({@link Layout#stringField}), null for a root. */
  private @Nullable String parentOf(Document d) {
    return Layout.stringField(d, parentField);
  }
}
