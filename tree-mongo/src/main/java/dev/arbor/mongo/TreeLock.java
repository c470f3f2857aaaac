package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.or;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * All-or-nothing structural changes without transactions: a per-tree lock document and a journal
 * of guarded, replayable write steps, kept in the tree's own collection under non-string ids
 * (so they never collide with a node).
 *
 * <pre>{@code
 * { _id: {arbor: "lock"}, owner: "3f2c…" | null, expires: ISODate(…), version: 41,
 *   op: "9b1e…" | null, what: "move 'x' to after(y)", parts: 0, steps: [ {kind, filter, …}, … ] }
 * { _id: {arbor: "journal", op: "9b1e…", part: 0}, steps: [ … ] }   <- only for journals > 4 MB
 * }</pre>
 *
 * <h2>Protocol</h2>
 *
 * <ol>
 *   <li><b>Lock.</b> A writer takes the lock with one atomic {@code findOneAndUpdate} (upsert) that
 *       succeeds only if the lock is free or its lease has expired; {@code version} goes up by one.
 *   <li><b>Recover.</b> If the previous holder left an operation in the lock document, it died in
 *       the middle of a change: its journal is replayed to the end first.
 *   <li><b>Plan.</b> The store reads what it needs and plans its writes, under the lock.
 *   <li><b>Journal.</b> Unless the plan is a single one-document write (atomic by itself), the
 *       planned steps are written into the lock document with the operation's name (into separate
 *       journal documents when they exceed 4 MB).
 *   <li><b>Write.</b> The steps run in one ordered bulk write. Each step is <i>guarded</i>: it sets
 *       {@code arborOp: {id: op, step: k}} on every document it writes, and matches only
 *       documents not yet written by step k or later of the same operation. A step that is run
 *       again, after a crash, skips the documents it already wrote, and a document's state at
 *       step k is the same as in an uninterrupted run; so replaying all steps from the first
 *       finishes the change exactly.
 *   <li><b>Release.</b> One write clears the operation and the journal and frees the lock ({@code
 *       version} goes up again): a change costs 3 round trips of protocol, 2 when it writes one
 *       document.
 * </ol>
 *
 * <p>A holder that dies leaves the lock to expire after the lease; the next writer, reader or
 * {@code repair()} takes it over and finishes the journal. Replays are idempotent, so even a slow
 * holder whose lease expired and a new holder finishing the same journal converge.
 *
 * <p><b>Readers</b> (when isolated reads are on) read the lock document before and after their
 * queries and retry while a change is in progress or when {@code version} moved: a read never
 * returns a mix of states. A read that finds an expired lock with a pending operation finishes it.
 *
 * <p><b>Limits.</b> Leases use the clients' clocks, which must agree to within the lease (30 s by
 * default). Writers of the same tree are serialized, also across processes. Writes made to the
 * collection by anything other than Arbor are not covered.
 */
final class TreeLock {
  static final BsonDocument LOCK_ID = new BsonDocument("arbor", new BsonString("lock"));
  static final String MARK = "arborOp";

  /** Executes guarded steps; tests replace it to inject faults. */
  interface Executor {
    /** Runs the steps in order, as one ordered bulk write. */
    BulkWriteResult execute(MongoCollection<Document> collection,
        List<WriteModel<Document>> steps);
  }

  static final Executor BULK = (collection, steps) -> collection.bulkWrite(steps);

  private final MongoCollection<Document> collection;
  private final MongoCollection<BsonDocument> raw;
  private final String owner = UUID.randomUUID().toString();
  private final long leaseMillis;
  private final long waitMillis;
  volatile Executor executor = BULK;
  /** Journals up to this size go into the lock document; larger ones into journal documents. */
  volatile int inlineJournalBytes = 4_000_000;
  /** Called with the lock version of every change, in lock order (tests record commit order). */
  volatile java.util.function.LongConsumer onLocked = v -> {};

  TreeLock(MongoCollection<Document> collection, long leaseMillis, long waitMillis) {
    this.collection = collection;
    this.raw = collection.withDocumentClass(BsonDocument.class);
    this.leaseMillis = leaseMillis;
    this.waitMillis = waitMillis;
  }

  /**
   * Takes the lock, finishes any interrupted change, runs {@code planner} under the lock and
   * writes its plan all-or-nothing.
   *
   * @return the result of the bulk write, or null when the plan wrote nothing
   */
  BulkWriteResult run(String what, java.util.function.Supplier<List<WriteModel<Document>>> planner) {
    long version = acquire();
    boolean released = false;
    try {
      onLocked.accept(version);
      List<WriteModel<Document>> writes = planner.get();
      if (writes.isEmpty()) {
        return null;
      }
      if (writes.size() == 1 && isSingleDocument(writes.get(0))) {
        return executor.execute(collection, writes);
      }
      String op = UUID.randomUUID().toString();
      List<WriteModel<Document>> steps = guard(op, writes);
      int parts = journal(op, what, steps);
      BulkWriteResult result = executor.execute(collection, steps);
      finishAndRelease(parts);
      released = true;
      return result;
    } finally {
      if (!released) {
        release();
      }
    }
  }

