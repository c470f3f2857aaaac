package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoClientException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * All-or-nothing structural changes in multi-document transactions (replica sets, sharded
 * clusters). Each change claims the tree's lock document inside its transaction — only when no
 * lock-protocol change holds it and no journal is pending — and raises its version by two, so
 * that transactional writers, lock-protocol writers and isolated readers of one tree exclude each
 * other whichever way each process opened the collection. A plan too large for one transaction
 * (more than {@value #MAX_STEPS} steps) is left to the lock protocol.
 */
final class Transactions {
  private static final class LoggerHolder {
    static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Transactions.class);
  }

  /** The most steps a change makes in one transaction; larger plans use the lock and journal. */
  static final int MAX_STEPS = 1_000;

  private static final TransactionOptions OPTIONS = TransactionOptions.builder()
      .readConcern(ReadConcern.SNAPSHOT).writeConcern(WriteConcern.MAJORITY).build();

  private final @Nullable MongoClient client;
  private final MongoCollection<Document> data;
  private final TreeLock lock;
  private volatile @Nullable Boolean available;

  Transactions(@Nullable MongoClient client, MongoCollection<Document> data, TreeLock lock) {
    this.client = client;
    this.data = data;
    this.lock = lock;
  }

  /**
   * Whether the server runs transactions; probed once with an empty transaction. Only a definite
   * "no" (no sessions, or transactions refused as an illegal operation on a standalone server)
   * selects the lock protocol; any other error is thrown, not taken for a "no".
   */
  boolean available() {
    if (client == null) {
      return false;
    }
    Boolean known = available;
    if (known == null) {
      known = probe();
      available = known;
      LoggerHolder.LOG.debug("{}: the server {} transactions; changes use {}",
          data.getNamespace().getFullName(), known ? "runs" : "does not run",
          known ? "transactions" : "the lock and journal");
    }
    return known;
  }

  private boolean probe() {
    try (ClientSession session = client.startSession()) {
      session.withTransaction(() -> data.find(session, eq("_id", TreeLock.LOCK_ID)).first());
      return true;
    } catch (MongoClientException e) {
      // The driver's own verdict that the server has no sessions (a standalone server without
      // them, mongo-java-server); any other client error is an error.
      if (String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT)
          .contains("support sessions")
          || String.valueOf(e.getMessage()).contains("Sessions are not supported")) {
        return false;
      }
      throw e;
    } catch (MongoCommandException e) {
      if (e.getErrorCode() == 20 || e.getErrorCode() == 263) { // IllegalOperation, OperationNotSupportedInTransaction
        return false;
      }
      throw e;
    }
  }

  /** Thrown inside a transaction when the lock document is held by the lock protocol. */
  private static final class Busy extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Busy() {
      super(null, null, false, false);
    }
  }

  /** Thrown inside a transaction when the plan is too large for one. */
  private static final class TooLarge extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TooLarge() {
      super(null, null, false, false);
    }
  }

  /**
   * Runs a change in one transaction, waiting while the lock protocol holds the tree.
   *
   * @return the outcome, or null if the plan is too large for a transaction
   */
  MongoTreeStore.@Nullable Outcome run(String what, MongoTreeStore.Planner planner,
      @Nullable ClientSession callers) {
    lock.read(); // creates the lock document outside the transaction on first use
    MongoCollection<BsonDocument> raw = data.withDocumentClass(BsonDocument.class);
    String waiting = null;
    ClientSession session = callers != null ? callers : client.startSession();
    try {
      for (;;) {
        try {
          MongoTreeStore.Outcome o = session.withTransaction(() -> {
            BsonDocument after = raw.findOneAndUpdate(session,
                and(eq("_id", TreeLock.LOCK_ID), eq(TreeLock.STATE + ".owner", null),
                    eq(TreeLock.STATE + ".stuck", null)),
                Updates.inc(TreeLock.STATE + ".version", 2L),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
                    .projection(Projections.include(TreeLock.STATE)));
            if (after == null) {
              throw new Busy();
            }
            long v = new TreeLock.State(after).version - 1;
            Change c = new Change(data, session, () -> {}, v);
            planner.plan(c);
            if (c.steps().size() > MAX_STEPS) {
              throw new TooLarge();
            }
            if (c.steps().isEmpty()) {
              return MongoTreeStore.Outcome.NONE;
            }
            List<WriteModel<BsonDocument>> models = new ArrayList<>();
            for (int k = 0; k < c.steps().size(); k++) {
              models.add(c.steps().get(k).model(v, k + 1));
            }
            BulkWriteResult r = raw.bulkWrite(session, models);
            return new MongoTreeStore.Outcome(v, r.getDeletedCount());
          }, OPTIONS);
          if (o.version() >= 0) {
            lock.onCommitted.accept(o.version());
          }
          return o;
        } catch (Busy busy) {
          waiting = waiting == null ? lock.readerToken() : waiting;
          lock.awaitQuiet(waiting);
        } catch (TooLarge tooLarge) {
          return null;
        }
      }
    } finally {
      if (waiting != null) {
        lock.unregister(waiting);
      }
      if (session != callers) {
        session.close();
      }
    }
  }

  /**
   * Claims the lock document inside {@code session}'s transaction, or, if it is held by the lock
   * protocol (or stuck), waits until it is free and throws a transient transaction error: the
   * caller's transaction, whose snapshot predates the release, must be retried.
   *
   * @return the version of the change
   */
  private long claimIn(ClientSession session, MongoCollection<BsonDocument> raw) {
    BsonDocument after = raw.findOneAndUpdate(session,
        and(eq("_id", TreeLock.LOCK_ID), eq(TreeLock.STATE + ".owner", null),
            eq(TreeLock.STATE + ".stuck", null)),
        Updates.inc(TreeLock.STATE + ".version", 2L),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(TreeLock.STATE)));
    if (after == null) {
      throw busy();
    }
    return new TreeLock.State(after).version - 1;
  }

  private MongoException busy() {
    String waiting = lock.readerToken();
    try {
      lock.awaitQuiet(waiting);
    } finally {
      lock.unregister(waiting);
    }
    MongoException e = new MongoException("Tree '" + data.getNamespace().getFullName()
        + "' was being changed by another caller when this transaction read it; retry the"
        + " transaction");
    e.addLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
    return e;
  }

  /**
   * Makes a change inside the caller's transaction: claims the lock document in it, plans and
   * writes in it; neither commits nor aborts.
   */
  MongoTreeStore.Outcome runIn(ClientSession session, String what,
      MongoTreeStore.Planner planner) {
    lock.read(); // the lock document exists before the transaction writes it
    MongoCollection<BsonDocument> raw = data.withDocumentClass(BsonDocument.class);
    long v = claimIn(session, raw);
    Change c = new Change(data, session, () -> {}, v);
    planner.plan(c);
    if (c.steps().isEmpty()) {
      return new MongoTreeStore.Outcome(-1, 0);
    }
    List<WriteModel<BsonDocument>> models = new ArrayList<>();
    for (int k = 0; k < c.steps().size(); k++) {
      models.add(c.steps().get(k).model(v, k + 1));
    }
    BulkWriteResult r = raw.bulkWrite(session, models);
    return new MongoTreeStore.Outcome(v, r.getDeletedCount());
  }

  /**
   * Reads inside the caller's transaction: its snapshot is consistent, unless it caught a
   * lock-protocol change half-way, which the lock document in the same snapshot tells.
   */
  <T> T readIn(ClientSession session, java.util.function.Function<Reads, T> body,
      boolean isolated) {
    T result = body.apply(new Reads(data, session, () -> {}, false));
    if (isolated) {
      BsonDocument d = data.withDocumentClass(BsonDocument.class)
          .find(session, eq("_id", TreeLock.LOCK_ID))
          .projection(Projections.include(TreeLock.STATE)).first();
      if (d != null) {
        TreeLock.State s = new TreeLock.State(d);
        lock.checkNotStuck(s);
        if (!s.quiet()) {
          throw busy();
        }
      }
    }
    return result;
  }
}
