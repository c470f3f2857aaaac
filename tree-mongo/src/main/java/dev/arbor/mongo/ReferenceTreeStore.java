package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import java.util.List;
import java.util.Set;
import org.bson.Document;

/**
 * What the two reference patterns share: they store only the links between a node and its parent
 * or children, so every read above or below a node is a recursive walk ({@code $graphLookup} or a
 * level-by-level walk), and every such read is defined by two walks.
 */
abstract class ReferenceTreeStore extends MongoTreeStore {
  ReferenceTreeStore(MongoCollection<Document> collection, ServerCapabilities capabilities,
      Set<String> structuralFields) {
    super(collection, capabilities, structuralFields);
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

  @Override
  final boolean descends(Reads r, String id, String ancestorId) {
    List<String> ancestors = ancestorsOf(r, id);
    r.require(ancestorId, fields(ID));
    return ancestors.contains(ancestorId);
  }
}