  /**
   * Runs a bulk load under the lock: {@code check} runs first (the store must be empty), then a
   * journal whose only step deletes every node, so that a load interrupted half-way is undone by
   * the next access; then {@code body} inserts.
   */
  void runLoad(String what, Runnable check, Runnable body) {
    long version = acquire();
    boolean released = false;
    try {
      onLocked.accept(version);
      check.run();
      String op = UUID.randomUUID().toString();
      int parts = journal(op, what, List.of(new DeleteManyModel<>(MongoTreeStore.NODES)));
      body.run();
      finishAndRelease(parts);
      released = true;
    } finally {
      if (!released) {
        release();
      }
    }
  }

  /** Finishes an interrupted change, if any, taking and releasing the lock. */
  void recover() {
    acquire();
    release();
  }

  /**
   * Runs a read isolated from changes: the lock document is read before and after; while a
   * change is in progress, or if one happened during the read, the read is retried.
   */
  <T> T read(java.util.function.Supplier<T> read) {
    long deadline = System.currentTimeMillis() + waitMillis;
    for (int attempt = 0; ; attempt++) {
      BsonDocument before = lockDocument();
      if (before != null && before.isString("op") && free(before)) {
        recover(); // a change failed half-way and released the lock: finish it first
        continue;
      }
      if (before != null && !free(before)) {
        if (expired(before)) {
          recover();
        } else {
          pause(attempt, deadline, before);
        }
        continue;
      }
      T result = read.get();
      BsonDocument after = lockDocument();
      if (version(before) == version(after)) {
        return result;
      }
      pause(attempt, deadline, after);
    }
  }

  /** The lock document without its journal steps, which readers do not need. */
  private BsonDocument lockDocument() {
    return raw.find(new BsonDocument("_id", LOCK_ID))
        .projection(com.mongodb.client.model.Projections.exclude("steps")).first();
  }

  private static boolean free(BsonDocument lock) {
    return !lock.containsKey("owner") || lock.get("owner").isNull();
  }

  private static long version(BsonDocument lock) {
    return lock == null || !lock.isNumber("version") ? 0 : lock.getNumber("version").longValue();
  }

  private static boolean expired(BsonDocument lock) {
    return lock.isDateTime("expires")
        && lock.getDateTime("expires").getValue() < System.currentTimeMillis();
  }

