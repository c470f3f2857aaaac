package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lte;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.isReference;

import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.Indexes;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.read.Forest;
import dev.arbor.mongo.internal.read.PreorderCursor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The <i>nested sets</i> pattern (manual §4.2.5): each node stores the two stops of a round-trip
 * (preorder) walk of the forest, {@code left} on the way down and {@code right} on the way back, so
 * that a subtree is exactly the nodes whose {@code left} lies inside its interval.
 *
 * <pre>{@code
 *  1 Books 12
 *     2 Programming 11                 { _id: "Databases", parent: "Programming",
 *        3 Languages 4                   left: 5, right: 10, arborDepth: 2 }
 *        5 Databases 10
 *           6 MongoDB 7   8 dbm 9
 * }</pre>
 *
 * <p>The numbers of the whole forest are {@code 1 .. 2N} without gaps; roots follow one another.
 * Sibling order is the order of {@code left}. Beyond the manual: {@code arborDepth} (for
 * depth-limited reads and {@link #findNode}); a root's {@code parent} is null (the manual writes
 * 0, which reads take for null). Authoritative fields: {@code left} and {@code right}; {@code
 * parent} and {@code arborDepth} are derived from the nesting of the intervals. Reads of the
 * manual's documents, which keep no depth, count a node's depth from the intervals around it;
 * changes keep each document's convention (a depth where the document a node is placed by has
 * one, none where it has none; {@link NestedSetPlans#movedDepths}), so that no depth is wrong and every node
 * with a depth has descendants with depths (which depth-limited reads rely on).
 *
 * <p>Indexes: {@code {left: 1, right: 1}} (descendants and ancestors by interval, shifts of {@code
 * left}), {@code {right: 1}} (shifts of {@code right}), {@code {parent: 1, left: 1}} (children in
 * order).
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
 * <caption>round trips (rt) and documents read / written; n = subtree size, N = forest
 * size</caption>
 * <tr><th>operation<th>rt<th>read<th>written
 * <tr><td>find, depth<td>1 (2 without {@code arborDepth}: the enclosing intervals counted)<td>1<td>0
 * <tr><td>children, roots<td>1 (2 for a leaf)<td>children<td>0
 * <tr><td>ancestors<td>2<td>d+1 (index keys examined: up to N)<td>0
 * <tr><td>descendants<td>2<td>n+1, already in preorder<td>0
 * <tr><td>isDescendant<td>1<td>2<td>0
 * <tr><td>update<td>2<td>1<td>1 (no journal)
 * <tr><td>insert<td>2 (3 at the last root)<td>2 + the first root<td>1 + every node to the right: up to N
 * <tr><td>move<td>2<td>2 + the first root<td>the subtree twice + every node between old and new place: up to 2N
 * <tr><td>delete<td>2 (3 for a subtree: its interval's nodes counted first)<td>1 + the first root<td>n deleted + every node to the right: up to N
 * <tr><td>subtree, descendantNodes<td>2<td>n+1, already in preorder<td>0
 * <tr><td>descendantNodes with a filter<td>3<td>n structures + matches<td>0
 * <tr><td>childNodes (a page)<td>2<td>page + 1<td>0
 * <tr><td>ancestorNodes<td>3<td>d+1 (index keys examined: up to N)<td>0
 * <tr><td>descendantCount<td>1<td>1 ({@code (right - left - 1) / 2})<td>0
 * <tr><td>childCount, isLeaf<td>1 (2 when 0)<td>0 (a count)<td>0
 * <tr><td>siblings, previous/next<td>2<td>siblings + 1<td>0
 * <tr><td>subtreeFilter<td>1<td>1<td>0
 * <tr><td>delete lifting children<td>2<td>1 + the first root<td>n + every node to the right: up to N
 * </table>
 *
 * <p>The first read of an insert, move or delete also reads, in the same query, the documents
 * whose {@code left} is 1 or below: more than one numbered 1 are several trees each numbered
 * from 1 (django-mptt's {@code tree_id}), any below 1 are broken numbers that a move, which
 * negates its subtree's numbers, would take for its own; the change is refused before anything
 * is written. What that read returned is held against the numbering too ({@link
 * NestedSetGuards}): an interval that is none, or two that overlap or share a number, refuse the
 * change naming the node.
 *
 * <p>Choose it for static trees read by subtree: the manual finds it "fast and efficient for
 * finding subtrees but inefficient for modifying the tree structure".
 *
 * <p>This class holds the fields, indexes and documents; the work is split by concern: the plans
 * of changes in {@link NestedSetPlans} (what their first read tells about the numbering in
 * {@link NestedSetGuards}), the reads in {@link NestedSetReads}, {@code check()} and {@code
 * repair()} in {@link NestedSetChecks}.
 */
final class NestedSetLayout implements Layout {
  private final LayoutContext context;
  final String parentField;
  final String leftField;
  final String rightField;
  final String depthField;
  /** The projection of the structural fields. */
  final Bson structure;
  /** The plans of changes. */
  private final NestedSetPlans plans;
  /** The reads. */
  private final NestedSetReads reads;
  /** check() and repair(). */
  private final NestedSetChecks checks;

  NestedSetLayout(LayoutContext context) {
    this.context = context;
    this.parentField = context.names().parent;
    this.leftField = context.names().left;
    this.rightField = context.names().right;
    this.depthField = context.names().depth;
    this.structure = fields(parentField, leftField, rightField, depthField);
    this.plans = new NestedSetPlans(this);
    this.reads = new NestedSetReads(this);
    this.checks = new NestedSetChecks(this);
  }

  @Override
  public LayoutContext context() {
    return context;
  }

  @Override
  public TreePattern pattern() {
    return TreePattern.NESTED_SETS;
  }

  @Override
  public @Nullable String layoutProblem(Document d) {
    for (String f : List.of(leftField, rightField, depthField)) {
      if (!(d.get(f) instanceof Number)) {
        return f + " is not a number: " + d.get(f);
      }
    }
    return isReference(d.get(parentField)) ? null : "parent is not an id: " + d.get(parentField);
  }

  /**
   * As {@link #layoutProblem}, but a document may lack {@code arborDepth} (null or missing) and a
   * root may have the manual's {@code parent: 0}: the manual's own documents take changes as they
   * are ({@link #planInsert}, {@link #planMove}, {@link #planLift} keep each document's
   * convention).
   */
  @Override
  public @Nullable String changeProblem(Document d) {
    for (String f : List.of(leftField, rightField)) {
      if (!(d.get(f) instanceof Number)) {
        return f + " is not a number: " + d.get(f);
      }
    }
    if (d.get(depthField) != null && !(d.get(depthField) instanceof Number)) {
      return depthField + " is not a number: " + d.get(depthField);
    }
    Object parent = d.get(parentField);
    return isReference(parent) || manualRoot(d) ? null : "parent is not an id: " + parent;
  }

  @Override
  public List<IndexModel> indexes() {
    return List.of(
        new IndexModel(Indexes.ascending(leftField, rightField)),
        new IndexModel(Indexes.ascending(rightField)),
        new IndexModel(Indexes.ascending(parentField, leftField)));
  }

  @Override
  public void planInsert(Change c, String id, Position position, Map<String, Object> attributes) {
    plans.planInsert(c, id, position, attributes);
  }

  @Override
  public void planMove(Change c, String id, Position position) {
    plans.planMove(c, id, position);
  }

  /**
   * The nodes of the subtree whose interval is {@code [left, right]}: {@code left} in that range,
   * a tight range of the {@code {left: 1, right: 1}} index ({@code right} follows from it).
   */
  Bson subtree(long left, long right) {
    return and(gte(leftField, left), lte(leftField, right));
  }

  @Override
  public long planDelete(Change c, String id) {
    return plans.planDelete(c, id);
  }

  @Override
  public void planLift(Change c, String id) {
    plans.planLift(c, id);
  }

  @Override
  public Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
    return reads.subtreeRows(r, id, maxDepth, withAttributes);
  }

  @Override
  public ChildGroup childGroup() {
    return new ChildGroup(structure, d -> eq(parentField, idOf(d)), leftField,
        d -> parentOf(d), d -> d.get(depthField) instanceof Number n ? n.intValue() : -1);
  }

  @Override
  public long childCountOf(Reads r, String id) {
    return reads.childCountOf(r, id);
  }

  @Override
  public long descendantCountOf(Reads r, String id) {
    return reads.descendantCountOf(r, id);
  }

  @Override
  public Bson subtreeFilter(Reads r, String id) {
    return reads.subtreeFilter(r, id);
  }

  @Override
  public Optional<Node> findNode(Reads r, String id) {
    return reads.findNode(r, id);
  }

  @Override
  public List<String> rootIds(Reads r) {
    return reads.rootIds(r);
  }

  @Override
  public PreorderCursor preorder(Reads r) {
    return reads.preorder(r);
  }

  @Override
  public List<String> childIds(Reads r, String id) {
    return reads.childIds(r, id);
  }

  @Override
  public List<String> ancestorIds(Reads r, String id) {
    return reads.ancestorIds(r, id);
  }

  @Override
  public List<String> descendantIds(Reads r, String id, int maxDepth) {
    return reads.descendantIds(r, id, maxDepth);
  }

  @Override
  public int depthOf(Reads r, String id) {
    return reads.depthOf(r, id);
  }

  @Override
  public boolean descends(Reads r, String id, String ancestorId) {
    return reads.descends(r, id, ancestorId);
  }

  @Override
  public Iterable<Document> documentsFor(Tree tree) {
    List<Document> docs = new ArrayList<>(tree.size());
    Deque<Document> open = new ArrayDeque<>();
    long counter = 0;
    for (Node e : tree.entries()) {
      while (!open.isEmpty() && num(open.peek(), depthField) >= e.depth()) {
        open.pop().put(rightField, ++counter);
      }
      Document d = context.newDocument(e.id(), new Document(parentField, e.parentId())
          .append(leftField, ++counter).append(rightField, 0L).append(depthField, (long) e.depth()),
          e.attributes());
      open.push(d);
      docs.add(d);
    }
    while (!open.isEmpty()) {
      open.pop().put(rightField, ++counter);
    }
    return docs;
  }

  @Override
  public Forest forest(Reads r, boolean withAttributes) {
    return reads.forest(r, withAttributes);
  }

  @Override
  public void planRepair(Change c, List<Document> docs) {
    checks.planRepair(c, docs);
  }

  @Override
  public void checkDocuments(Map<String, Document> byId, List<Problem> problems) {
    checks.checkDocuments(byId, problems);
  }

  /** The parent id of node document {@code d}, null for a root ({@link Layout#stringField}). */
  @Nullable String parentOf(Document d) {
    if (manualRoot(d)) {
      return null;
    }
    return Layout.stringField(d, parentField);
  }

  /**
   * Whether node document {@code d} has the manual's root {@code parent: 0}: a root to reads,
   * changes and {@code check()}; {@code repair()} writes null.
   */
  boolean manualRoot(Document d) {
    return d.get(parentField) instanceof Number n && n.doubleValue() == 0
        && context.ids().isString();
  }

  /** {@link Layout#parentOf}, the manual's root {@code parent: 0} read as no parent. */
  @Override
  public @Nullable String parentOf(Reads r, String id) {
    return parentOf(r.require(id, fields(parentField)));
  }

  static long num(Document d, String field) {
    Object v = d.get(field);
    return v instanceof Number n ? n.longValue() : 0L;
  }
}
