package dev.arbor.mongo.internal.protocol;

import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.bson.Encoded;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One planned write of a structural change, in Arbor's own small type: what the journal stores,
 * the protocol guards and fences, and the executor sends. Filters and updates are held encoded,
 * so that their size is known exactly before anything is written.
 *
 * <p>Every document a step writes is <i>marked</i> {@code arborOp: {v, s}}: {@code v} the version
 * of the change (its fencing token, which grows with every change of the tree), {@code s} the step
 * number. Every step is <i>guarded</i>: it matches only documents not yet written by a later
 * step of the same change nor by any later change, and, unless it is {@linkplain #idempotent()
 * idempotent}, not by step {@code s} itself either. Replaying a change's steps from the first
 * therefore finishes it exactly, and a step can never undo what a later change wrote, even when
 * its command reaches the server after its change was released (a command cut off, then sent
 * again, whose first sending was still on its way).
 */
public sealed interface Step permits Step.Insert, Step.Update, Step.Delete {
  /** Update options with the simple collation, whatever the collection's default. */
  public static UpdateOptions simpleUpdate() {
    return new UpdateOptions().collation(Reads.SIMPLE);
  }

  /** The field of the mark. */
  public String MARK = "arborOp";

  /**
   * Whether running the step twice leaves the same result as running it once: it is then guarded
   * only against what later steps and later changes wrote, not against itself.
   */
  public boolean idempotent();

  /** The encoded size of the step, in bytes (as journaled). */
  public default int size() {
    return Encoded.size(encode());
  }

  /** The step as it is journaled. */
  public BsonDocument encode();

  /** The step as a driver write, guarded and marked for step {@code s} of change {@code v}. */
  public default WriteModel<BsonDocument> model(long v, int s) {
    return model(v, s, null);
  }

  /**
   * The step as a driver write, guarded and marked for step {@code s} of change {@code v}; the
   * mark also names the change's {@code token} when it is not null (a change of one step, which
   * has no journal: its mark is how its writer tells afterwards whether it was applied).
   */
  public WriteModel<BsonDocument> model(long v, int s,
      @org.jspecify.annotations.Nullable String token);

  /**
   * Inserts one document, sent as an upsert ({@code $setOnInsert} filtered by {@code _id}) so that
   * it travels in the same fenced command as the updates of its change, and so that running it
   * again changes nothing.
   */
  public record Insert(BsonDocument document, BsonDocument key) implements Step {
    /** Inserts {@code document}, selected by its {@code _id}. */
    Insert(BsonDocument document) {
      this(document, new BsonDocument("_id", document.get("_id")));
    }

    @Override
    public boolean idempotent() {
      return true;
    }

    @Override
    public BsonDocument encode() {
      BsonDocument e = new BsonDocument("k", new BsonString("i")).append("d", document);
      if (key.size() > 1) { // a scoped tree's node: the filter also carries the scope
        e.append("q", key);
      }
      return e;
    }

    @Override
    public WriteModel<BsonDocument> model(long v, int s,
        @org.jspecify.annotations.Nullable String token) {
      BsonDocument fields = document.clone();
      for (String k : key.keySet()) {
        fields.remove(k);
      }
      fields.put(MARK, mark(v, s, token));
      return new UpdateOneModel<>(key.clone(),
          new BsonDocument("$setOnInsert", fields),
          new UpdateOptions().upsert(true).collation(Reads.SIMPLE));
    }

    /** The insert as a plain insert, marked: for servers whose insert commands are fenced. */
    WriteModel<BsonDocument> insertModel(long v, int s,
        @org.jspecify.annotations.Nullable String token) {
      BsonDocument d = document.clone();
      d.put(MARK, mark(v, s, token));
      return new InsertOneModel<>(d);
    }

    /** The {@code _id} of the inserted document. */
    BsonValue id() {
      return document.get("_id");
    }
  }

