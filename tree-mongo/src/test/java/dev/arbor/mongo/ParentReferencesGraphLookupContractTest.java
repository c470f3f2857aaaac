package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;

/**
 * {@link TreePattern#PARENT_REFERENCES} with {@code $graphLookup} forced on, so that its pipelines
 * run on every server (the probe turns them off on mongo-java-server, whose {@code $graphLookup}
 * ignores {@code startWith}; the pipelines here start from {@code $connectFromField}, where that
 * does not matter).
 */
class ParentReferencesGraphLookupContractTest extends MongoStoreContract {
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
