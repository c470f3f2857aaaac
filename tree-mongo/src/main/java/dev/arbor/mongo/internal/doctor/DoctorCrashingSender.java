package dev.arbor.mongo.internal.doctor;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The sender of {@link Doctor}'s crash-recovery check: it stops as a holder that dies half-way
 * through a change. It sends the first batch that has steps in order, as the server runs an
 * ordered bulk write, up to its middle step, of which it applies only the first half of the
 * documents (the server applies an {@code updateMany} or {@code deleteMany} document by document
 * too), then stops: dead (it throws {@link Crash}, leaving the lock held and the journal
 * written), or with the holder's client closed under it. Later batches go through unchanged, and
 * so do earlier ones, sent before it is {@linkplain #armed armed} (the fixture's load).
 */
final class DoctorCrashingSender implements TreeLock.Sender {
  /** Thrown where a holder stops dead. */
  static final class Crash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Crash() {
      super("crashed half-way", null, false, false);
    }
  }

  /** Closes the holder's client, or null: the holder stops dead instead. */
  private final @Nullable Runnable close;
  /** Whether it stops the next change; until then every batch goes through unchanged. */
  volatile boolean armed;
  /** Whether it stopped the holder. */
  volatile boolean crashed;
  /** Where it stopped the holder, for the report: after which documents of which step. */
  volatile String where = "";

  /** A sender that stops the holder by running {@code close}, or dead if it is null. */
  DoctorCrashingSender(@Nullable Runnable close) {
    this.close = close;
  }

  /**
   * Stops the holder: dead (it throws, holding the lock), or with its client closed under it
   * (its next write fails, and the store says what became of the change).
   */
  private BulkWriteResult stop(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
    if (close == null) {
      throw new Crash();
    }
    close.run();
    return TreeLock.BULK.send(collection, batch); // fails: the client is closed
  }

  @Override
  public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
    List<TreeLock.Statement> statements = batch.statements();
    int total = 0;
    for (TreeLock.Statement s : statements) {
      total += s.isStep() ? 1 : 0;
    }
    if (!armed || crashed || total == 0) {
      return TreeLock.BULK.send(collection, batch);
    }
    int middle = (total + 1) / 2;
    int at = 0;
    for (int seen = 0; ; at++) {
      seen += statements.get(at).isStep() ? 1 : 0;
      if (seen == middle) {
        break;
      }
    }
    if (at > 0) {
      collection.bulkWrite(batch.models().subList(0, at));
    }
    crashed = true;
    WriteModel<BsonDocument> m = statements.get(at).model();
    Bson filter = null;
    if (m instanceof UpdateManyModel<BsonDocument> u) {
      filter = u.getFilter();
    } else if (m instanceof DeleteManyModel<BsonDocument> d) {
      filter = d.getFilter();
    }
    if (filter == null) {
      collection.bulkWrite(List.of(m));
      where = "after step " + middle + " of " + total;
      return stop(collection, batch);
    }
    List<Object> ids = new ArrayList<>();
    for (BsonDocument d : collection.find(filter).collation(Reads.SIMPLE)
        .projection(new Document("_id", 1))) {
      ids.add(d.get("_id"));
    }
    int half = (ids.size() + 1) / 2;
    for (Object id : ids.subList(0, half)) {
      Bson one = Filters.and(Filters.eq("_id", id), filter);
      if (m instanceof UpdateManyModel<BsonDocument> u) {
        collection.bulkWrite(List.of(u.getUpdatePipeline() != null
            ? new UpdateOneModel<>(one, u.getUpdatePipeline(), u.getOptions())
            : new UpdateOneModel<>(one, u.getUpdate(), u.getOptions())));
      } else {
        collection.bulkWrite(List.of(new DeleteOneModel<>(one,
            ((DeleteManyModel<BsonDocument>) m).getOptions())));
      }
    }
    where = "after " + half + " of the " + ids.size() + " documents of step " + middle + " of "
        + total;
    return stop(collection, batch);
  }
}