  private void pause(int attempt, long deadline, BsonDocument lock) {
    if (System.currentTimeMillis() > deadline) {
      throw new TreeException("Tree '" + collection.getNamespace() + "' stayed locked for more"
          + " than " + waitMillis + " ms (holder " + (lock == null ? null : lock.get("owner"))
          + ", doing " + (lock == null ? null : lock.get("what")) + ")");
    }
    try {
      Thread.sleep(Math.min(50, 1L << Math.min(attempt, 5)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TreeException("Interrupted while waiting for the tree lock", e);
    }
  }

  /** Takes the lock, finishing an interrupted change if the previous holder left one. */
  private long acquire() {
    long deadline = System.currentTimeMillis() + waitMillis;
    for (int attempt = 0; ; attempt++) {
      long now = System.currentTimeMillis();
      Bson free = and(eq("_id", LOCK_ID), or(eq("owner", null), lt("expires", new Date(now))));
      try {
        BsonDocument before = raw.findOneAndUpdate(free,
            Updates.combine(Updates.set("owner", owner),
                Updates.set("expires", new Date(now + leaseMillis)), Updates.inc("version", 1)),
            new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.BEFORE));
        if (before != null && before.isString("op")) {
          replay(before);
        }
        return version(before) + 1;
      } catch (com.mongodb.MongoCommandException | MongoWriteException e) {
        if (ErrorCategory.fromErrorCode(e.getCode()) != ErrorCategory.DUPLICATE_KEY) {
          throw e;
        }
        pause(attempt, deadline, lockDocument()); // held by someone else
      }
    }
  }

  private void release() {
    raw.updateOne(and(eq("_id", LOCK_ID), eq("owner", owner)),
        Updates.combine(Updates.set("owner", null), Updates.inc("version", 1)));
  }

  /**
   * Writes the journal: into the lock document itself when it is small (one round trip), else
   * into journal documents of at most ~4 MB each, well under the 16 MB document limit.
   *
   * @return the number of journal documents (0: the steps are in the lock document)
   */
  private int journal(String op, String what, List<WriteModel<Document>> steps) {
    BsonArray encoded = new BsonArray();
    int total = 0;
    for (WriteModel<Document> step : steps) {
      BsonDocument e = encode(step);
      encoded.add(e);
      total += e.toJson().length();
    }
    Bson mine = and(eq("_id", LOCK_ID), eq("owner", owner));
    if (total <= inlineJournalBytes) {
      raw.updateOne(mine, Updates.combine(Updates.set("op", op), Updates.set("parts", 0),
          Updates.set("what", what), Updates.set("steps", encoded)));
      return 0;
    }
    List<WriteModel<BsonDocument>> writes = new ArrayList<>();
    int part = 0;
    BsonArray chunk = new BsonArray();
    int bytes = 0;
    for (BsonValue step : encoded) {
      int size = step.asDocument().toJson().length();
      if (bytes + size > Math.max(1, inlineJournalBytes) && !chunk.isEmpty()) {
        writes.add(new InsertOneModel<>(journalDocument(op, part++, chunk)));
        chunk = new BsonArray();
        bytes = 0;
      }
      chunk.add(step);
      bytes += size;
    }
    writes.add(new InsertOneModel<>(journalDocument(op, part++, chunk)));
    writes.add(new UpdateOneModel<>(mine, Updates.combine(Updates.set("op", op),
        Updates.set("parts", part), Updates.set("what", what))));
    raw.bulkWrite(writes);
    return part;
  }

  private static BsonDocument journalDocument(String op, int part, BsonArray steps) {
    return new BsonDocument("_id", new BsonDocument("arbor", new BsonString("journal"))
        .append("op", new BsonString(op)).append("part", new BsonInt32(part)))
        .append("steps", steps);
  }

  private static final Bson CLEARED = Updates.combine(Updates.set("op", null),
      Updates.set("parts", 0), Updates.set("what", null), Updates.unset("steps"));

  /** Clears the finished operation from the lock document, which stays held. */
  private void finish(int parts) {
    raw.updateOne(eq("_id", LOCK_ID), CLEARED);
    deleteJournalDocuments(parts);
  }

  /** Clears the finished operation and frees the lock in one write. */
  private void finishAndRelease(int parts) {
    raw.updateOne(and(eq("_id", LOCK_ID), eq("owner", owner)), Updates.combine(CLEARED,
        Updates.set("owner", null), Updates.inc("version", 1)));
    deleteJournalDocuments(parts);
  }

  private void deleteJournalDocuments(int parts) {
    if (parts > 0) {
      // Only the lock holder journals, so every journal document is this operation's or
      // garbage from a crash between writing a journal and naming it in the lock.
      raw.deleteMany(eq("_id.arbor", "journal"));
    }
  }

  /**
   * Replays an interrupted operation's journal from its first step, then clears it.
   *
   * @param lock the lock document as the previous holder left it
   */
  private void replay(BsonDocument lock) {
    String op = lock.getString("op").getValue();
    int parts = lock.getInt32("parts", new BsonInt32(0)).getValue();
    List<WriteModel<Document>> steps = new ArrayList<>();
    if (parts == 0) {
      for (BsonValue step : lock.getArray("steps", new BsonArray())) {
        steps.add(decode(step.asDocument()));
      }
    } else {
      for (BsonDocument part : raw.find(and(eq("_id.arbor", "journal"), eq("_id.op", op)))
          .sort(new BsonDocument("_id.part", new BsonInt32(1)))) {
        for (BsonValue step : part.getArray("steps")) {
          steps.add(decode(step.asDocument()));
        }
      }
    }
    // An insert already done fails with a duplicate key; run steps one by one to skip those.
    for (WriteModel<Document> step : steps) {
      try {
        collection.bulkWrite(List.of(step));
      } catch (com.mongodb.MongoBulkWriteException e) {
        if (e.getWriteErrors().isEmpty() || ErrorCategory.fromErrorCode(
            e.getWriteErrors().get(0).getCode()) != ErrorCategory.DUPLICATE_KEY) {
          throw e;
        }
      }
    }
    finish(parts);
  }

  // ------------------------------------------------------------------ guarded steps

  /** The guard of step {@code k}: documents not yet written by step k or later of {@code op}. */
  private static Bson notYet(String op, int k) {
    return or(ne(MARK + ".id", op), lt(MARK + ".step", k));
  }

  private static Document mark(String op, int k) {
    return new Document("id", op).append("step", k);
  }

  /** Adds the guard and the mark to every write. */
  private List<WriteModel<Document>> guard(String op, List<WriteModel<Document>> writes) {
    List<WriteModel<Document>> steps = new ArrayList<>(writes.size());
    int k = 0;
    for (WriteModel<Document> w : writes) {
      k++;
      Bson guard = notYet(op, k);
      Document mark = mark(op, k);
      if (w instanceof InsertOneModel<Document> i) {
        Document d = new Document(i.getDocument());
        d.put(MARK, mark);
        steps.add(new InsertOneModel<>(d));
      } else if (w instanceof UpdateOneModel<Document> u) {
        steps.add(u.getUpdatePipeline() != null
            ? new UpdateOneModel<>(and(u.getFilter(), guard), markPipeline(u.getUpdatePipeline(), mark))
            : new UpdateOneModel<>(and(u.getFilter(), guard),
                Updates.combine(u.getUpdate(), Updates.set(MARK, mark))));
      } else if (w instanceof UpdateManyModel<Document> u) {
        steps.add(u.getUpdatePipeline() != null
            ? new UpdateManyModel<>(and(u.getFilter(), guard), markPipeline(u.getUpdatePipeline(), mark))
            : new UpdateManyModel<>(and(u.getFilter(), guard),
                Updates.combine(u.getUpdate(), Updates.set(MARK, mark))));
      } else if (w instanceof DeleteManyModel<Document> d) {
        steps.add(new DeleteManyModel<>(and(d.getFilter(), guard)));
      } else if (w instanceof DeleteOneModel<Document> d) {
        steps.add(new DeleteOneModel<>(and(d.getFilter(), guard)));
      } else {
        throw new IllegalArgumentException("unsupported write " + w);
      }
    }
    return steps;
  }

  private static List<Bson> markPipeline(List<? extends Bson> pipeline, Document mark) {
    List<Bson> marked = new ArrayList<>(pipeline);
    marked.add(new Document("$set", new Document(MARK, new Document("$literal", mark))));
    return marked;
  }

  private static boolean isSingleDocument(WriteModel<Document> w) {
    return w instanceof InsertOneModel || w instanceof UpdateOneModel
        || w instanceof DeleteOneModel;
  }

  private BsonDocument bson(Bson b) {
    return b.toBsonDocument(Document.class, collection.getCodecRegistry());
  }

  private BsonDocument encode(WriteModel<Document> w) {
    BsonDocument step = new BsonDocument();
    if (w instanceof InsertOneModel<Document> i) {
      step.append("kind", new BsonString("insertOne"))
          .append("document", bson(i.getDocument()));
    } else if (w instanceof UpdateOneModel<Document> u) {
      step.append("kind", new BsonString("updateOne")).append("filter", bson(u.getFilter()));
      appendUpdate(step, u.getUpdate(), u.getUpdatePipeline());
    } else if (w instanceof UpdateManyModel<Document> u) {
      step.append("kind", new BsonString("updateMany")).append("filter", bson(u.getFilter()));
      appendUpdate(step, u.getUpdate(), u.getUpdatePipeline());
    } else if (w instanceof DeleteManyModel<Document> d) {
      step.append("kind", new BsonString("deleteMany")).append("filter", bson(d.getFilter()));
    } else if (w instanceof DeleteOneModel<Document> d) {
      step.append("kind", new BsonString("deleteOne")).append("filter", bson(d.getFilter()));
    }
    return step;
  }

  private void appendUpdate(BsonDocument step, Bson update, List<? extends Bson> pipeline) {
    if (pipeline != null) {
      BsonArray stages = new BsonArray();
      for (Bson stage : pipeline) {
        stages.add(bson(stage));
      }
      step.append("pipeline", stages);
    } else {
      step.append("update", bson(update));
    }
  }

  private WriteModel<Document> decode(BsonDocument step) {
    String kind = step.getString("kind").getValue();
    switch (kind) {
      case "insertOne":
        return new InsertOneModel<>(collection.getCodecRegistry().get(Document.class).decode(
            new org.bson.BsonDocumentReader(step.getDocument("document")),
            org.bson.codecs.DecoderContext.builder().build()));
      case "deleteMany":
        return new DeleteManyModel<>(step.getDocument("filter"));
      case "deleteOne":
        return new DeleteOneModel<>(step.getDocument("filter"));
      case "updateOne":
      case "updateMany": {
        Bson filter = step.getDocument("filter");
        if (step.containsKey("pipeline")) {
          List<Bson> stages = new ArrayList<>();
          for (BsonValue s : step.getArray("pipeline")) {
            stages.add(s.asDocument());
          }
          return kind.equals("updateOne") ? new UpdateOneModel<>(filter, stages)
              : new UpdateManyModel<>(filter, stages);
        }
        Bson update = step.getDocument("update");
        return kind.equals("updateOne") ? new UpdateOneModel<>(filter, update,
            new UpdateOptions()) : new UpdateManyModel<>(filter, update);
      }
      default:
        throw new TreeException("Unknown journal step kind '" + kind + "'");
    }
  }
}
