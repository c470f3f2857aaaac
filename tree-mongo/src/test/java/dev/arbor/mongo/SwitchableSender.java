package dev.arbor.mongo;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.internal.protocol.TreeLock;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;

/**
 * A sender a test opens its store with and switches later, for instance after the fixture's load:
 * it sends through its {@link #target}, {@link TreeLock#BULK} until the test sets another. The
 * switch is the test's state; the store's sender itself never changes.
 */
final class SwitchableSender implements TreeLock.Sender {
  /** Where batches and fences go now. */
  volatile TreeLock.Sender target = TreeLock.BULK;

  @Override
  public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
    return target.send(collection, batch);
  }

  @Override
  public BsonDocument fence(MongoCollection<BsonDocument> collection, Bson filter,
      Bson update) {
    return target.fence(collection, filter, update);
  }

  @Override
  public BsonDocument exchange(MongoCollection<BsonDocument> collection, Bson filter,
      Bson update, com.mongodb.client.model.FindOneAndUpdateOptions options) {
    return target.exchange(collection, filter, update, options);
  }
}
