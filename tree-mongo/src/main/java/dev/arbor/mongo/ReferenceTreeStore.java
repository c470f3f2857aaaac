package dev.arbor.mongo;

import static dev.arbor.mongo.Queries.checkMaxDepth;
import static dev.arbor.mongo.Queries.fields;
import static dev.arbor.mongo.Queries.slices;
import com.mongodb.client.MongoCollection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * What the two reference patterns share: they store only the links between a node and its parent
 * or children, so every read above or below a node is a recursive walk ({@code $graphLookup} or a
 * level-by-level walk), and every such read is defined by two walks.
 */
abstract class ReferenceTreeStore extends MongoTreeStore {
  ReferenceTreeStore(MongoCollection<Document> collection, ServerCapabilities capabilities,
      @Nullable View view) {
    super(collection, capabilities, view);
  }

  /**
   * The ancestors of {@code id}, root first.
   *
   * @throws dev.arbor.core.NodeNotFoundException if {@code id} does not exist
   */
  abstract List<String> ancestorsOf(Reads r, String id);

  /**
   * The rows below {@code id} down to {@code maxDepth} levels (at least 1), in any order; they
   * may include {@code id} itself as a root row.
   *
   * @throws dev.arbor.core.NodeNotFoundException if {@code id} does not exist
   */
  abstract List<Row> subtree(Reads r, String id, int maxDepth);

  @Override
  final List<String> ancestorIds(Reads r, String id) {
    return ancestorsOf(r, id);
  }

  @Override
  final List<String> descendantIds(Reads r, String id, int maxDepth) {
    if (maxDepth <= 0) {
      r.require(id, fields(ID));
      checkMaxDepth(maxDepth);
      return List.of();
    }
    return new Forest(subtree(r, id, maxDepth)).preorderBelow(id, maxDepth);
  }

  /**
   * The recursive read of the structure, then, if asked, the documents of the subtree by {@code
   * _id} in slices (one more query per 20 000 nodes); the top node's depth is not known.
   */
  @Override
  final Rows subtreeRows(Reads r, String id, int maxDepth, boolean withAttributes) {
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(id, null, 0, Map.of()));
    if (maxDepth == 0) {
      r.require(id, fields(ID));
    } else {
      for (Row row : subtree(r, id, maxDepth)) {
        if (!row.id().equals(id)) {
          rows.add(row);
        }
      }
    }
    if (!withAttributes) {
      return new Rows(-1, rows);
    }
    List<String> ids = new ArrayList<>();
    for (Row row : rows) {
      ids.add(row.id());
    }
    Map<String, Map<String, Object>> attributes = new java.util.HashMap<>();
    for (List<String> slice : slices(ids)) {
      for (Map.Entry<String, Document> e : r.documents(slice, null).entrySet()) {
        attributes.put(e.getKey(), attributesOf(e.getValue()));
      }
    }
    List<Row> out = new ArrayList<>();
    for (Row row : rows) {
      out.add(new Row(row.id(), row.parent(), row.order(),
          attributes.getOrDefault(row.id(), Map.of())));
    }
    return new Rows(-1, out);
  }

  @Override
  final boolean descends(Reads r, String id, String ancestorId) {
    List<String> ancestors = ancestorsOf(r, id);
    r.require(ancestorId, fields(ID));
    return ancestors.contains(ancestorId);
  }
}
