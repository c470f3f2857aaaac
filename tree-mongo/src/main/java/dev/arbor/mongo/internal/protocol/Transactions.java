package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoClientException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.CountOptions;
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
 * other whichever way each process opened the collection. A change too large for one transaction
 * (more than {@value #MAX_STEPS} steps or {@value #MAX_DOCUMENTS} documents), or one the server
 * keeps refusing, is left to the lock protocol (see {@link #run}).
 */
public final class Transactions {
  private static final class LoggerHolder {
    static final org.slf4j.Logger LOG =
        org.slf4j.LoggerFactory.getLogger(Transactions.class);
  }

  /** The most steps a change makes in one transaction; larger plans use the lock and journal. */
  static final int MAX_STEPS = 1_000;

  /**
   * The most documents a change writes in one transaction by default: MongoDB advises against
   * modifying more than 1 000 documents in one (its runtime limit, 60 s by default, and the
   * cache share of an uncommitted transaction); larger changes use the lock and journal.
   */
  public static final int MAX_DOCUMENTS = 1_000;

  /** How often a change is tried in a transaction that fails transiently. */
  public static final int MAX_ATTEMPTS = 3;

  /** How long an unknown commit result is retried, as the driver's {@code withTransaction}. */
  private static final java.time.Duration COMMIT_RETRY = java.time.Duration.ofSeconds(120);

  private static final int TRANSACTION_EXCEEDED_LIFETIME = 290;
  private static final int TRANSACTION_TOO_LARGE = 334;
  private static final java.util.Set<String> TOO_LARGE_NAMES = java.util.Set.of(
      "TransactionTooLarge", "TransactionTooLargeForCache",
      "TransactionExceededLifetimeLimitSeconds");

  /**
   * The options of every transaction Arbor starts (the probe's and each change's). The read
   * preference is primary whatever the client's: a transaction's reads must go to the primary,
   * and the driver would otherwise take the client's preference ({@code secondaryPreferred}
   * fails every read in a transaction with "Read preference in a transaction must be primary").
   */
  static final TransactionOptions OPTIONS = TransactionOptions.builder()
      .readPreference(ReadPreference.primary())
      .readConcern(ReadConcern.SNAPSHOT).writeConcern(WriteConcern.MAJORITY).build();

  private final @Nullable MongoClient client;
  private final MongoCollection<Document> data;
  private final TreeLock lock;
  private volatile @Nullable Boolean available;
  /** The most documents one transaction writes ({@link #MAX_DOCUMENTS} but in tests). */
  private final long maxDocuments;
  /** How many changes were left to the lock protocol after trying a transaction (for tests). */
  public final java.util.concurrent.atomic.AtomicLong leftToTheLock =
      new java.util.concurrent.atomic.AtomicLong();

  public Transactions(@Nullable MongoClient client, MongoCollection<Document> data, TreeLock lock,
      long maxDocuments) {
    this.maxDocuments = maxDocuments;
    this.client = client;
    this.data = data;
    this.lock = lock;
  }

  /**
   * Whether the server runs transactions; probed once with an empty transaction. Only a definite
   * "no" (no sessions, or transactions refused as an illegal operation on a standalone server)
   * selects the lock protocol; any other error is thrown, not taken for a "no".
   */
  public boolean available() {
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
      session.withTransaction(() -> data.find(session, lock.lockKey()).first(), OPTIONS);
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
      // IllegalOperation, OperationNotSupportedInTransaction
      if (e.getErrorCode() == 20 || e.getErrorCode() == 263) {
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

    TooLarge(String why) {
      super(why, null, false, false);
    }
  }

  /**
   * Runs a change in one transaction, waiting while the lock protocol holds the tree.
   *
   * <p>A transaction that cannot succeed is not retried for long: a plan of more than
   * {@value #MAX_STEPS} steps, or whose writes would touch more than {@link #maxDocuments}
   * documents (counted in the transaction before anything is written), a transaction the server
   * refuses as too large or too long, and one that still fails transiently after
   * {@value #MAX_ATTEMPTS} attempts (a transaction past 5% of the WiredTiger cache fails with a
   * write conflict, which the driver's {@code withTransaction} would retry for two minutes) are
   * all left to the lock protocol, which has no such limits. Each such transaction was aborted,
   * so nothing of it is applied.
   *
   * @return the outcome, or null if the change is to be made by the lock protocol instead
   */
  public @Nullable Outcome run(String what, Planner planner,
      @Nullable ClientSession callers) {
    lock.read(); // creates the lock document outside the transaction on first use
    MongoCollection<BsonDocument> raw = data.withDocumentClass(BsonDocument.class);
    String waiting = null;
    ClientSession session = callers != null ? callers : client.startSession();
    int attempts = 0;
    try {
      for (;;) {
        session.startTransaction(OPTIONS);
        try {
          Outcome o = attempt(session, raw, planner);
          commit(session);
          return o;
        } catch (Busy busy) {
          abort(session);
          waiting = waiting == null ? lock.readerToken() : waiting;
          lock.awaitQuiet(waiting);
        } catch (TooLarge tooLarge) {
          abort(session);
          LoggerHolder.LOG.debug("{}: {} is too large for one transaction ({}); it uses the lock",
              data.getNamespace().getFullName(), what, tooLarge.getMessage());
          leftToTheLock.incrementAndGet();
          return null;
        } catch (MongoException e) {
          abort(session);
          switch (verdict(e, ++attempts)) {
            case RETRY:
              continue;
            case USE_THE_LOCK:
              LoggerHolder.LOG.info("{}: {} failed in a transaction ({}); it uses the lock",
                  data.getNamespace().getFullName(), what, e.getMessage());
              leftToTheLock.incrementAndGet();
              return null;
            default:
              throw e;
          }
        } catch (RuntimeException e) {
          abort(session);
          throw e;
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

  /** One attempt of a change inside the session's started transaction. */
  private Outcome attempt(ClientSession session,
      MongoCollection<BsonDocument> raw, Planner planner) {
    BsonDocument after = raw.findOneAndUpdate(session,
        and(lock.lockKey(), eq(TreeLock.STATE + ".owner", null),
            eq(TreeLock.STATE + ".stuck", null)),
        Updates.inc(TreeLock.STATE + ".version", 2L),
        new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)
            .projection(Projections.include(TreeLock.STATE)));
    if (after == null) {
      throw new Busy();
    }
    long v = new TreeLock.State(after).version - 1;
    Change c = new Change(data, lock.scope(), session, () -> {}, v);
    planner.plan(c);
    if (c.steps().size() > MAX_STEPS) {
      throw new TooLarge(c.steps().size() + " steps");
    }
    if (c.steps().isEmpty()) {
      return Outcome.NONE;
    }
    long touched = touched(session, raw, c.steps());
    if (touched > maxDocuments) {
      throw new TooLarge("more than " + maxDocuments + " documents");
    }
    List<WriteModel<BsonDocument>> models = new ArrayList<>();
    for (int k = 0; k < c.steps().size(); k++) {
      models.add(c.steps().get(k).model(v, k + 1));
    }
    BulkWriteResult r = raw.bulkWrite(session, models);
    return new Outcome(v, r.getDeletedCount());
  }

  /**
   * How many documents the steps touch, at most {@code maxDocuments + 1}: one each for the
   * single-document steps, a bounded count in the transaction for each step on many.
   */
  private long touched(ClientSession session, MongoCollection<BsonDocument> raw,
      List<Step> steps) {
    long n = 0;
    for (Step s : steps) {
      boolean multi = s instanceof Step.Update u ? u.multi()
          : s instanceof Step.Delete d && d.multi();
      if (!multi) {
        n++;
      } else {
        BsonDocument filter = s instanceof Step.Update u ? u.filter() : ((Step.Delete) s).filter();
        n += raw.countDocuments(session, filter, new CountOptions().collation(Reads.SIMPLE)
            .limit((int) Math.min(Integer.MAX_VALUE, maxDocuments + 1 - n)));
      }
      if (n > maxDocuments) {
        return n;
      }
    }
    return n;
  }

  private static void abort(ClientSession session) {
    if (session.hasActiveTransaction()) {
      try {
        session.abortTransaction();
      } catch (MongoException | IllegalStateException ignored) {
        // the server aborts an abandoned transaction itself, and a commit that failed with a
        // transient error left nothing to abort: nothing of it was committed
      }
    }
  }

  /**
   * Commits, retrying the commit (never the body) while its result is unknown, as the driver's
   * {@code withTransaction} does: a change whose commit may have happened must not be made again
   * by the lock protocol.
   */
  private void commit(ClientSession session) {
    long deadline = System.nanoTime() + COMMIT_RETRY.toNanos();
    for (;;) {
      try {
        session.commitTransaction();
        return;
      } catch (MongoException e) {
        if (e.hasErrorLabel(MongoException.UNKNOWN_TRANSACTION_COMMIT_RESULT_LABEL)
            && System.nanoTime() < deadline && !isMaxTimeExpired(e)) {
          continue;
        }
        throw e;
      }
    }
  }

  private static boolean isMaxTimeExpired(MongoException e) {
    return e.getCode() == 50; // MaxTimeMSExpired: the driver does not retry it either
  }

  /** What to do after a transaction attempt failed with {@code e}. */
  public enum Verdict { RETRY, USE_THE_LOCK, THROW }

  /**
   * What to do after attempt number {@code attempts} failed with {@code e}: transient errors are
   * retried {@value #MAX_ATTEMPTS} times, then the lock protocol takes the change; errors that
   * say the transaction can never fit (too large for the cache or the oplog, past its lifetime)
   * go to the lock protocol at once; a commit whose result is unknown, and every other error, are
   * thrown (the change may have been applied, or is refused for a reason the lock would not fix).
   */
  public static Verdict verdict(MongoException e, int attempts) {
    if (e.hasErrorLabel(MongoException.UNKNOWN_TRANSACTION_COMMIT_RESULT_LABEL)) {
      return Verdict.THROW;
    }
    String name = e instanceof MongoCommandException c ? c.getErrorCodeName() : "";
    if (TOO_LARGE_NAMES.contains(name) || e.getCode() == TRANSACTION_TOO_LARGE
        || e.getCode() == TRANSACTION_EXCEEDED_LIFETIME) {
      return Verdict.USE_THE_LOCK;
    }
    if (e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
      return attempts < MAX_ATTEMPTS ? Verdict.RETRY : Verdict.USE_THE_LOCK;
    }
    return Verdict.THROW;
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
        and(lock.lockKey(), eq(TreeLock.STATE + ".owner", null),
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
  Outcome runIn(ClientSession session, String what,
      Planner planner) {
    lock.read(); // the lock document exists before the transaction writes it
    MongoCollection<BsonDocument> raw = data.withDocumentClass(BsonDocument.class);
    long v = claimIn(session, raw);
    Change c = new Change(data, lock.scope(), session, () -> {}, v);
    planner.plan(c);
    if (c.steps().isEmpty()) {
      return new Outcome(-1, 0);
    }
    List<WriteModel<BsonDocument>> models = new ArrayList<>();
    for (int k = 0; k < c.steps().size(); k++) {
      models.add(c.steps().get(k).model(v, k + 1));
    }
    BulkWriteResult r = raw.bulkWrite(session, models);
    return new Outcome(v, r.getDeletedCount());
  }

  /**
   * Reads inside the caller's transaction: its snapshot is consistent, unless it caught a
   * lock-protocol change half-way, which the lock document in the same snapshot tells.
   */
  <T> T readIn(ClientSession session, java.util.function.Function<Reads, T> body,
      boolean isolated) {
    T result = body.apply(new Reads(data, lock.scope(), session, () -> {}, false));
    if (isolated) {
      BsonDocument d = data.withDocumentClass(BsonDocument.class)
          .find(session, lock.lockKey())
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
