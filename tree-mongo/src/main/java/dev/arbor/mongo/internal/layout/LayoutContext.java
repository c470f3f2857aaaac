package dev.arbor.mongo.internal.layout;

import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.FieldNames;
import dev.arbor.mongo.internal.bson.NodeDocuments;
import dev.arbor.mongo.internal.bson.NodeIds;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.Map;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Layout} is built from, fixed when its store is opened and shared by the store's
 * {@code withSession} views: the names of the structural fields, how node ids are stored, the
 * tree's scope in the collection, the sibling ranks, the mapping between nodes and documents, the
 * server's capabilities, the collection's name (for {@code $graphLookup}'s {@code from}) and the
 * {@link Walker} of recursive reads. Immutable (the capabilities it holds are thread-safe).
 *
 * @param names the names of the structural fields ({@link TreeOptions#withFieldName})
 * @param ids how node ids are stored ({@link TreeOptions#withIdType})
 * @param scope the tree of the collection the store sees, or null: the collection holds one tree
 * @param ranks the sibling order in the rank field
 * @param documents attribute checks and the mapping between nodes and documents
 * @param capabilities what the server runs, and the store's bounds
 * @param collectionName the collection's name
 * @param walker how reference patterns walk: one {@code $graphLookup} or level by level
 */
public record LayoutContext(FieldNames names, NodeIds ids, @Nullable Scope scope, Ranks ranks,
    NodeDocuments documents, ServerCapabilities capabilities, String collectionName,
    Walker walker) {

  /** @see NodeDocuments#attributesOf */
  public Map<String, Object> attributesOf(Document d) {
    return documents.attributesOf(d);
  }

  /** @see NodeDocuments#newDocument */
  Document newDocument(String id, Document structure, Map<String, ?> attributes) {
    return NodeDocuments.newDocument(id, structure, attributes);
  }
}
