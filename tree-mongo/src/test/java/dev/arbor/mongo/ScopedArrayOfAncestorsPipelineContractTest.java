package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;

/**
 * {@link TreePattern#ARRAY_OF_ANCESTORS} on one of two trees in one collection, with pipeline
 * updates forced on and run step by step (see {@link ArrayOfAncestorsPipelineContractTest}); the
 * scope value is a document, so scoped ids nest one in another.
 */
class ScopedArrayOfAncestorsPipelineContractTest extends ScopedStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.ARRAY_OF_ANCESTORS;
  }

  @Override
  Object value() {
    return new Document("org", "acme").append("n", 7L);
  }

  @Override
  ServerCapabilities capabilities(MongoCollection<Document> collection) {
    return new ServerCapabilities(collection, ServerCapabilities.Mode.PROBE,
        ServerCapabilities.Mode.ON).sender(StepwiseSender.crashingAfter(-1));
  }
}
