package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Filters.type;
import static dev.arbor.mongo.internal.bson.Queries.checkMaxDepth;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.ids;
import static dev.arbor.mongo.internal.bson.Queries.isNull;
import static dev.arbor.mongo.internal.bson.Queries.isReference;

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
import dev.arbor.mongo.internal.bson.MistypedId;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.read.Forest;
import dev.arbor.mongo.internal.read.Preorder;
import dev.arbor.mongo.internal.read.PreorderCursor;
import dev.arbor.mongo.internal.read.ResumingCursor;
import dev.arbor.mongo.internal.read.Row;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * one, none where it has none; {@link #movedDepths}), so that no depth is wrong and every node
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
 * whose {@code left} is 1: more than one are several trees each numbered from 1 (django-mptt's
 * {@code tree_id}), and the change is refused before anything is written. What that read returned
 * is held against the numbering too ({@link NestedSetGuards}): an interval that is none, or two
 * that overlap or share a number, refuse the change naming the node.
 *
 * <p>Choose it for static trees read by subtree: the manual finds it "fast and efficient for
 * finding subtrees but inefficient for modifying the tree structure".
 */
final class NestedSetLayout implements Layout {
  private final LayoutContext context;
  private final String parentField;
  private final String leftField;
  private final String rightField;
  private final String depthField;
  /** The projection of the structural fields. */
  private final Bson structure;
  /** What a change's first read tells about the numbering. */
  private final NestedSetGuards guards;

  NestedSetLayout(LayoutContext context) {
    this.context = context;
    this.parentField = context.names().parent;
    this.leftField = context.names().left;
    this.rightField = context.names().right;
    this.depthField = context.names().depth;
    this.structure = fields(parentField, leftField, rightField, depthField);
    this.guards = new NestedSetGuards(leftField, rightField);
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
    return isReference(parent) || parent instanceof Number n && n.doubleValue() == 0
        && context.ids().isString() ? null : "parent is not an id: " + parent;
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
    String change = "insert '" + id + "' at " + position;
    Read read = subjectAndAnchorOfOneForest(c, id, true, position, change);
    Target t = target(c, position, read, change);
    Document structure = new Document(parentField, t.parent).append(leftField, t.at)
        .append(rightField, t.at + 1);
    if (t.depth != null) { // else as its neighbour, without (the manual's documents)
      structure.append(depthField, t.depth);
    }
    // The node first: if the server refuses it (a unique index or a validator of the
    // application's), nothing else was written. The shifts then leave it out.
    c.insert(context.newDocument(id, structure, attributes));
    c.updateMany(and(gte(leftField, t.at), ne(ID, id)), Updates.inc(leftField, 2));
    c.updateMany(and(gte(rightField, t.at), ne(ID, id)), Updates.inc(rightField, 2));
  }

  @Override
  public void planMove(Change c, String id, Position position) {
    String change = "move '" + id + "' to " + position;
    Read read = subjectAndAnchorOfOneForest(c, id, false, position, change);
    if (position instanceof Position.Sibling s && s.siblingId().equals(id)) {
      return;
    }
    Map<String, Document> docs = read.docs();
    Document x = docs.get(id);
    long left = num(x, leftField);
    long right = num(x, rightField);
    Target t = target(c, position, read, change);
    if (t.parent != null) {
      Document p = t.parent.equals(id) ? x : docs.get(t.parentAnchor);
      long pl = p == null ? 0 : num(p, leftField);
      if (t.parent.equals(id) || (left < pl && pl < right)) {
        throw new InvalidMoveException(id, position);
      }
    }
    Long depth = x.get(depthField) instanceof Number n ? n.longValue() : null;
    if (t.at != left && t.at != right + 1) {
      Bson depths = movedDepths(id, depth, t, change);
      long width = right - left + 1;
      long at = t.at > right ? t.at - width : t.at;
      long shift = at - left;
      // 1. take the subtree out of the numbering: negate its numbers
      c.updateMany(subtree(left, right), Updates.combine(
          Updates.mul(leftField, -1), Updates.mul(rightField, -1), depths));
      // 2. close the gap it leaves
      c.updateMany(gt(leftField, right), Updates.inc(leftField, -width));
      c.updateMany(gt(rightField, right), Updates.inc(rightField, -width));
      // 3. open a gap at the target
      c.updateMany(gte(leftField, at), Updates.inc(leftField, width));
      c.updateMany(gte(rightField, at), Updates.inc(rightField, width));
      // 4. put the subtree back, shifted: -v - shift, then negated: v + shift
      c.updateMany(lt(leftField, 0), Updates.combine(
          Updates.inc(leftField, -shift), Updates.inc(rightField, -shift)));
      c.updateMany(lt(leftField, 0), Updates.combine(
          Updates.mul(leftField, -1), Updates.mul(rightField, -1)));
    } else if (depth != null && t.depth != null && t.depth.longValue() != depth) {
      c.updateMany(subtree(left, right), Updates.inc(depthField, t.depth - depth));
    }
    if (!Objects.equals(t.parent, parentOf(x))) {
      c.set(id, Updates.set(parentField, t.parent));
    }
  }

  /**
   * The update of the depths of a moved subtree whose top has depth {@code depth} (null: none
   * stored) and goes to {@code t}: {@code $inc} by the difference when both are known (every
   * descendant of a node with a depth has one); else {@code $unset}, the subtree taking the
   * convention of its new place, where the depths are counted from the intervals (a subtree
   * without depths cannot be given them without reading it).
   *
   * @throws dev.arbor.core.TreeException naming the node, before anything is written, when it
   *     has no depth and its new parent has one (repair() writes every depth)
   */
  private Bson movedDepths(String id, @Nullable Long depth, Target t, String change) {
    if (depth != null && t.depth != null) {
      return Updates.inc(depthField, t.depth - depth);
    }
    if (depth == null && t.depth != null && t.parent != null) {
      throw new dev.arbor.core.TreeException("Cannot " + change + ": node '" + id + "' keeps no "
          + depthField + " (nested sets as the manual writes them) but its new parent '"
          + t.parent + "' does, and the depths of the subtree cannot be written without reading"
          + " it: run check(), which lists the nodes without, and repair(), which writes every"
          + " depth. Nothing was written.");
    }
    return Updates.unset(depthField);
  }

  /**
   * {@link #subjectAndAnchor}, and in the same query the documents whose {@code left} is 1: in one
   * forest numbered {@code 1..2N} there is one, the first root; two or more are several trees each
   * numbered from 1 (django-mptt keeps them in one collection, told apart by {@code tree_id}),
   * whose numbers a change would shift across, and the change is refused (an index point of
   * {@code left}, at most two documents more, no round trip more). What it read is then held
   * against itself ({@link NestedSetGuards#refuseBroken}).
   */
  private Read subjectAndAnchorOfOneForest(Change c, String id, boolean insert,
      Position position, String change) {
    Found found = subjectAndAnchorWith(c, id, insert, position, structure, eq(leftField, 1), 2);
    refuseSeveralForests(found.others(), change);
    List<Document> all = new ArrayList<>(found.docs().values());
    all.addAll(Objects.requireNonNull(found.others()));
    guards.refuseBroken(change, all, true);
    return new Read(found.docs(), all);
  }

  /**
   * What the first read of an insert or move found: the subject's and the anchor's documents by
   * id, and every document it read (those too, the first root).
   */
  private record Read(Map<String, Document> docs, List<Document> all) {}

  /**
   * The document of {@code id}, read in one query with the documents whose {@code left} is 1,
   * which must be one at most ({@link #subjectAndAnchorOfOneForest}).
   */
  private Document requireInOneForest(Change c, String id, String change) {
    List<Document> found = c.find(or(in(ID, List.of(id)), eq(leftField, 1)))
        .projection(structure).limit(3).into(new ArrayList<>());
    Document x = null;
    for (Document d : found) {
      if (id.equals(d.get(ID))) {
        x = d;
      }
    }
    if (x == null) {
      x = c.require(id, structure); // not found, or crowded out by three first roots
    }
    refuseSeveralForests(found.size() < 3 || found.contains(x) ? found : null, change);
    List<Document> all = new ArrayList<>(found);
    all.add(x);
    guards.refuseBroken(change, all, true);
    return x;
  }

  /**
   * Refuses a change when {@code read} (or null: more than fit in the read's limit) holds two or
   * more documents whose {@code left} is 1.
   */
  private void refuseSeveralForests(@Nullable List<Document> read, String change) {
    List<String> firsts = new ArrayList<>();
    if (read != null) {
      for (Document d : read) {
        if (d.get(leftField) instanceof Number n && n.doubleValue() == 1) {
          firsts.add("'" + d.get(ID) + "'");
        }
      }
    }
    if (read == null || firsts.size() > 1) {
      throw new dev.arbor.core.TreeException("Cannot " + change + ": "
          + (read == null ? "three or more nodes" : String.join(" and ", firsts)) + " have "
          + leftField + " 1: the collection holds several nested-set numberings from 1 (several"
          + " trees, as django-mptt keeps them apart by tree_id), not one forest, and the change"
          + " would shift the numbers of all of them. Give each tree a scope of its own"
          + " (TreeOptions.withScope, its nodes' _id {s: <scope value>, id: <node id>}; see"
          + " docs/data-api.md, \"Several trees in one collection\") or number them as one"
          + " forest; check() lists the problems. Nothing was written.");
    }
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
    Document x = requireInOneForest(c, id, "delete '" + id + "'");
    long left = num(x, leftField);
    long right = num(x, rightField);
    long width = right - left + 1;
    if (right > left + 1) {
      // Its interval must hold exactly its descendants: numbers that overlap (a collection
      // written by another tool) would have the delete take nodes of other subtrees.
      long held = c.count(subtree(left, right));
      if (held != width / 2) {
        throw new dev.arbor.core.TreeException("Cannot delete '" + id + "': its interval ["
            + left + ", " + right + "] holds " + held + " nodes where " + width / 2 + " fit:"
            + " the nested-set numbers overlap, repeat or leave gaps; check() lists the problems,"
            + " repair()"
            + " renumbers the tree from its parents. Nothing was written.");
      }
    }
    c.deleteMany(subtree(left, right));
    c.updateMany(gt(leftField, right), Updates.inc(leftField, -width));
    c.updateMany(gt(rightField, right), Updates.inc(rightField, -width));
    return width / 2;
  }

  /**
   * The node is deleted, its descendants' numbers and depths move up by one (one {@code
   * updateMany}), its children take its parent, and every number after its interval moves down by
   * two (two {@code updateMany}): the children end up in its place, in their order.
   */
  @Override
  public void planLift(Change c, String id) {
    Document x = requireInOneForest(c, id, "delete '" + id + "'");
    long left = num(x, leftField);
    long right = num(x, rightField);
    c.deleteMany(eq(ID, id));
    if (right > left + 1) {
      // a node without a depth (the manual's documents): its descendants' depths, if any, are
      // dropped rather than decremented into values for documents that had none
      c.updateMany(and(gt(leftField, left), lt(leftField, right)), Updates.combine(
          Updates.inc(leftField, -1), Updates.inc(rightField, -1),
          x.get(depthField) instanceof Number ? Updates.inc(depthField, -1)
              : Updates.unset(depthField)));
      c.updateMany(eq(parentField, id), Updates.set(parentField, parentOf(x)));
    }
    c.updateMany(gt(leftField, right), Updates.inc(leftField, -2));
    c.updateMany(gt(rightField, right), Updates.inc(rightField, -2));
  }

  /**
   * The node's document, then its descendants by one range of {@code left}; each one's parent is
   * the innermost interval that encloses it (the intervals are authoritative, not the stored
   * {@code parent}). A depth limit is a bound of {@code arborDepth} in the query; on documents
   * without depths the whole subtree is read and the caller cuts it.
   */
  @Override
  public Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
    Bson projection = withAttributes ? null : structure;
    Document x = r.require(id, projection);
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(id, null, 0, withAttributes ? context.attributesOf(x) : Map.of()));
    if (maxDepth > 0) {
      Bson filter = and(gt(leftField, num(x, leftField)), lt(leftField, num(x, rightField)));
      if (maxDepth != Integer.MAX_VALUE && x.get(depthField) instanceof Number depth) {
        filter = and(filter, lte(depthField, depth.longValue() + maxDepth));
      }
      List<Document> docs = r.find(filter).projection(projection).into(new ArrayList<>());
      refuseOverfull(id, num(x, leftField), num(x, rightField), docs.size());
      docs.sort(Comparator.comparingLong(d -> num(d, leftField)));
      Deque<Document> open = new ArrayDeque<>();
      open.push(x);
      for (Document d : docs) {
        String parent = nestedParent(open, d);
        rows.add(new Row(idOf(d), parent, num(d, leftField),
            withAttributes ? context.attributesOf(d) : Map.of()));
      }
    }
    return new Rows(x.get(depthField) instanceof Number n ? n.intValue() : -1, rows);
  }

  /**
   * The parent of {@code d} by the intervals: the innermost of the {@code open} ones (those
   * read before it in {@code left} order, minus those that closed before it) that encloses it;
   * {@code d} is then opened. Null for a root (no interval open).
   *
   * @throws dev.arbor.core.TreeException naming the node if its interval is not a pair of
   *     numbers, left below right, strictly inside the one that encloses it: the numbers overlap
   *     or repeat, and no parent follows from them
   */
  private @Nullable String nestedParent(Deque<Document> open, Document d) {
    long left = num(d, leftField);
    long right = num(d, rightField);
    while (!open.isEmpty() && num(open.peek(), rightField) < left) {
      open.pop();
    }
    Document up = open.peek();
    if (!(d.get(leftField) instanceof Number) || !(d.get(rightField) instanceof Number)
        || left >= right
        || up != null && (left <= num(up, leftField) || right >= num(up, rightField))) {
      throw new dev.arbor.core.TreeException("node '" + d.get(ID) + "' (" + leftField + " "
          + d.get(leftField) + ", " + rightField + " " + d.get(rightField)
          + ") does not nest in the numbering" + (up == null ? "" : ": its interval overlaps or"
              + " repeats that of '" + up.get(ID) + "' [" + num(up, leftField) + ", "
              + num(up, rightField) + "]")
          + "; check() lists the problems (repair() renumbers intervals that nest, not these)");
    }
    // Only the interval is kept open, not the attributes.
    open.push(new Document(ID, d.get(ID)).append(leftField, left).append(rightField, right));
    return up == null ? null : idOf(up);
  }

  @Override
  public ChildGroup childGroup() {
    return new ChildGroup(structure, d -> eq(parentField, idOf(d)), leftField,
        d -> parentOf(d), d -> d.get(depthField) instanceof Number n ? n.intValue() : -1);
  }

  /**
   * A count of the nodes whose {@code parent} is {@code id}; when there are none, the node's
   * document (read anyway, to tell a leaf from a missing node) is held against its interval, as
   * {@link #childIds} does: an interval that holds descendants is a {@code parent} field that
   * disagrees with the intervals, refused naming the node.
   */
  @Override
  public long childCountOf(Reads r, String id) {
    long n = r.count(eq(parentField, id));
    if (n == 0) {
      Document x = r.require(id, fields(leftField, rightField));
      if (num(x, rightField) - num(x, leftField) > 1) {
        throw disagrees(x, "has no node whose " + parentField + " names it, but its interval ["
            + num(x, leftField) + ", " + num(x, rightField) + "] holds descendants");
      }
    }
    return n;
  }

  /** From the node's own interval: {@code (right - left - 1) / 2}, one document read. */
  @Override
  public long descendantCountOf(Reads r, String id) {
    Document x = r.require(id, structure);
    return (num(x, rightField) - num(x, leftField) - 1) / 2;
  }

  /**
   * {@code {left: [l, r]}}: a range of the {@code left} index, right until the next insert, move
   * or delete before or inside the subtree shifts the numbers.
   */
  @Override
  public Bson subtreeFilter(Reads r, String id) {
    Document x = r.require(id, structure);
    return subtree(num(x, leftField), num(x, rightField));
  }

  @Override
  public Optional<Node> findNode(Reads r, String id) {
    Document d = r.document(id, null);
    if (d == null) {
      return Optional.empty();
    }
    String parent = parentOf(d);
    long depth = depthOf(r, d);
    if ((parent == null) != (depth == 0)) {
      // Two fields derived from the intervals that contradict each other (a table without
      // parent, or a stale one): whichever is wrong, the node is not answered with it.
      throw new dev.arbor.core.TreeException("node '" + id + "' has " + parentField + " "
          + (parent == null ? "null" : "'" + parent + "'") + " but depth " + depth
          + (d.get(depthField) instanceof Number ? "" : " (counted from the intervals)")
          + ": the fields derived from the nested-set intervals disagree; check() lists the"
          + " problems, repair() rewrites them from the intervals");
    }
    return Optional.of(new Node(id, parent, (int) depth, context.attributesOf(d)));
  }

  /**
   * The nodes without a parent, in {@code left} order, whose intervals must follow one another:
   * one that lies inside another is a {@code parent} that disagrees with the intervals (a table
   * without the field, or a stale one), refused naming it rather than answered as a root.
   */
  @Override
  public List<String> rootIds(Reads r) {
    // parent null (or missing), or 0, the manual's way of writing a root, where ids are strings
    // (in a tree of long ids, 0 is a node's id)
    List<Document> found = r.find(context.ids().isString()
            ? and(NODES, in(parentField, java.util.Arrays.asList(null, 0))) : isNull(parentField))
        .projection(fields(leftField, rightField)).sort(Sorts.ascending(leftField))
        .into(new ArrayList<>());
    List<String> roots = new ArrayList<>(found.size());
    Document before = null;
    for (Document d : found) {
      if (before != null && num(d, leftField) <= num(before, rightField)) {
        throw disagrees(d, "has no " + parentField + ", but its interval [" + num(d, leftField)
            + ", " + num(d, rightField) + "] lies inside that of '" + before.get(ID) + "' ["
            + num(before, leftField) + ", " + num(before, rightField) + "]");
      }
      roots.add(idOf(d));
      before = d;
    }
    if (roots.isEmpty()) {
      // No root: an empty tree, or documents whose roots name a parent that is no id (a reader
      // must not take the tree for empty)
      Document odd = r.find(and(NODES, ne(parentField, null),
          not(type(parentField, org.bson.BsonType.STRING))))
          .projection(fields(parentField)).limit(1).first();
      if (odd != null) {
        parentOf(odd); // throws naming the node and repair()
      }
    }
    return roots;
  }

  /**
   * The whole forest by one cursor in {@code left} order, which is preorder: a stack of the open
   * intervals (bounded by the depth) gives each node's parent and depth, as {@link #forest} does
   * (the intervals are authoritative; the stored {@code parent} is not read).
   */
  @Override
  public PreorderCursor preorder(Reads r) {
    // resumed if the server killed it while the consumer was away (idle cursor timeout)
    ResumingCursor cursor = new ResumingCursor(skip -> r.find(NODES)
        .sort(Sorts.ascending(leftField)).skip(skip).batchSize(Preorder.SLICE).cursor(),
        r.retry());
    java.util.ArrayDeque<Document> open = new java.util.ArrayDeque<>();
    return new PreorderCursor() {
      @Override
      public boolean hasNext() {
        return cursor.hasNext();
      }

      @Override
      public Node next() {
        Document d = cursor.next();
        String parent = nestedParent(open, d);
        return new Node(Forest.nodeId(idOf(d), parent), parent, open.size() - 1,
            context.attributesOf(d));
      }

      @Override
      public void close() {
        cursor.close();
      }
    };
  }

  /**
   * The nodes whose {@code parent} is {@code id}, in {@code left} order (the {@code {parent: 1,
   * left: 1}} index). What the read returns is held against the intervals: children whose
   * intervals overlap, or a node without children whose interval holds descendants, are a
   * {@code parent} that disagrees with the intervals, refused naming the node (free: the
   * children's numbers come with them, and a leaf's document is read anyway).
   */
  @Override
  public List<String> childIds(Reads r, String id) {
    List<Document> found = r.find(eq(parentField, id)).projection(fields(leftField, rightField))
        .sort(Sorts.ascending(leftField)).into(new ArrayList<>());
    if (found.isEmpty()) {
      Document x = r.require(id, fields(leftField, rightField));
      if (num(x, rightField) - num(x, leftField) > 1) {
        throw disagrees(x, "has no node whose " + parentField + " names it, but its interval ["
            + num(x, leftField) + ", " + num(x, rightField) + "] holds descendants");
      }
      return List.of();
    }
    List<String> children = new ArrayList<>(found.size());
    Document before = null;
    for (Document d : found) {
      if (before != null && num(d, leftField) <= num(before, rightField)) {
        throw disagrees(d, "has " + parentField + " '" + id + "', but its interval ["
            + num(d, leftField) + ", " + num(d, rightField) + "] lies inside that of its"
            + " sibling '" + before.get(ID) + "' [" + num(before, leftField) + ", "
            + num(before, rightField) + "]");
      }
      children.add(idOf(d));
      before = d;
    }
    return children;
  }

  /**
   * A read refused because the {@code parent} it read disagrees with the intervals, which are
   * authoritative.
   */
  private dev.arbor.core.TreeException disagrees(Document d, String what) {
    return new dev.arbor.core.TreeException("node '" + d.get(ID) + "' " + what + ": its "
        + parentField + " disagrees with the nested-set intervals, which are authoritative"
        + " (snapshot() and entries() follow them); check() lists the problems, repair()"
        + " rewrites " + parentField + " from the intervals");
  }

  /**
   * The intervals around the node's, in {@code left} order; each must lie strictly inside the
   * one before (a chain, as intervals that nest are): a read that returns two that do not, such
   * as the roots of two trees each numbered from 1, is refused naming the node (free: their
   * numbers come with them).
   */
  @Override
  public List<String> ancestorIds(Reads r, String id) {
    Document x = r.require(id, structure);
    List<Document> found = r.find(and(lt(leftField, num(x, leftField)),
        gt(rightField, num(x, rightField)))).projection(fields(leftField, rightField))
        .sort(Sorts.ascending(leftField)).into(new ArrayList<>());
    List<String> ids = new ArrayList<>(found.size());
    Document before = null;
    for (Document d : found) {
      if (before != null && (num(d, leftField) <= num(before, leftField)
          || num(d, rightField) >= num(before, rightField))) {
        throw new dev.arbor.core.TreeException("node '" + id + "': the intervals around its ["
            + num(x, leftField) + ", " + num(x, rightField) + "] do not nest ('"
            + before.get(ID) + "' [" + num(before, leftField) + ", " + num(before, rightField)
            + "], '" + d.get(ID) + "' [" + num(d, leftField) + ", " + num(d, rightField)
            + "]): the nested-set numbers overlap or repeat (several trees each numbered from 1"
            + " in one collection?); check() lists the problems");
      }
      ids.add(idOf(d));
      before = d;
    }
    return ids;
  }

  @Override
  public List<String> descendantIds(Reads r, String id, int maxDepth) {
    Document x = r.require(id, structure);
    checkMaxDepth(maxDepth);
    if (maxDepth == 0) {
      return List.of();
    }
    Bson filter = and(gt(leftField, num(x, leftField)), lt(leftField, num(x, rightField)));
    if (maxDepth != Integer.MAX_VALUE && !(x.get(depthField) instanceof Number)) {
      // No depths (documents written by another tool): the levels counted from the intervals
      List<Document> docs = r.find(filter).projection(fields(leftField, rightField))
          .sort(Sorts.ascending(leftField)).into(new ArrayList<>());
      refuseOverfull(id, num(x, leftField), num(x, rightField), docs.size());
      Deque<Document> open = new ArrayDeque<>();
      open.push(x);
      List<String> ids = new ArrayList<>();
      for (Document d : docs) {
        nestedParent(open, d);
        if (open.size() - 1 <= maxDepth) {
          ids.add(idOf(d));
        }
      }
      return ids;
    }
    if (maxDepth != Integer.MAX_VALUE) {
      filter = and(filter, lte(depthField, num(x, depthField) + maxDepth));
    }
    List<String> ids = ids(r.find(filter).projection(fields(ID))
        .sort(Sorts.ascending(leftField)));
    refuseOverfull(id, num(x, leftField), num(x, rightField), ids.size());
    return ids;
  }

  /**
   * Refuses a read of the descendants of {@code id} that found more nodes inside its interval
   * {@code [left, right]} than fit there ({@code (right - left - 1) / 2}, each descendant taking
   * two of its numbers): the numbers overlap or repeat, and some of the nodes belong elsewhere
   * (another tree numbered from 1 too). A check of what the read returned, free.
   */
  private void refuseOverfull(String id, long left, long right, long held) {
    if (held > (right - left - 1) / 2) {
      throw new dev.arbor.core.TreeException("node '" + id + "': its interval [" + left + ", "
          + right + "] holds " + held + " nodes where at most " + (right - left - 1) / 2
          + " fit: the nested-set numbers overlap or repeat (several trees each numbered from 1"
          + " in one collection?); check() lists the problems");
    }
  }

  @Override
  public int depthOf(Reads r, String id) {
    return (int) depthOf(r, r.require(id, structure));
  }

  @Override
  public boolean descends(Reads r, String id, String ancestorId) {
    Document[] docs = r.requireBoth(id, ancestorId, structure);
    return num(docs[1], leftField) < num(docs[0], leftField)
        && num(docs[0], rightField) < num(docs[1], rightField);
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
    List<Document> docs = r.find(NODES).projection(withAttributes ? null : structure)
        .into(new ArrayList<>());
    // The structure from the intervals, which are authoritative: parent is derived (a table
    // without it, or with a stale one, reads as its numbers say), sorted here rather than by the
    // server.
    docs.sort(Comparator.comparingLong(d -> num(d, leftField)));
    Deque<Document> open = new ArrayDeque<>();
    List<Row> rows = new ArrayList<>(docs.size());
    for (Document d : docs) {
      String parent = nestedParent(open, d);
      rows.add(new Row(idOf(d), parent, num(d, leftField),
          withAttributes ? context.attributesOf(d) : Map.of()));
    }
    return new Forest(rows);
  }

  /**
   * Intervals are authoritative: when they are distinct and nest, repair renumbers them {@code
   * 1..2N} in their order (closing gaps) and rewrites {@code parent} and {@code arborDepth} from
   * the nesting (the manual's root {@code parent: 0} becomes null). Overlapping or repeated numbers
   * are left for {@code check()} to report.
   */
  @Override
  public void planRepair(Change c, List<Document> docs) {
    java.util.TreeMap<Long, Document> byNumber = new java.util.TreeMap<>();
    for (Document d : docs) {
      if (!(d.get(leftField) instanceof Number) || !(d.get(rightField) instanceof Number)
          || num(d, leftField) >= num(d, rightField)
          || byNumber.put(num(d, leftField), d) != null
              || byNumber.put(num(d, rightField), d) != null) {
        return; // not derivable without guessing
      }
    }
    Map<Long, Long> renumber = new HashMap<>();
    long next = 0;
    for (Long v : byNumber.keySet()) {
      renumber.put(v, ++next);
    }
    List<Document> sorted = new ArrayList<>(docs);
    sorted.sort(Comparator.comparingLong(d -> num(d, leftField)));
    Deque<Document> open = new ArrayDeque<>();
    List<Runnable> writes = new ArrayList<>();
    for (Document d : sorted) {
      while (!open.isEmpty() && num(open.peek(), rightField) < num(d, leftField)) {
        open.pop();
      }
      if (!open.isEmpty() && num(d, rightField) > num(open.peek(), rightField)) {
        return; // overlapping intervals
      }
      String parent = open.isEmpty() ? null : idOf(open.peek());
      long left = renumber.get(num(d, leftField));
      long right = renumber.get(num(d, rightField));
      if (left != num(d, leftField) || right != num(d, rightField)
          || !Objects.equals(parent, d.get(parentField))
          || !(d.get(depthField) instanceof Number) || num(d, depthField) != open.size()) {
        long depth = open.size();
        if (d.get(parentField) instanceof MistypedId m && m.value() instanceof Number) {
          // a long written as a double: a set to an equal value may leave it as it is
          writes.add(() -> c.set(d.get(ID), Updates.unset(parentField)));
        }
        writes.add(() -> c.set(d.get(ID), Updates.combine(Updates.set(leftField, left),
            Updates.set(rightField, right), Updates.set(parentField, parent),
                Updates.set(depthField, depth))));
      }
      open.push(d);
    }
    writes.forEach(Runnable::run); // only once the whole numbering is known to nest
  }

  @Override
  public void checkDocuments(Map<String, Document> byId, List<Problem> problems) {
    List<Document> docs = new ArrayList<>();
    for (Document d : byId.values()) {
      String id = idOf(d);
      if (!(d.get(leftField) instanceof Number) || !(d.get(rightField) instanceof Number)) {
        problems.add(new Problem(id, "left/right missing or not numbers: " + d.get(leftField) + "/"
            + d.get(rightField)));
      } else if (num(d, leftField) >= num(d, rightField)) {
        problems.add(new Problem(id, "left " + d.get(leftField) + " is not below right "
            + d.get(rightField)));
      } else {
        docs.add(d);
      }
    }
    // The numbers are 1 .. 2N, each used once. Who uses each: an array for those in range (a
    // map of a node per number would dwarf the nodes of a large tree), a map for the others.
    int max = 2 * docs.size();
    int[] owner = new int[max + 1]; // index in docs + 1, 0 for unused
    Map<Long, Integer> outside = new HashMap<>();
    for (int i = 0; i < docs.size(); i++) {
      Document d = docs.get(i);
      for (String f : List.of(leftField, rightField)) {
        long v = num(d, f);
        Integer other;
        if (v >= 1 && v <= max) {
          other = owner[(int) v] == 0 ? null : owner[(int) v] - 1;
          owner[(int) v] = i + 1;
        } else {
          other = outside.put(v, i);
        }
        if (other != null) {
          problems.add(new Problem(idOf(d), f + " " + v
              + " is also used by '" + idOf(docs.get(other)) + "'"));
        }
      }
    }
    for (int v = 1; v <= max; v++) {
      if (owner[v] == 0) {
        problems.add(new Problem(docs.isEmpty() ? "" : idOf(docs.get(0)),
            "the numbering leaves a gap at " + v + " (expected 1.." + 2L * docs.size() + ")"));
        break;
      }
    }
    // Intervals nest; parent and depth agree with the nesting.
    docs.sort(Comparator.comparingLong(d -> num(d, leftField)));
    Deque<Document> open = new ArrayDeque<>();
    for (Document d : docs) {
      while (!open.isEmpty() && num(open.peek(), rightField) < num(d, leftField)) {
        open.pop();
      }
      String id = idOf(d);
      Document enclosing = open.peek();
      if (enclosing != null && num(d, rightField) > num(enclosing, rightField)) {
        problems.add(new Problem(id, "interval " + num(d, leftField) + "-" + num(d, rightField)
            + " overlaps '" + idOf(enclosing) + "' " + num(enclosing, leftField) + "-"
            + num(enclosing, rightField)));
        continue;
      }
      String expectedParent = enclosing == null ? null : idOf(enclosing);
      if (d.get(parentField) instanceof MistypedId m) {
        problems.add(new Problem(id, parentField + " is not " + MistypedId.article(m.type())
            + ": " + m + " (repair() rewrites it from the intervals: " + expectedParent + ")"));
      } else if (!Objects.equals(expectedParent, d.get(parentField))) {
        problems.add(new Problem(id, "parent " + d.get(parentField)
            + " disagrees with the intervals (enclosed by " + expectedParent + ")"));
      }
      if (!(d.get(depthField) instanceof Number) || num(d, depthField) != open.size()) {
        problems.add(new Problem(id, "depth " + d.get(depthField)
            + " disagrees with the intervals (" + open.size() + ")"));
      }
      open.push(d);
    }
  }

  /**
   * Where a position puts a node: its future {@code left}, parent and depth. The last root is
   * read for a last root position, and held with what the first read found against the
   * numbering ({@link NestedSetGuards#refuseBroken}).
   */
  private Target target(Change c, Position position, Read read, String change) {
    // A new place keeps the convention of the document it is found by: a depth if that has one,
    // none if not (the manual's documents keep none; the first root tells for a root).
    Long rootDepth = 0L;
    for (Document d : read.all()) {
      if (num(d, leftField) == 1 && !(d.get(depthField) instanceof Number)) {
        rootDepth = null;
      }
    }
    if (position instanceof Position.Root r) {
      if (r.first()) {
        return new Target(1, null, null, rootDepth);
      }
      Document last = c.find(NODES).projection(fields(leftField, rightField))
          .sort(Sorts.descending(rightField))
          .limit(1).first();
      List<Document> all = new ArrayList<>(read.all());
      all.add(last);
      guards.refuseBroken(change, all, true);
      return new Target(last == null ? 1 : num(last, rightField) + 1, null, null, rootDepth);
    }
    Document anchor = read.docs().get(position.anchor());
    Long depth = anchor.get(depthField) instanceof Number n ? n.longValue() : null;
    if (position instanceof Position.Child child) {
      long at = child.first() ? num(anchor, leftField) + 1 : num(anchor, rightField);
      return new Target(at, child.parentId(), child.parentId(), depth == null ? null : depth + 1);
    }
    Position.Sibling s = (Position.Sibling) position;
    long at = s.before() ? num(anchor, leftField) : num(anchor, rightField) + 1;
    // The parent of a sibling position is inside the moved subtree exactly when the sibling is.
    return new Target(at, parentOf(anchor), s.siblingId(), depth);
  }

  /**
   * @param at the future {@code left}
   * @param parent the future parent, null for a root
   * @param parentAnchor a document in {@code docs} that lies inside the moved subtree exactly when
   *     the target does (the parent for a child position, the sibling for a sibling position)
   * @param depth the future depth, null where the document the position is found by keeps none
   *     (the manual's documents)
   */
  private record Target(long at, @Nullable String parent, @Nullable String parentAnchor,
      @Nullable Long depth) {}

  /**
   * The depth of node document {@code d}, which reads of depths and depth limits trust.
   *
   * @throws dev.arbor.core.TreeException naming the node if it has none (nested sets written by
   *     another tool), rather than a depth of 0 and subtrees cut short
   */
  private long depthOf(Reads r, Document d) {
    if (d.get(depthField) instanceof Number n) {
      return n.longValue();
    }
    // Nested sets written by another tool (the manual's keep no depth): the number of intervals
    // that enclose the node's, one count (index keys examined: up to N), only then.
    if (!(d.get(leftField) instanceof Number) || !(d.get(rightField) instanceof Number)) {
      throw new dev.arbor.core.TreeException("node '" + d.get(ID) + "' has no numeric "
          + depthField + " (" + d.get(depthField) + ") nor an interval to count it from ("
          + leftField + " " + d.get(leftField) + ", " + rightField + " " + d.get(rightField)
          + "): check() lists the problems");
    }
    return r.count(and(lt(leftField, num(d, leftField)), gt(rightField, num(d, rightField))));
  }

  /** The parent id of node document {@code d}, null for a root ({@link Layout#stringField}). */
  private @Nullable String parentOf(Document d) {
    Object v = d.get(parentField);
    if (v instanceof Number n && n.doubleValue() == 0 && context.ids().isString()) {
      return null; // the manual's root: parent 0 (check() lists it, repair() writes null)
    }
    return Layout.stringField(d, parentField);
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
