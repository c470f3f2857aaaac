package dev.arbor.mongo.internal.read;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static com.mongodb.client.model.Filters.in;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;

import com.mongodb.client.model.Filters;
import dev.arbor.core.Node;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Tree;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.layout.Layout;
import dev.arbor.mongo.internal.protocol.Reads;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The reads of node data every pattern shares, built on its layout: a subtree from the layout's
 * rows ({@link Layout#subtreeRows}), a page of children from its sibling group ({@link
 * Layout#childGroup}), the ancestors' documents in one query by {@code _id}. Each runs on
 * the {@link Reads} context the store's protocol hands it.
 */
public final class NodeReads {
  private NodeReads() {}

  /** The subtree of {@code id} down to {@code maxDepth} levels, attributes included. */
  public static Tree subtree(Layout s, Reads r, String id, int maxDepth) {
    Layout.Rows rows = s.subtreeRows(r, id, maxDepth, true);
    Forest forest = new Forest(rows.rows());
    Tree.Builder builder = Tree.builder().add(id, null, rows.rows().get(0).attributes());
    for (String d : forest.preorderBelow(id, maxDepth)) {
      Row row = forest.row(d);
      builder.add(Forest.nodeId(d, row.parent()), row.parent(), row.attributes());
    }
    return builder.build();
  }

  /**
   * The descendants of {@code id} in preorder down to {@code maxDepth} levels; with a checked
   * filter, those that match it, read by {@code _id} in slices after the structure.
   */
  public static List<Node> descendants(Layout s, Reads r, String id, int maxDepth,
      @Nullable Bson checked) {
    Layout.Rows rows = s.subtreeRows(r, id, maxDepth, checked == null);
    Forest forest = new Forest(rows.rows());
    List<String> order = forest.preorderBelow(id, maxDepth);
    Map<String, Map<String, Object>> matched = null;
    if (checked != null) {
      matched = new HashMap<>();
      for (List<String> slice : Queries.slices(order)) {
        for (Document d : r.find(Filters.and(in(ID, slice), checked))) {
          matched.put(idOf(d), s.context().attributesOf(d));
        }
      }
    }
    int base = rows.depth() >= 0 ? rows.depth() : s.depthOf(r, id);
    Map<String, Integer> depths = new HashMap<>();
    depths.put(id, base);
    List<Node> out = new ArrayList<>();
    for (String d : order) {
      Row row = forest.row(d);
      int depth = depths.get(row.parent()) + 1;
      depths.put(d, depth);
      String node = Forest.nodeId(d, row.parent());
      if (matched == null) {
        out.add(new Node(node, row.parent(), depth, row.attributes()));
      } else if (matched.containsKey(d)) {
        out.add(new Node(node, row.parent(), depth, matched.get(d)));
      }
    }
    return out;
  }

  /**
   * A page of children: the document of {@code id} (and of {@code after}) by {@code _id}, then
   * one query of the sibling group in order, from after {@code after}'s place, filtered, limited.
   */
  public static List<Node> childPage(Layout s, Reads r, String id, @Nullable String after,
      int limit, @Nullable Bson filter) {
    Layout.ChildGroup g = s.childGroup();
    Map<String, Document> docs = r.documents(after == null ? List.of(id) : List.of(id, after),
        g.projection());
    Document subject = docs.get(id);
    if (subject == null) {
      throw new NodeNotFoundException(id);
    }
    Bson q = g.children().apply(subject);
    if (after != null) {
      Document a = docs.get(after);
      if (a == null) {
        throw new NodeNotFoundException(after);
      }
      if (!id.equals(g.parent().apply(a))) {
        throw TreeStores.notAChild(after, id);
      }
      q = Filters.and(q, Filters.gt(g.order(), a.get(g.order())));
    }
    if (filter != null) {
      q = Filters.and(q, filter);
    }
    com.mongodb.client.FindIterable<Document> found = r.find(q)
        .sort(com.mongodb.client.model.Sorts.ascending(g.order()));
    if (limit != Integer.MAX_VALUE) {
      found = found.limit(limit);
    }
    List<Document> children = new ArrayList<>();
    found.into(children);
    int depth = (g.depth().applyAsInt(subject) >= 0 ? g.depth().applyAsInt(subject)
        : s.depthOf(r, id)) + 1;
    List<Node> out = new ArrayList<>();
    for (Document d : children) {
      out.add(new Node(Forest.nodeId(idOf(d), id), id, depth,
          s.context().attributesOf(d)));
    }
    return out;
  }

  /** The ancestors of {@code id}, root first, their documents read in one query by id. */
  public static List<Node> ancestors(Layout s, Reads r, String id) {
    List<String> ids = s.ancestorIds(r, id);
    Map<String, Document> docs = ids.isEmpty() ? Map.of() : r.documents(ids, null);
    List<Node> out = new ArrayList<>();
    String parent = null;
    for (String a : ids) {
      Document d = docs.get(a);
      if (d == null) {
        throw new NodeNotFoundException(a); // deleted by a change this read will not accept
      }
      out.add(new Node(a, parent, out.size(), s.context().attributesOf(d)));
      parent = a;
    }
    return out;
  }
}
