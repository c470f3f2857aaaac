package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;

/**
 * The property test for {@link TreePattern#MATERIALIZED_PATHS} with pipeline updates forced on,
 * each pipeline run by {@link PipelineEmulator} (see {@link
 * MaterializedPathsPipelineContractTest}).
 */
class MaterializedPathsPipelinePropertiesTest extends MongoStoreProperties {
  @Override
  TreePattern pattern() {
    return TreePattern.MATERIALIZED_PATHS;
  }

  @Override
  ServerCapabilities capabilities(MongoCollection<Document> collection) {
    return new ServerCapabilities(collection, ServerCapabilities.Mode.PROBE,
        ServerCapabilities.Mode.ON).client(MongoTestServer.get().client()).isolatedReads(false)
        .sender(StepwiseSender.crashingAfter(-1));
  }

  @Override
  protected int examples() {
    return Integer.getInteger("arbor.qt.examples", 30);
  }
}
