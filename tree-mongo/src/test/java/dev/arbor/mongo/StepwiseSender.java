package dev.arbor.mongo;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * Sends a batch the way the server runs an ordered bulk write, but one document at a time: the
 * protocol's statements (fences, claims, journal, release) as they are, each step document by
 * document (an {@code updateMany} becomes one {@code updateOne} per matching document, which is
 * what the server does too), calling {@link Hook#beforeWrite} before each document write of a
 * step. A hook that throws simulates a crash at that point; one that blocks, a stalled holder.
 */
class StepwiseSender implements TreeLock.Sender {
  /** Called before the document writes of steps. */
  interface Hook {
    /**
     * @param written the document writes of steps this sender made so far
     */
    void beforeWrite(int written);

    /** Called before each protocol statement, with its index in the batch. */
    default void beforeStatement(TreeLock.Batch batch, int index) {}
  }

  private final Hook hook;
  int written;

  StepwiseSender(Hook hook) {
    this.hook = hook;
  }

  /** A sender that crashes (throws {@link Crash}) before its {@code limit}-th write; -1: never. */
  static StepwiseSender crashingAfter(int limit) {
    return new StepwiseSender(written -> {
      if (written == limit) {
        throw new Crash(limit);
      }
    });
  }

  /** Thrown to simulate a crash: the holder stops dead, holding the lock. */
  static final class Crash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Crash(int k) {
      super("injected crash after " + k + " document writes");
    }
  }

  @Override
  public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
    int inserted = 0;
    int matched = 0;
    int modified = 0;
    int deleted = 0;
    List<TreeLock.Statement> statements = batch.statements();
    for (int i = 0; i < statements.size(); i++) {
      TreeLock.Statement s = statements.get(i);
      try {
        if (!s.isStep()) {
          hook.beforeStatement(batch, i);
          BulkWriteResult r = c.bulkWrite(List.of(s.model()));
          matched += r.getMatchedCount();
          modified += r.getModifiedCount();
          inserted += r.getInsertedCount();
          deleted += r.getDeletedCount();
          continue;
        }
        WriteModel<BsonDocument> m = s.model();
        if (m instanceof InsertOneModel<BsonDocument> insert) {
          tick();
          c.insertOne(insert.getDocument());
          inserted++;
        } else if (m instanceof UpdateOneModel<BsonDocument> u && u.getOptions().isUpsert()
            && ids(c, u.getFilter(), 1).isEmpty()) {
          tick(); // an insert, sent as an upsert
          c.updateOne(u.getFilter(), u.getUpdate(), u.getOptions());
          inserted++;
        } else if (m instanceof UpdateOneModel<BsonDocument> u) {
          for (BsonValue id : ids(c, u.getFilter(), 1)) {
            tick();
            matched++;
            modified += (int) (u.getUpdatePipeline() != null
                ? emulate(c, byId(id, u.getFilter()), u.getUpdatePipeline())
                : c.updateOne(byId(id, u.getFilter()), u.getUpdate()).getModifiedCount());
          }
        } else if (m instanceof UpdateManyModel<BsonDocument> u) {
          for (BsonValue id : ids(c, u.getFilter(), 0)) {
            tick();
            matched++;
            modified += (int) (u.getUpdatePipeline() != null
                ? emulate(c, byId(id, u.getFilter()), u.getUpdatePipeline())
                : c.updateOne(byId(id, u.getFilter()), u.getUpdate()).getModifiedCount());
          }
        } else if (m instanceof DeleteManyModel<BsonDocument> d) {
          for (BsonValue id : ids(c, d.getFilter(), 0)) {
            tick();
            deleted += (int) c.deleteOne(byId(id, d.getFilter())).getDeletedCount();
          }
        } else if (m instanceof DeleteOneModel<BsonDocument> d) {
          for (BsonValue id : ids(c, d.getFilter(), 1)) {
            tick();
            deleted += (int) c.deleteOne(byId(id, d.getFilter())).getDeletedCount();
          }
        } else {
          throw new AssertionError(m);
        }
      } catch (MongoBulkWriteException e) {
        BulkWriteError error = e.getWriteErrors().get(0);
        throw failure(i, error.getCode(), error.getMessage(), inserted, matched, modified,
            deleted, e);
      } catch (MongoWriteException e) {
        throw failure(i, e.getError().getCode(), e.getError().getMessage(), inserted, matched,
            modified, deleted, e);
      }
    }
    return BulkWriteResult.acknowledged(inserted, matched, deleted, modified, List.of(),
        List.of());
  }

  /**
   * Runs an update pipeline on the one document {@code filter} selects: read, computed by
   * {@link PipelineEmulator} (mongo-java-server has no pipeline updates) and replaced under the
   * same filter, so that a guard still decides, as the server's per-document atomicity does.
   */
  @SuppressWarnings("unchecked")
  private static long emulate(MongoCollection<BsonDocument> c, Bson filter,
      List<? extends Bson> pipeline) {
    BsonDocument d = c.find(filter).first();
    if (d == null) {
      return 0;
    }
    List<BsonDocument> stages = new ArrayList<>();
    for (Bson stage : pipeline) {
      stages.add(stage.toBsonDocument());
    }
    BsonDocument after = PipelineEmulator.apply(d, stages);
    return c.replaceOne(filter, after).getModifiedCount();
  }

  private void tick() {
    hook.beforeWrite(written);
    written++;
  }

  private static MongoBulkWriteException failure(int index, int code, String message,
      int inserted, int matched, int modified, int deleted, RuntimeException cause) {
    MongoBulkWriteException e = new MongoBulkWriteException(
        BulkWriteResult.acknowledged(inserted, matched, deleted, modified, List.of(), List.of()),
        List.of(new BulkWriteError(code, message, new BsonDocument(), index)), null,
        new com.mongodb.ServerAddress(), Set.of());
    e.initCause(cause);
    return e;
  }

  private static List<BsonValue> ids(MongoCollection<BsonDocument> c, Bson filter, int limit) {
    List<BsonValue> ids = new ArrayList<>();
    for (BsonDocument d : c.find(filter).projection(Projections.include("_id")).limit(limit)) {
      ids.add(d.get("_id"));
    }
    return ids;
  }

  private static Bson byId(BsonValue id, Bson filter) {
    return Filters.and(Filters.eq("_id", id), filter);
  }
}