  /**
   * Updates one or many documents, with update operators or an aggregation pipeline.
   *
   * @param idempotent whether the update only sets absolute values on documents selected by
   *     {@code _id}, so that it is guarded only against what later steps and later changes
   *     wrote
   */
  public record Update(BsonDocument filter, BsonValue update, boolean multi, boolean idempotent)
      implements Step {
    @Override
    public BsonDocument encode() {
      return new BsonDocument("k", new BsonString("u")).append("q", filter).append("u", update)
          .append("m", BsonBoolean.valueOf(multi)).append("x", BsonBoolean.valueOf(idempotent));
    }

    @Override
    public WriteModel<BsonDocument> model(long v, int s,
        @org.jspecify.annotations.Nullable String token) {
      // An idempotent step may run again (it needs no guard against that), but never over a
      // later step's or a later change's write: a command of it that arrives late, after its
      // change was released and another rewrote the document, would put old values back and
      // lower the document's mark, so that the later change's guarded steps ran on it twice
      // (LateStepAfterReleaseTest).
      BsonDocument q = idempotent ? guarded(filter, v, s + 1) : guarded(filter, v, s);
      if (update.isArray()) {
        List<BsonDocument> pipeline = new ArrayList<>();
        for (BsonValue stage : update.asArray()) {
          pipeline.add(stage.asDocument());
        }
        pipeline.add(new BsonDocument("$set", new BsonDocument(MARK,
            new BsonDocument("$literal", mark(v, s, token)))));
        return multi ? new UpdateManyModel<>(q, pipeline, simpleUpdate())
            : new UpdateOneModel<>(q, pipeline, simpleUpdate());
      }
      BsonDocument u = update.asDocument().clone();
      BsonDocument set = u.containsKey("$set") ? u.getDocument("$set").clone() : new BsonDocument();
      set.put(MARK, mark(v, s, token));
      u.put("$set", set);
      return multi ? new UpdateManyModel<>(q, u, simpleUpdate())
          : new UpdateOneModel<>(q, u, simpleUpdate());
    }
  }

  /** Deletes one or many documents. */
  public record Delete(BsonDocument filter, boolean multi) implements Step {
    @Override
    public boolean idempotent() {
      return false;
    }

    @Override
    public BsonDocument encode() {
      return new BsonDocument("k", new BsonString("d")).append("q", filter)
          .append("m", BsonBoolean.valueOf(multi));
    }

    @Override
    public WriteModel<BsonDocument> model(long v, int s,
        @org.jspecify.annotations.Nullable String token) {
      BsonDocument q = guarded(filter, v, s);
      DeleteOptions o = new DeleteOptions().collation(Reads.SIMPLE);
      return multi ? new DeleteManyModel<>(q, o) : new DeleteOneModel<>(q, o);
    }
  }

  /**
   * Reads a journaled step back.
   *
   * @throws TreeException if the step is not one Arbor wrote
   */
  public static Step decode(BsonDocument step) {
    String kind = step.getString("k", new BsonString("?")).getValue();
    switch (kind) {
      case "i":
        return step.containsKey("q") ? new Insert(step.getDocument("d"), step.getDocument("q"))
            : new Insert(step.getDocument("d"));
      case "u":
        return new Update(step.getDocument("q"), step.get("u"),
            step.getBoolean("m").getValue(), step.getBoolean("x").getValue());
      case "d":
        return new Delete(step.getDocument("q"), step.getBoolean("m").getValue());
      default:
        throw new TreeException("Unknown journal step " + step.toJson());
    }
  }

  /** The mark of step {@code s} of change {@code v}. */
  public static BsonDocument mark(long v, int s) {
    return mark(v, s, null);
  }

  /** The mark of step {@code s} of change {@code v}, naming its writer's token if not null. */
  public static BsonDocument mark(long v, int s, @org.jspecify.annotations.Nullable String token) {
    BsonDocument m = new BsonDocument("v", new BsonInt64(v)).append("s", new BsonInt32(s));
    if (token != null) {
      m.append("t", new BsonString(token));
    }
    return m;
  }

  /** The change version recorded in a node document's mark ({@link #MARK}), 0 if none. */
  static long markVersion(BsonDocument d) {
    BsonValue m = d.get(MARK);
    return m != null && m.isDocument() && m.asDocument().isNumber("v")
        ? m.asDocument().getNumber("v").longValue() : 0;
  }

  /**
   * {@code filter}, restricted to documents not yet written by step {@code s} or later of change
   * {@code v}, nor by any change after {@code v}.
   */
  public static BsonDocument guarded(BsonDocument filter, long v, int s) {
    BsonArray notYet = new BsonArray(List.of(
        new BsonDocument(MARK + ".v", new BsonDocument("$not",
            new BsonDocument("$gte", new BsonInt64(v)))),
        new BsonDocument(MARK + ".v", new BsonInt64(v))
            .append(MARK + ".s", new BsonDocument("$lt", new BsonInt32(s)))));
    return new BsonDocument("$and", new BsonArray(List.of(filter,
        new BsonDocument("$or", notYet))));
  }
}
