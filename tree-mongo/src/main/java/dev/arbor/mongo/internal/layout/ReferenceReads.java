package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.bson.Queries.checkMaxDepth;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.slices;

import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.read.Forest;
import dev.arbor.mongo.internal.read.Row;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * What the two reference layouts share: they store only the links between a node and its parent
 * or children, so every read above or below a node is a recursive walk ({@code $graphLookup} or a
 * level-by-level walk, see {@link Walker}), and every such read is defined by two walks, which
 * the layout gives: {@link Links#ancestorsOf} and {@link Links#subtree}.
 */
final class ReferenceReads {
  /** The two walks of a reference layout. */
  interface Links {
    /**
     * The ancestors of {@code id}, root first.
     *
     * @throws dev.arbor.core.NodeNotFoundException if {@code id} does not exist
     */
    List<String> ancestorsOf(Reads r, String id);

    /**
     * The rows below {@code id} down to {@code maxDepth} levels (at least 1), in any order; they
     * may include {@code id} itself as a root row.
     *
     * @throws dev.arbor.core.NodeNotFoundException if {@code id} does not exist
     */
    List<Row> subtree(Reads r, String id, int maxDepth);
  }

  private final LayoutContext context;
  private final Links links;

  ReferenceReads(LayoutContext context, Links links) {
    this.context = context;
    this.links = links;
  }

  /** @see Layout#descendantIds */
  List<String> descendantIds(Reads r, String id, int maxDepth) {
    if (maxDepth <= 0) {
      r.require(id, fields(ID));
      checkMaxDepth(maxDepth);
      return List.of();
    }
    return new Forest(links.subtree(r, id, maxDepth)).preorderBelow(id, maxDepth);
  }

  /**
   * The recursive read of the structure, then, if asked, the documents of the subtree by {@code
   * _id} in slices (one more query per 20 000 nodes); the top node's depth is not known.
   */
  Layout.Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(id, null, 0, Map.of()));
    if (maxDepth == 0) {
      r.require(id, fields(ID));
    } else {
      for (Row row : links.subtree(r, id, maxDepth)) {
        if (!row.id().equals(id)) {
          rows.add(row);
        }
      }
    }
    if (!withAttributes) {
      return new Layout.Rows(-1, rows);
    }
    List<String> ids = new ArrayList<>();
    for (Row row : rows) {
      ids.add(row.id());
    }
    Map<String, Map<String, Object>> attributes = new HashMap<>();
    for (List<String> slice : slices(ids)) {
      for (Map.Entry<String, Document> e : r.documents(slice, null).entrySet()) {
        attributes.put(e.getKey(), context.attributesOf(e.getValue()));
      }
    }
    List<Row> out = new ArrayList<>();
    for (Row row : rows) {
      out.add(new Row(row.id(), row.parent(), row.order(),
          attributes.getOrDefault(row.id(), Map.of())));
    }
    return new Layout.Rows(-1, out);
  }

  /** @see Layout#descends */
  boolean descends(Reads r, String id, String ancestorId) {
    List<String> ancestors = links.ancestorsOf(r, id);
    r.require(ancestorId, fields(ID));
    return ancestors.contains(ancestorId);
  }
}
