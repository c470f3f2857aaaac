package dev.arbor.mongo.internal.layout;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.type;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static dev.arbor.mongo.internal.bson.Queries.checkMaxDepth;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.bson.Queries.ids;
import static dev.arbor.mongo.internal.bson.Queries.isNull;
import static dev.arbor.mongo.internal.layout.NestedSetLayout.num;

import com.mongodb.client.model.Sorts;
import dev.arbor.core.Node;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The reads of {@link NestedSetLayout}: by interval ({@code left} in a node's range, the
 * intervals around it) or by {@code parent} (children, roots), each holding what it returned
 * against the intervals, which are authoritative, and refusing naming the node where they
 * disagree or do not nest (collections written by others); depths a document does not keep are
 * counted from the intervals.
 */
final class NestedSetReads {
  private final NestedSetLayout layout;
  private final LayoutContext context;
  private final String parentField;
  private final String leftField;
  private final String rightField;
  private final String depthField;
  private final Bson structure;

  NestedSetReads(NestedSetLayout layout) {
    this.layout = layout;
    this.context = layout.context();
    this.parentField = layout.parentField;
    this.leftField = layout.leftField;
    this.rightField = layout.rightField;
    this.depthField = layout.depthField;
    this.structure = layout.structure;
  }

  /**
   * The node's document, then its descendants by one range of {@code left}; each one's parent is
   * the innermost interval that encloses it (the intervals are authoritative, not the stored
   * {@code parent}). A depth limit is a bound of {@code arborDepth} in the query; on documents
   * without depths the whole subtree is read and the caller cuts it.
   */
  Layout.Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
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
    return new Layout.Rows(x.get(depthField) instanceof Number n ? n.intValue() : -1, rows);
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

  /**
   * A count of the nodes whose {@code parent} is {@code id}; when there are none, the node's
   * document (read anyway, to tell a leaf from a missing node) is held against its interval, as
   * {@link #childIds} does: an interval that holds descendants is a {@code parent} field that
   * disagrees with the intervals, refused naming the node.
   */
  long childCountOf(Reads r, String id) {
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
  long descendantCountOf(Reads r, String id) {
    Document x = r.require(id, structure);
    return (num(x, rightField) - num(x, leftField) - 1) / 2;
  }

  /**
   * {@code {left: [l, r]}}: a range of the {@code left} index, right until the next insert, move
   * or delete before or inside the subtree shifts the numbers.
   */
  Bson subtreeFilter(Reads r, String id) {
    Document x = r.require(id, structure);
    return layout.subtree(num(x, leftField), num(x, rightField));
  }

  Optional<Node> findNode(Reads r, String id) {
    Document d = r.document(id, null);
    if (d == null) {
      return Optional.empty();
    }
    String parent = layout.parentOf(d);
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
  List<String> rootIds(Reads r) {
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
        layout.parentOf(odd); // throws naming the node and repair()
      }
    }
    return roots;
  }

  /**
   * The whole forest by one cursor in {@code left} order, which is preorder: a stack of the open
   * intervals (bounded by the depth) gives each node's parent and depth, as {@link #forest} does
   * (the intervals are authoritative; the stored {@code parent} is not read).
   */
  PreorderCursor preorder(Reads r) {
    // resumed if the server killed it while the consumer was away (idle cursor timeout)
    ResumingCursor cursor = new ResumingCursor(skip -> r.find(NODES)
        .sort(Sorts.ascending(leftField)).skip(skip).batchSize(Preorder.SLICE).cursor(),
        r.retry());
    java.util.ArrayDeque<Document> open = new java.util.ArrayDeque<>();
    return new PreorderCursor() {
      public boolean hasNext() {
        return cursor.hasNext();
      }

      public Node next() {
        Document d = cursor.next();
        String parent = nestedParent(open, d);
        return new Node(Forest.nodeId(idOf(d), parent), parent, open.size() - 1,
            context.attributesOf(d));
      }

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
  List<String> childIds(Reads r, String id) {
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
  List<String> ancestorIds(Reads r, String id) {
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

  List<String> descendantIds(Reads r, String id, int maxDepth) {
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

  int depthOf(Reads r, String id) {
    return (int) depthOf(r, r.require(id, structure));
  }

  boolean descends(Reads r, String id, String ancestorId) {
    Document[] docs = r.requireBoth(id, ancestorId, structure);
    return num(docs[1], leftField) < num(docs[0], leftField)
        && num(docs[0], rightField) < num(docs[1], rightField);
  }

  Forest forest(Reads r, boolean withAttributes) {
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
}
