package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.client.model.Projections;
import com.mongodb.client.model.PushOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.bson.Encoded;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The journal of a change: its guarded steps, encoded, under a header naming the change's
 * version, what it does and its writer's token. Up to {@link TreeLock#inlineJournalBytes} it is
 * stored in the lock document by the fence that commits the change; a larger one is first stored
 * in journal documents of up to 4 MB ({@code {_id: {arbor: "journal", v, part}, steps}}) and
 * committed by a fence that stores the header alone. A replay reads it back from either.
 */
final class Journal {
  private final TreeLock facade;
  private final LockDocument lock;

  Journal(TreeLock facade, LockDocument lock) {
    this.facade = facade;
    this.lock = lock;
  }

  /** A journal as it is written: its header, and its parts when its steps are not inline. */
  record Written(BsonDocument header, List<BsonDocument> parts) {
    boolean inline() {
      return parts.isEmpty();
    }
  }

  /**
   * Encodes the journal of change {@code v}, written by {@code origin}.
   *
   * @throws TreeException if a step is larger than Arbor sends in one statement
   */
  Written write(long v, String what, String origin, List<Step> steps) {
    BsonArray encoded = new BsonArray();
    long total = 0;
    for (Step s : steps) {
      BsonDocument e = s.encode();
      int size = Encoded.size(e);
      if (size > Encoded.MAX_STEP) {
        throw new TreeException("A step of '" + what + "' would be " + size + " bytes of BSON,"
            + " more than the " + Encoded.MAX_STEP + " Arbor sends in one statement");
      }
      encoded.add(e);
      total += size;
    }
    BsonDocument header = header(v, what, origin);
    List<BsonDocument> parts = new ArrayList<>();
    if (total <= facade.inlineJournalBytes) {
      header.append("parts", new BsonInt32(0)).append("steps", encoded);
    } else {
      parts = parts(v, encoded);
      header.append("parts", new BsonInt32(parts.size()));
    }
    return new Written(header, parts);
  }

  /** The header of the journal of change {@code v}, without its steps. */
  static BsonDocument header(long v, String what, String origin) {
    return new BsonDocument("v", new BsonInt64(v)).append("what", new BsonString(what))
        .append("t", new BsonString(origin));
  }

  /** The update that stores {@code header} as the pending journal of change {@code v}. */
  static Bson pending(BsonDocument header, long v, String origin) {
    return Updates.combine(Updates.set(TreeLock.JOURNAL, header), Updates.set(LockDocument.OP, v),
        Updates.set(LockDocument.OP_TOKEN, origin));
  }

  /**
   * The release of a journaled change by its writer {@code origin}, which records it among the
   * last 64 done as {@link #completedFor} does: on a server that stops at the first error, the
   * release travels in the command that commits the change, and its writer, if it lost that
   * command's answer, can tell that it is done.
   */
  static Bson releasedBy(String origin) {
    return Updates.combine(LockDocument.releaseUpdate(), Updates.pushEach(LockDocument.DONE,
        List.of(origin), new PushOptions().slice(-LockDocument.DONE_KEPT)));
  }

  /**
   * The update that clears a journal completed by a caller other than its writer {@code origin},
   * recording it among the last 64 completed so, so that its writer, if it lost the answer to
   * its commit, can tell that it is done.
   */
  static Bson completedFor(String origin) {
    return Updates.combine(Updates.unset(LockDocument.OP), Updates.unset(LockDocument.OP_TOKEN),
        Updates.unset(TreeLock.JOURNAL), Updates.pushEach(LockDocument.DONE, List.of(origin),
            new PushOptions().slice(-LockDocument.DONE_KEPT)));
  }

  /**
   * The statement that stores a part: filtered by the scope too, so that the upsert stores the
   * scope field (a replay, which reads parts within the tree's scope, finds it, and a sharded
   * collection routes it).
   */
  WriteModel<BsonDocument> partStatement(BsonDocument part) {
    return new UpdateOneModel<>(lock.scoped(eq("_id", part.get("_id"))),
        new BsonDocument("$setOnInsert", new BsonDocument("steps", part.get("steps"))),
        new UpdateOptions().upsert(true));
  }

  private List<BsonDocument> parts(long v, BsonArray encoded) {
    List<BsonDocument> parts = new ArrayList<>();
    BsonArray chunk = new BsonArray();
    long bytes = 0;
    int limit = Math.max(1, Math.min(facade.inlineJournalBytes, 4_000_000));
    for (BsonValue step : encoded) {
      int size = Encoded.size(step.asDocument());
      if (bytes + size > limit && !chunk.isEmpty()) {
        parts.add(part(v, parts.size(), chunk));
        chunk = new BsonArray();
        bytes = 0;
      }
      chunk.add(step);
      bytes += size;
    }
    parts.add(part(v, parts.size(), chunk));
    return parts;
  }

  private BsonDocument partId(long v, int part) {
    return lock.own("journal").append("v", new BsonInt64(v))
        .append("part", new BsonInt32(part));
  }

  private BsonDocument part(long v, int part, BsonArray steps) {
    return lock.tagged(new BsonDocument("_id", partId(v, part)).append("steps", steps));
  }

  /** Deletes the given parts of a journal, once its change is complete. */
  void deleteParts(List<BsonDocument> parts) {
    List<BsonValue> ids = new ArrayList<>();
    for (BsonDocument part : parts) {
      ids.add(part.get("_id"));
    }
    lock.raw.deleteMany(lock.scoped(in("_id", ids)));
  }

  /** Deletes the {@code parts} parts of the journal of change {@code op}. */
  void deleteParts(long op, int parts) {
    lock.raw.deleteMany(lock.scoped(in("_id", partIds(op, parts))));
  }

  private List<BsonValue> partIds(long op, int parts) {
    List<BsonValue> ids = new ArrayList<>();
    for (int p = 0; p < parts; p++) {
      ids.add(partId(op, p));
    }
    return ids;
  }

  /** The journal stored in the lock document, or null. */
  @Nullable BsonDocument stored() {
    BsonDocument d = lock.raw.find(lock.lockKey()).projection(Projections.include(TreeLock.JOURNAL))
        .first();
    return d == null ? null : d.getDocument(TreeLock.JOURNAL, null);
  }

  /**
   * The steps of {@code journal}, the stored journal of change {@code op}: inline, or read from
   * its parts.
   *
   * @throws TreeException if a part is missing
   */
  List<Step> steps(BsonDocument journal, long op) {
    List<Step> steps = new ArrayList<>();
    int parts = journal.getInt32("parts", new BsonInt32(0)).getValue();
    if (parts == 0) {
      for (BsonValue step : journal.getArray("steps", new BsonArray())) {
        steps.add(Step.decode(step.asDocument()));
      }
    } else {
      List<BsonValue> ids = partIds(op, parts);
      Map<BsonValue, BsonDocument> found = new LinkedHashMap<>();
      for (BsonDocument part : lock.raw.find(lock.scoped(in("_id", ids)))) {
        found.put(part.get("_id"), part);
      }
      for (BsonValue id : ids) {
        BsonDocument part = found.get(id);
        if (part == null) {
          throw new TreeException("Tree '" + lock.tree + "': the journal of '"
              + journal.getString("what", new BsonString("?")).getValue()
              + "' lacks its part " + id + "; run repair()");
        }
        for (BsonValue step : part.getArray("steps")) {
          steps.add(Step.decode(step.asDocument()));
        }
      }
    }
    return steps;
  }
}
