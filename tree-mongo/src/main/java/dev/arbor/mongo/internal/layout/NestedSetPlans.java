package dev.arbor.mongo.internal.layout;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.or;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.layout.NestedSetLayout.num;

import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.Position;
import dev.arbor.mongo.internal.protocol.Change;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The plans of {@link NestedSetLayout}'s changes: insert, move, delete and lift, each from one
 * first read that also takes the documents whose {@code left} is 1 (several trees each numbered
 * from 1 are refused) and holds what it read against the numbering ({@link NestedSetGuards}),
 * then a constant number of {@code updateMany} shifts. Each document keeps its convention: a
 * depth where the document a node is placed by has one, none where it has none (the manual's
 * documents).
 */
final class NestedSetPlans {
  private final NestedSetLayout layout;
  private final LayoutContext context;
  private final String parentField;
  private final String leftField;
  private final String rightField;
  private final String depthField;
  private final Bson structure;
  /** What a change's first read tells about the numbering. */
  private final NestedSetGuards guards;

  NestedSetPlans(NestedSetLayout layout) {
    this.layout = layout;
    this.context = layout.context();
    this.parentField = layout.parentField;
    this.leftField = layout.leftField;
    this.rightField = layout.rightField;
    this.depthField = layout.depthField;
    this.structure = layout.structure;
    this.guards = new NestedSetGuards(leftField, rightField);
  }

  void planInsert(Change c, String id, Position position, Map<String, Object> attributes) {
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

  void planMove(Change c, String id, Position position) {
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
      c.updateMany(layout.subtree(left, right), Updates.combine(
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
      c.updateMany(layout.subtree(left, right), Updates.inc(depthField, t.depth - depth));
    }
    if (!Objects.equals(t.parent, layout.parentOf(x))) {
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
   * {@link Layout#subjectAndAnchor}, and in the same query the documents whose {@code left} is 1
   * or below (none below in a sound forest; {@link NestedSetGuards} refuses them): in one forest
   * numbered {@code 1..2N} there is one, the first root; two or more are several
   * trees each numbered from 1 (django-mptt keeps them in one collection, told apart by {@code
   * tree_id}), whose numbers a change would shift across, and the change is refused (an index
   * range of {@code left} that holds one key in a sound forest, at most two documents more, no
   * round trip more). What it read is then
   * held against itself ({@link NestedSetGuards#refuseBroken}).
   */
  private Read subjectAndAnchorOfOneForest(Change c, String id, boolean insert,
      Position position, String change) {
    Layout.Found found = layout.subjectAndAnchorWith(c, id, insert, position, structure,
        lte(leftField, 1), 2);
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
   * The document of {@code id}, read in one query with the documents whose {@code left} is 1 or
   * below, which must be one at most ({@link #subjectAndAnchorOfOneForest}).
   */
  private Document requireInOneForest(Change c, String id, String change) {
    List<Document> found = c.find(or(in(ID, List.of(id)), lte(leftField, 1)))
        .projection(structure).limit(3).into(new ArrayList<>());
    Document x = null;
    for (Document d : found) {
      if (id.equals(d.get(ID))) {
        x = d;
      }
    }
    if (x == null) {
      x = c.require(id, structure); // not found, or crowded out by three numbered 1 or below
    }
    refuseSeveralForests(found.size() < 3 || found.contains(x) ? found : null, change);
    List<Document> all = new ArrayList<>(found);
    all.add(x);
    guards.refuseBroken(change, all, true);
    return x;
  }

  /**
   * Refuses a change when {@code read} (or null: more documents whose {@code left} is 1 or below
   * than fit in the read's limit) holds two or more documents whose {@code left} is 1.
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
          + (read == null ? "three or more nodes have " + leftField + " 1 or below"
              : String.join(" and ", firsts) + " have " + leftField + " 1")
          + ": the collection holds several nested-set numberings from 1 (several"
          + " trees, as django-mptt keeps them apart by tree_id), not one forest, and the change"
          + " would shift the numbers of all of them. Give each tree a scope of its own"
          + " (TreeOptions.withScope, its nodes' _id {s: <scope value>, id: <node id>}; see"
          + " docs/data-api.md, \"Several trees in one collection\") or number them as one"
          + " forest" + (read == null ? " (numbers below 1 are broken ones: repair() renumbers"
              + " intervals that nest)" : "") + "; check() lists the problems. Nothing was"
          + " written.");
    }
  }

  long planDelete(Change c, String id) {
    Document x = requireInOneForest(c, id, "delete '" + id + "'");
    long left = num(x, leftField);
    long right = num(x, rightField);
    long width = right - left + 1;
    if (right > left + 1) {
      // Its interval must hold exactly its descendants: numbers that overlap (a collection
      // written by another tool) would have the delete take nodes of other subtrees.
      long held = c.count(layout.subtree(left, right));
      if (held != width / 2) {
        throw new dev.arbor.core.TreeException("Cannot delete '" + id + "': its interval ["
            + left + ", " + right + "] holds " + held + " nodes where " + width / 2 + " fit:"
            + " the nested-set numbers overlap, repeat or leave gaps; check() lists the problems,"
            + " repair()"
            + " renumbers the tree from its parents. Nothing was written.");
      }
    }
    c.deleteMany(layout.subtree(left, right));
    c.updateMany(gt(leftField, right), Updates.inc(leftField, -width));
    c.updateMany(gt(rightField, right), Updates.inc(rightField, -width));
    return width / 2;
  }

  /**
   * The node is deleted, its descendants' numbers and depths move up by one (one {@code
   * updateMany}), its children take its parent, and every number after its interval moves down by
   * two (two {@code updateMany}): the children end up in its place, in their order.
   */
  void planLift(Change c, String id) {
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
      c.updateMany(eq(parentField, id), Updates.set(parentField, layout.parentOf(x)));
    }
    c.updateMany(gt(leftField, right), Updates.inc(leftField, -2));
    c.updateMany(gt(rightField, right), Updates.inc(rightField, -2));
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
    return new Target(at, layout.parentOf(anchor), s.siblingId(), depth);
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
}
