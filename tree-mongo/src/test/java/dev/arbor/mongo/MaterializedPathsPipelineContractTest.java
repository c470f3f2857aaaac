package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;

/**
 * {@link TreePattern#MATERIALIZED_PATHS} with pipeline updates forced on, as on MongoDB 4.2 and
 * later: mongo-java-server has none, so every step is sent document by document and its pipeline
 * run by {@link PipelineEmulator}, with MongoDB's documented semantics. The whole contract (hostile
 * ids, deep chains) and the stored-layout oracle then check the plans a real server would run.
 */
class MaterializedPathsPipelineContractTest extends MongoStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.MATERIALIZED_PATHS;
  }

  @Override
  ServerCapabilities capabilities(MongoCollection<Document> collection) {
    return new ServerCapabilities(collection, ServerCapabilities.Mode.PROBE,
        ServerCapabilities.Mode.ON).sender(StepwiseSender.crashingAfter(-1));
  }
}
