package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;

/**
 * {@link TreePattern#PARENT_REFERENCES} on one of two trees in one collection with {@code
 * $graphLookup} declared available: a scoped store still walks level by level, so that every
 * query carries the scope.
 */
class ScopedParentReferencesGraphLookupContractTest extends ScopedStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.PARENT_REFERENCES;
  }

  @Override
  ServerCapabilities capabilities(MongoCollection<Document> collection) {
    return new ServerCapabilities(collection, ServerCapabilities.Mode.ON,
        ServerCapabilities.Mode.PROBE);
  }
}
