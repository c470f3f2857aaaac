package dev.arbor.mongo;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import dev.arbor.mongo.internal.protocol.TreeLock;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;

/**
 * A sender that lets a test act on a holder's commands: {@link #before} sees each batch before it
 * is sent (it may lose it by throwing), {@link #landed} each batch's leading update, or a lone
 * fence's, once the server answered it (the place to deliver a late command or pause the holder).
 */
abstract class LandedHookSender implements TreeLock.Sender {
  /** Before {@code batch} is sent; throws to lose it. */
  void before(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {}

  /** After the command led by {@code update} landed (an empty update: a batch not led by one). */
  abstract void landed(MongoCollection<BsonDocument> coll, Bson update);

  @Override
  public final BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
    before(coll, batch);
    BulkWriteResult r = TreeLock.BULK.send(coll, batch);
    landed(coll, firstUpdate(batch));
    return r;
  }

  @Override
  public final BsonDocument fence(MongoCollection<BsonDocument> coll, Bson filter, Bson update) {
    BsonDocument d = TreeLock.Sender.super.fence(coll, filter, update);
    landed(coll, update);
    return d;
  }

  /** The update of {@code batch}'s first statement, or an empty one. */
  static Bson firstUpdate(TreeLock.Batch batch) {
    return batch.statements().get(0).model() instanceof UpdateOneModel<BsonDocument> u
        && u.getUpdate() != null ? u.getUpdate() : new BsonDocument();
  }
}
