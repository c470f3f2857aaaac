package dev.arbor.mongo.internal.protocol;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import dev.arbor.mongo.NodeTooLargeException;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.bson.Fits;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The explicit context of one structural change, handed to the store's planner: the reads it may
 * make (in the change's session, from the primary, with the lease renewed when due) and the steps
 * it plans. The planner writes nothing itself; the protocol journals, fences and runs the steps
 * once the plan is complete.
 */
public final class Change extends Reads {
  private final long version;
  private final CodecRegistry registry;
  private final List<Step> steps = new ArrayList<>();

  /**
   * @param version the version of the change: its fencing token, which marks every document it
   *     writes
   */
  public Change(MongoCollection<Document> collection, @Nullable Scope scope,
      @Nullable ClientSession session, Runnable beforeQuery, long version) {
    this(collection, scope, session, beforeQuery, version, 0);
  }

  /**
   * @param version the version of the change: its fencing token, which marks every document it
   *     writes
   * @param limitMillis the time limit of each of its reads ({@link Reads}), 0 for none
   */
  Change(MongoCollection<Document> collection, @Nullable Scope scope,
      @Nullable ClientSession session, Runnable beforeQuery, long version, long limitMillis) {
    super(collection, scope, session, beforeQuery, false, limitMillis);
    remember();
    this.version = version;
    this.registry = collection.getCodecRegistry();
  }

  /** The version of the change. */
  long version() {
    return version;
  }

  /** The steps planned so far, in order. */
  public List<Step> steps() {
    return steps;
  }

  private BsonDocument bson(Bson b) {
    return b.toBsonDocument(BsonDocument.class, registry);
  }

  /** A filter of a step, restricted to the tree the change is made to. */
  private BsonDocument filter(Bson b) {
    return bson(scoped(b));
  }

  private BsonArray pipeline(List<? extends Bson> stages) {
    BsonArray array = new BsonArray();
    for (Bson stage : stages) {
      array.add(bson(stage));
    }
    return ids.pipeline(array);
  }

  /**
   * Plans the insert of a new document.
   *
   * @throws NodeTooLargeException if it would pass MongoDB's 16 MB limit
   */
  public void insert(Document document) {
    BsonDocument d = ids.document(bson(document));
    int size = Encoded.size(d);
    if (size > Fits.MAX_NODE) {
      Object id = document.get(MongoTreeStore.ID);
      throw new NodeTooLargeException(String.valueOf(id), size, "Cannot write node '" + id
          + "': its document would be " + size + " bytes of BSON, past MongoDB's 16 MB limit"
          + " (its attributes, and in an array of ancestors or a materialized path, its"
          + " ancestors or path, which grow with the node's depth). Nothing was written.");
    }
    if (scope == null) {
      steps.add(new Step.Insert(d));
    } else {
      BsonDocument stored = scope.stored(d);
      steps.add(new Step.Insert(stored, scope.equality().append(MongoTreeStore.ID,
          stored.get(MongoTreeStore.ID))));
    }
  }

  /**
   * Plans an update of the document {@code id} that only sets or unsets absolute values
   * ({@code $set}, {@code $unset}): running it again changes nothing, so it is guarded only
   * against what later steps and later changes wrote ({@link Step}).
   */
  public void set(Object id, Bson update) {
    BsonValue key = id instanceof String s ? new BsonString(s)
        : bson(new Document(MongoTreeStore.ID, id)).get(MongoTreeStore.ID);
    steps.add(new Step.Update(filter(new BsonDocument(MongoTreeStore.ID, key)),
        ids.update(bson(update)), false, true));
  }

  /** Plans an update of the first document {@code filter} selects. */
  public void updateOne(Bson filter, Bson update) {
    steps.add(new Step.Update(filter(filter), ids.update(bson(update)), false, false));
  }

  /**
   * Plans an update, with an aggregation pipeline, of the first document {@code filter} selects.
   */
  void updateOne(Bson filter, List<? extends Bson> pipeline) {
    steps.add(new Step.Update(filter(filter), pipeline(pipeline), false, false));
  }

  /** Plans an update of every document {@code filter} selects. */
  public void updateMany(Bson filter, Bson update) {
    steps.add(new Step.Update(filter(filter), ids.update(bson(update)), true, false));
  }

  /** Plans an update, with an aggregation pipeline, of every document {@code filter} selects. */
  public void updateMany(Bson filter, List<? extends Bson> pipeline) {
    steps.add(new Step.Update(filter(filter), pipeline(pipeline), true, false));
  }

  /** Plans the delete of every document {@code filter} selects. */
  public void deleteMany(Bson filter) {
    steps.add(new Step.Delete(filter(filter), true));
  }

  /**
   * Plans the delete of the first document {@code filter} selects: under the tree's lock a change
   * of this one step needs no journal ({@link PlanRunner#atomic}); a lane journals it anyway
   * ({@link LaneProgram#run}).
   */
  public void deleteOne(Bson filter) {
    steps.add(new Step.Delete(filter(filter), false));
  }
}
