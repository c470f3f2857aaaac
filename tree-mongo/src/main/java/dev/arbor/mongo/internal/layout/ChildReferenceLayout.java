package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.or;
import static dev.arbor.mongo.internal.bson.Queries.deleteAll;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.ids;
import static dev.arbor.mongo.internal.bson.Queries.lifted;
import static dev.arbor.mongo.internal.bson.Queries.slices;

import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.IndexOptions;
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
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.read.Forest;
import dev.arbor.mongo.internal.read.ListedPreorder;
import dev.arbor.mongo.internal.read.PreorderCursor;
import dev.arbor.mongo.internal.read.Row;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The <i>child references</i> pattern (manual §4.2.2): each node stores the ordered ids of its
 * children.
 *
 * <pre>{@code
 * { _id: "Databases", children: ["MongoDB", "dbm"] }
 * { _id: "MongoDB",   children: [] }
 * { _id: "Books",     children: ["Programming"], arborRank: 0 }     <- a root
 * }</pre>
 *
 * <p>Sibling order is the order of the {@code children} array. Beyond the manual: {@code arborRank}
 * on roots only, the order of the roots (see {@link Ranks}); a node is a root exactly when it has a
 * {@code arborRank}. Authoritative fields: {@code children} and the roots' {@code arborRank}.
 *
 * <p>Indexes: {@code {children: 1}} (multikey: a node's parent), {@code {arborRank: 1}} sparse
 * (roots).
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
 * <tr><td>children<td>1<td>1<td>0
 * <tr><td>roots<td>1<td>roots<td>0
 * <tr><td>ancestors, depth<td>1 / d+2<td>d+1<td>0
 * <tr><td>find<td>2 / d+2<td>d+2<td>0
 * <tr><td>descendants<td>1 / depth of subtree + 2<td>n+1<td>0
 * <tr><td>update<td>2<td>1<td>1 (no journal)
 * <tr><td>insert<td>2 (a sibling's parent is read with it)<td>2–3<td>2 (the node and its
 *     parent)
 * <tr><td>move<td>2 for a leaf; 3 / d+3 (cycle check walks up from the target)<td>d+3<td>2–3
 * <tr><td>delete<td>2 for a leaf (its parent is read with it); 3 / subtree depth + 3<td>n+1
 *     <td>n+1
 * <tr><td>subtree<td>descendants + 1 per 20 000 nodes (their documents by id)<td>n+1<td>0
 * <tr><td>descendantNodes<td>as subtree, + ancestors (the depth)<td>n+d+1<td>0
 * <tr><td>childNodes (a page)<td>2 + ancestors (the depth)<td>page + d + 1<td>0
 * <tr><td>ancestorNodes<td>ancestors + 1<td>d+1<td>0
 * <tr><td>childCount, isLeaf<td>1<td>1<td>0
 * <tr><td>descendantCount, subtreeFilter<td>as descendants<td>n<td>0
 * <tr><td>siblings, previous/next<td>2 / d+2<td>2<td>0
 * <tr><td>delete lifting children<td>2 (3 for a root)<td>2<td>1 (roots: every root), 1 deleted
 * </table>
 *
 * <p>Choose it when reads are mostly "the children of this node" and writes touch single nodes;
 * the manual finds it suitable "as long as no operations on subtrees are necessary".
 */
final class ChildReferenceLayout implements Layout, ReferenceReads.Links {
  private final LayoutContext context;
  private final String childrenField;
  private final String rankField;
  /** The filter of the roots: the nodes that have a rank. */
  private final Bson roots;
  private final Ranks ranks;
  /** The reads defined by the two walks, {@link #ancestorsOf} and {@link #subtree}. */
  private final ReferenceReads references;
  /** The walks up and down the {@code children} arrays. */
  private final ChildArrayWalks walks;

  ChildReferenceLayout(LayoutContext context) {
    this.context = context;
    this.childrenField = context.names().children;
    this.rankField = context.names().rank;
    this.roots = exists(rankField, true);
    this.ranks = context.ranks();
    this.walks = new ChildArrayWalks(context);
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
    return TreePattern.CHILD_REFERENCES;
  }

  @Override
  public @Nullable String layoutProblem(Document d) {
    return d.get(childrenField) instanceof List ? null : "children is not an array: "
        + d.get(childrenField);
  }

  @Override
  public List<IndexModel> indexes() {
    return List.of(
        new IndexModel(Indexes.ascending(childrenField)),
        new IndexModel(Indexes.ascending(rankField), new IndexOptions().sparse(true)));
  }

  @Override
  public void planInsert(Change c, String id, Position position, Map<String, Object> attributes) {
    // Beside a sibling: the sibling's parent (the document that lists it) in the same query.
    Found found = position instanceof Position.Sibling s
        ? subjectAndAnchorWith(c, id, true, position, fields(childrenField, rankField),
            eq(childrenField, s.siblingId()), 1)
        : new Found(subjectAndAnchor(c, id, true, position, fields(childrenField, rankField)),
            null);
    Target t = target(c, position, found.docs(), null, found.others());
    Document structure = new Document(childrenField, List.of());
    if (t.parent == null) {
      structure.append(rankField, t.rank);
    }
    if (t.parent != null) {
      checkRoom(c, t.parent, t.siblings, id);
    }
    c.insert(context.newDocument(id, structure, attributes));
    if (t.parent != null) {
      c.updateOne(eq(ID, t.parent), push(id, t.index));
    }
  }

  @Override
  public void planMove(Change c, String id, Position position) {
    // In the same query, the node's parent (the document that lists it): a leaf, whose own
    // children array is empty, cannot be moved below itself and needs no walk up from the target.
    // Beside a sibling, the sibling's parent too.
    Found found = position instanceof Position.Sibling s
        ? subjectAndAnchorWith(c, id, false, position, fields(childrenField, rankField),
            or(eq(childrenField, id), eq(childrenField, s.siblingId())), 3)
        : subjectAndAnchorWith(c, id, false, position, fields(childrenField, rankField),
            eq(childrenField, id), 2);
    Map<String, Document> docs = found.docs();
    if (position instanceof Position.Sibling s && s.siblingId().equals(id)) {
      return;
    }
    // two documents listing it: refused, naming them (the move would leave one dangling)
    Document oldParent = found.others() != null ? walks.soleListerOf(id, found.others())
        : walks.soleParentDocument(c, id);
    boolean leaf = childrenOf(docs.get(id)).isEmpty();
    Target t = target(c, position, docs, id, found.others());
    if (t.parent != null
        && (t.parent.equals(id) || !leaf && ancestorsOf(c, t.parent).contains(id))) {
      throw new InvalidMoveException(id, position);
    }
    if (oldParent != null) {
      c.set(idOf(oldParent), Updates.pull(childrenField, id));
    }
    if (t.parent == null) {
      c.set(id, Updates.set(rankField, t.rank));
    } else {
      if (oldParent == null) {
        c.set(id, Updates.unset(rankField));
      }
      checkRoom(c, t.parent, t.siblings, id);
      c.updateOne(eq(ID, t.parent), push(id, t.index));
    }
  }

  @Override
  public long planDelete(Change c, String id) {
    // The node and its parent in one query: a leaf needs no walk down.
    TreeStores.checkId(id);
    List<Document> found = new ArrayList<>();
    // at most two listers beside the node: two are refused, naming them (see soleListerOf)
    c.find(or(eq(ID, id), eq(childrenField, id))).projection(fields(childrenField)).limit(3)
        .into(found);
    Document self = found.stream().filter(d -> id.equals(d.get(ID))).findFirst().orElse(null);
    Document parent = walks.soleListerOf(id, found);
    List<String> doomed = new ArrayList<>();
    if (self != null && childrenOf(self).isEmpty()) {
      doomed.add(id);
    } else {
      for (Row r : subtree(c, id, Integer.MAX_VALUE)) { // includes id itself
        doomed.add(r.id());
      }
      if (parent == null) {
        parent = walks.soleParentDocument(c, id);
      }
    }
    if (parent != null) {
      c.set(idOf(parent), Updates.pull(childrenField, id));
    }
    deleteAll(c, doomed);
    return doomed.size();
  }

  /**
   * The node's id in its parent's {@code children} is replaced by its own children (one
   * single-document set); for a root, every root of the new order gets a fresh rank, the children
   * becoming roots; then the node is deleted.
   */
  @Override
  public void planLift(Change c, String id) {
    List<String> children = childrenOf(c.require(id, fields(childrenField, rankField)));
    Document parent = walks.soleParentDocument(c, id);
    if (parent != null) {
      List<String> regrouped = lifted(childrenOf(parent), id, children);
      if (!children.isEmpty()) {
        if (regrouped.size() > context.capabilities().maxChildren()) {
          throw new dev.arbor.core.TreeException("Cannot delete '" + id + "' lifting its "
              + children.size() + " children into the children of '" + idOf(parent)
              + "': it would have "
              + regrouped.size() + " children, more than TreeOptions.withMaxChildren allows ("
              + context.capabilities().maxChildren() + "); " + WIDER);
        }
        checkRoom(c, idOf(parent), regrouped.subList(0, regrouped.size() - 1),
            regrouped.get(regrouped.size() - 1));
      }
      c.set(idOf(parent), Updates.set(childrenField, regrouped));
    } else if (!children.isEmpty()) {
      RankPlans.planRegroup(c, rankField, lifted(rootIds(c), id, children), Set.of(), rankField,
          null);
    }
    deleteAll(c, List.of(id));
  }

  /** The children come from the parent's array, not from a query: see {@link #childNodes}. */
  @Override
  public @Nullable ChildGroup childGroup() {
    return null;
  }

  /**
   * The node's document (and the cursor's) by {@code _id}, then the page of its {@code children}
   * array by {@code _id} (filtered: the rest of the array, filtered by the server), then the
   * node's depth by the walk up.
   */
  @Override
  public List<Node> childNodes(Reads r, String id, @Nullable String after, int limit,
      @Nullable Bson filter) {
    Map<String, Document> docs = r.documents(after == null ? List.of(id) : List.of(id, after),
        fields(childrenField));
    if (!docs.containsKey(id)) {
      throw new NodeNotFoundException(id);
    }
    List<String> children = childrenOf(docs.get(id));
    int from = 0;
    if (after != null) {
      if (!docs.containsKey(after)) {
        throw new NodeNotFoundException(after);
      }
      from = children.indexOf(after) + 1;
      if (from == 0) {
        throw TreeStores.notAChild(after, id);
      }
    }
    List<String> rest = children.subList(from, children.size());
    if (filter == null) {
      rest = rest.subList(0, Math.min(rest.size(), limit));
    }
    Map<String, Document> found = new HashMap<>();
    for (List<String> slice : slices(rest)) {
      Bson q = filter == null ? in(ID, slice) : and(in(ID, slice), filter);
      for (Document d : r.find(q)) {
        found.put(idOf(d), d);
      }
    }
    List<Node> out = new ArrayList<>();
    int depth = rest.isEmpty() ? 0 : depthOf(r, id) + 1;
    for (String child : rest) {
      Document d = found.get(child);
      if (d != null && out.size() < limit) {
        out.add(new Node(Forest.nodeId(child, id), id, depth, context.attributesOf(d)));
      }
    }
    return out;
  }

  /**
   * The node (its children) and the document that lists it, in one query: a leaf's family needs
   * no walk down.
   */
  @Override
  public Family parentAndDescendants(Reads r, String id) {
    Listed l = listed(r, id, fields(childrenField));
    return new Family(l.parent(), childrenOf(l.node()).isEmpty() ? List.of()
        : descendantIds(r, id, Integer.MAX_VALUE));
  }

  @Override
  public @Nullable String parentOf(Reads r, String id) {
    return listed(r, id, fields(ID)).parent();
  }

  /** A node's document, and the id of the document whose children list it (null: a root). */
  private record Listed(Document node, @Nullable String parent) {}

  /**
   * The node, read with {@code projection}, and the document that lists it, in one query.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  private Listed listed(Reads r, String id, Bson projection) {
    TreeStores.checkId(id);
    Document node = null;
    String parent = null;
    for (Document d : r.find(or(eq(ID, id), eq(childrenField, id))).projection(projection)
        .limit(2)) {
      if (id.equals(d.get(ID))) {
        node = d;
      } else {
        parent = idOf(d);
      }
    }
    if (node == null) {
      throw new NodeNotFoundException(id);
    }
    return new Listed(node, parent);
  }

  @Override
  public Optional<Node> findNode(Reads r, String id) {
    Document d = r.document(id, null);
    if (d == null) {
      return Optional.empty();
    }
    List<String> ancestors = ancestorsOf(r, id);
    String parent = ancestors.isEmpty() ? null : ancestors.get(ancestors.size() - 1);
    return Optional.of(new Node(id, parent, ancestors.size(), context.attributesOf(d)));
  }

  @Override
  public List<String> rootIds(Reads r) {
    List<String> ranked = ids(r.find(roots).projection(fields(ID))
        .sort(Sorts.ascending(rankField)));
    if (!ranked.isEmpty()) {
      return ranked;
    }
    // No node has a rank: an empty tree, or a collection written in the manual's shape, whose
    // roots are the nodes no children array lists (repair() gives them their ranks), in the
    // order the collection returns them, as the whole-tree reads have them.
    List<Document> docs = new ArrayList<>();
    r.find(NODES).projection(fields(childrenField)).into(docs);
    Set<String> listed = new HashSet<>();
    for (Document d : docs) {
      listed.addAll(childrenOf(d));
    }
    List<String> out = new ArrayList<>();
    for (Document d : docs) {
      if (!listed.contains(idOf(d))) {
        out.add(idOf(d));
      }
    }
    return out;
  }

  /** Children by {@code _id} in the order their parent lists them, in slices. */
  @Override
  public PreorderCursor preorder(Reads r) {
    return new ListedPreorder(r, new ListedPreorder.Links() {
      @Override
      public Bson roots() {
        return roots;
      }

      @Override
      public Bson order() {
        return Sorts.ascending(rankField);
      }

      @Override
      public List<String> listed(Document parent) {
        return childrenOf(parent);
      }
    }, context::attributesOf);
  }

  @Override
  public List<String> childIds(Reads r, String id) {
    return childrenOf(r.require(id, fields(childrenField)));
  }

  /** The document whose {@code children} lists {@code id}, or null for a root. */
  private Document parentDocument(Reads r, String id) {
    return walks.parentDocument(r, id);
  }

  /**
   * The ancestors of {@code id}, root first, by {@link ChildArrayWalks#ancestorsOf}.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  @Override
  public List<String> ancestorsOf(Reads r, String id) {
    return walks.ancestorsOf(r, id);
  }

  /**
   * The rows of {@code id} (parent null) and its descendants down to {@code maxDepth} levels, by
   * {@link ChildArrayWalks#subtree}.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  @Override
  public List<Row> subtree(Reads r, String id, int maxDepth) {
    return walks.subtree(r, id, maxDepth);
  }

  @Override
  public Iterable<Document> documentsFor(Tree tree) {
    List<Document> docs = new ArrayList<>(tree.size());
    long rank = 0;
    for (Node e : tree.entries()) {
      Document structure = new Document(childrenField, tree.children(e.id()));
      if (e.parentId() == null) {
        structure.append(rankField, rank);
        rank += Ranks.GAP;
      }
      docs.add(context.newDocument(e.id(), structure, e.attributes()));
    }
    return docs;
  }

  @Override
  public Forest forest(Reads r, boolean withAttributes) {
    List<Document> docs = new ArrayList<>();
    r.find(NODES).projection(withAttributes ? null : fields(childrenField, rankField)).into(docs);
    return new Forest(rows(docs, withAttributes, null));
  }

  /** Rows of a whole collection: listed nodes under their lister, the others as ranked roots. */
  private List<Row> rows(List<Document> docs, boolean withAttributes,
      @Nullable List<Problem> problems) {
    Map<String, String> parent = new HashMap<>();
    Map<String, Integer> index = new HashMap<>();
    for (Document d : docs) {
      List<String> children = childrenOf(d);
      for (int i = 0; i < children.size(); i++) {
        String previous = parent.putIfAbsent(children.get(i), idOf(d));
        if (previous == null) {
          index.put(children.get(i), i);
        } else if (problems != null) {
          problems.add(new Problem(children.get(i), "is listed as a child of both '" + previous
              + "' and '" + idOf(d) + "'"));
        }
      }
    }
    List<Row> rows = new ArrayList<>();
    for (Document d : docs) {
      String id = idOf(d);
      String p = parent.get(id);
      long order = p == null ? ranks.of(d) : index.get(id);
      rows.add(new Row(id, p, order, withAttributes ? context.attributesOf(d) : Map.of()));
    }
    return rows;
  }

  /**
   * Repair makes every {@code children} an array of existing ids, each listed once in it; gives
   * every unlisted node a root rank and removes the rank of listed ones. A node listed by two
   * parents is left listed by both: which one is its parent cannot be told without guessing, so
   * it stays among the problems repair returns.
   */
  @Override
  public void planRepair(Change c, List<Document> docs) {
    Set<Object> ids = new HashSet<>();
    for (Document d : docs) {
      ids.add(d.get(ID));
    }
    Set<String> listed = new HashSet<>();
    for (Document d : docs) {
      Object children = d.get(childrenField);
      List<String> kept = new ArrayList<>();
      if (children instanceof List<?> list) {
        Set<String> here = new HashSet<>();
        for (Object each : list) {
          // another form of an existing node's id is kept as that id
          Object child = each instanceof MistypedId m ? Layout.repaired(m, ids::contains) : each;
          if (child instanceof String s && ids.contains(s) && !s.equals(d.get(ID))
              && here.add(s)) {
            listed.add(s);
            kept.add(s);
          }
        }
      }
      if (!kept.equals(children)) {
        Layout.rewrite(c, d.get(ID), childrenField, children, kept);
      }
    }
    List<Document> roots = new ArrayList<>();
    for (Document d : docs) {
      if (!listed.contains(idOf(d))) {
        roots.add(d);
      } else if (d.containsKey(rankField)) {
        c.set(d.get(ID), Updates.unset(rankField));
      }
    }
    RankPlans.planRankRepair(c, rankField, roots, d -> null);
  }

  @Override
  public void checkDocuments(Map<String, Document> byId, List<Problem> problems) {
    List<Document> docs = new ArrayList<>();
    for (Document d : byId.values()) {
      String id = idOf(d);
      Object children = d.get(childrenField);
      MistypedId mistyped = children instanceof List<?> items ? items.stream()
          .filter(MistypedId.class::isInstance).map(MistypedId.class::cast).findFirst()
          .orElse(null) : null;
      if (mistyped != null) {
        problems.add(Layout.mistyped(id, "an item of " + childrenField, mistyped,
            byId::containsKey));
        continue;
      }
      if (!(children instanceof List<?> list)
          || !list.stream().allMatch(c -> c instanceof String)) {
        problems.add(new Problem(id, "children is missing or not an array of ids: "
            + dev.arbor.mongo.internal.bson.NodeIds.shown(children)));
        continue;
      }
      for (Object c : list) {
        if (!byId.containsKey(c)) {
          problems.add(new Problem(id, "children lists '" + c + "', which does not exist"));
        }
      }
      if (new HashSet<>(list).size() != list.size()) {
        problems.add(new Problem(id, "children lists a node twice: " + list));
      }
      docs.add(d);
    }
    List<Row> rows = rows(docs, false, problems);
    for (Row r : rows) {
      Object rank = byId.get(r.id()).get(rankField);
      if (r.parent() == null && !(rank instanceof Number)) {
        problems.add(new Problem(r.id(),
            "is in no children array and has no rank: neither a child nor a root"));
      }
      if (r.parent() != null && rank != null) {
        problems.add(new Problem(r.id(), "has a root rank but is a child of '" + r.parent() + "'"));
      }
    }
    new Forest(rows).checkStructure(problems);
  }

  /**
   * Where a position puts a node: the parent and index, or a root rank.
   *
   * @param listers documents read with the subject, among them every document that lists the
   *     sibling of a sibling position; null if not known
   */
  private Target target(Change c, Position position, Map<String, Document> docs,
      @Nullable String moving, @Nullable List<Document> listers) {
    if (position instanceof Position.Root) {
      return new Target(null, 0, ranks.rankFor(c, roots, position, 0, moving), List.of());
    }
    if (position instanceof Position.Child child) {
      List<String> siblings = without(childrenOf(docs.get(child.parentId())), moving);
      return new Target(child.parentId(), child.first() ? 0 : siblings.size(), 0, siblings);
    }
    Position.Sibling s = (Position.Sibling) position;
    Document parent = listers != null ? walks.listerOf(s.siblingId(), listers)
        : parentDocument(c, s.siblingId());
    if (parent == null) {
      long anchorRank = ranks.of(docs.get(s.siblingId()));
      return new Target(null, 0, ranks.rankFor(c, roots, position, anchorRank, moving),
          List.of());
    }
    List<String> siblings = without(childrenOf(parent), moving);
    int at = siblings.indexOf(s.siblingId());
    return new Target(idOf(parent), s.before() ? at : at + 1, 0, siblings);
  }

  /**
   * Where a node goes: under {@code parent} at {@code index} of its {@code siblings} (the array
   * without the node), or, with a null parent, a root of rank {@code rank}.
   */
  private record Target(@Nullable String parent, int index, long rank, List<String> siblings) {}

  /**
   * Refuses, before anything is written, to add {@code id} to the {@code children} array of
   * {@code parent} when the array would pass the bound of {@link TreeOptions#withMaxChildren}, or
   * the parent's document MongoDB's 16 MB limit (measured in encoded BSON; the whole document is
   * read only when the array alone is over 8 MB).
   */
  private void checkRoom(Change c, String parent, List<String> children, String id) {
    if (children.size() >= context.capabilities().maxChildren()) {
      throw new dev.arbor.core.TreeException("Cannot add '" + id + "' to the children of '"
          + parent + "': it has " + children.size() + " children, the most"
          + " TreeOptions.withMaxChildren allows ("
          + context.capabilities().maxChildren() + "); " + WIDER);
    }
    org.bson.BsonArray array = new org.bson.BsonArray();
    for (String child : children) {
      array.add(new org.bson.BsonString(child));
    }
    array.add(new org.bson.BsonString(id));
    long size = Encoded.size(new org.bson.BsonDocument(childrenField, array));
    if (size > Encoded.MAX_DOCUMENT / 2) {
      Document whole = c.document(parent, null);
      size += whole == null ? 0 : Encoded.size(whole.toBsonDocument()) - size
          + Encoded.size(new org.bson.BsonDocument("x", new org.bson.BsonString(id)));
    }
    if (size > Encoded.MAX_DOCUMENT - 16 * 1024) {
      throw new dev.arbor.core.TreeException("Cannot add '" + id + "' to the children of '"
          + parent + "': its document would be " + size + " bytes of BSON, past MongoDB's 16 MB"
          + " limit (" + children.size() + " children); a parent with this many children needs"
          + " parent references, an array of ancestors or materialized paths");
    }
  }

  private static final String WIDER = "a node with this many children needs parent references,"
      + " an array of ancestors or materialized paths, which keep each child in its own document";

  /** A load refuses a node with more children than the bound, before anything is written. */
  @Override
  public void checkLoad(Tree tree) {
    for (Node e : tree.entries()) {
      int n = tree.children(e.id()).size();
      if (n > context.capabilities().maxChildren()) {
        throw new dev.arbor.core.TreeException("Cannot load the tree: '" + e.id() + "' has " + n
            + " children, more than TreeOptions.withMaxChildren allows ("
            + context.capabilities().maxChildren() + "); " + WIDER);
      }
    }
  }

  private Bson push(String id, int index) {
    return Updates.pushEach(childrenField, List.of(id), new PushOptions().position(index));
  }

  private static List<String> without(List<String> ids, @Nullable String id) {
    if (id == null || !ids.contains(id)) {
      return ids;
    }
    List<String> copy = new ArrayList<>(ids);
    copy.remove(id);
    return copy;
  }

  private List<String> childrenOf(Document d) {
    return Layout.childIdList(d, childrenField);
  }
}
