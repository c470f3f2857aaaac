package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.UpdateOneModel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * The sending of a program on a server that goes on after a failed statement (mongo-java-server):
 * each batch is preceded by a fence of its own ({@code findOneAndUpdate}), which tells the
 * server's time of the renewal; every update and delete of the batch then applies only before
 * that time plus the lease ({@link Fences#withDeadline}), and the batch ends with a fence bounded
 * the same way: a batch sent late changes nothing, and is sent again behind a new fence if this
 * caller still holds the lock. An insert command is fenced by its insert fence alone.
 */
public final class DeadlineExecution extends Execution {
  /** When the lease of the last fence ends (the server's clock). */
  private long deadline;
  /** When the last lone fence was sent (local clock), 0: never. */
  private long fencedAt;

  public DeadlineExecution(TreeLock facade, String token, String origin,
      TreeLock.@Nullable Quiet claim, long v, String what, List<Step> steps,
      List<TreeLock.Statement> program, int commitPoint, boolean journaled,
      TreeLock.@Nullable Hold hold) {
    super(facade, token, origin, claim, v, what, steps, program, commitPoint, journaled, hold);
  }

  /**
   * Sends the lead as a command of its own at the start, and a renewal before a batch of updates
   * or deletes once a third of the lease has passed since the last one.
   */
  @Override
  public int beforeBatch(int next, int kind, long start) {
    boolean fresh = fencedAt != 0 && lock.timing.nanoTime() - fencedAt
        < TimeUnit.MILLISECONDS.toNanos(lock.leaseMillis) / 3;
    if (next == 0 || (kind != 1 && !fresh)) {
      return loneFence(next, start);
    }
    return next;
  }

  /**
   * On a server that goes on after errors: sends the lead (at the start) or a renewal as a
   * command of its own, and learns from it until when the lease holds.
   *
   * @return the program index to go on from
   */
  private int loneFence(int next, long start) {
    UpdateOneModel<BsonDocument> m = (UpdateOneModel<BsonDocument>) (next == 0
        ? program.get(0).model() : fencing.fence(token, null, leaseMillis));
    for (;;) {
      try {
        fencedAt = lock.timing.nanoTime();
        BsonDocument after = facade.sender.fence(fencing.timed(leaseMillis), m.getFilter(),
            m.getUpdate());
        TreeLock.State s = new TreeLock.State(after);
        deadline = s.renewed + (s.lease > 0 ? s.lease : leaseMillis);
        if (hold != null) {
          hold.renewed();
        }
        if (next == 0) {
          leadAcked = true;
          if (commitPoint == 0) {
            committed = true;
          }
          return 1;
        }
        return next;
      } catch (MongoCommandException | MongoWriteException e) {
        if (!MongoErrors.duplicateKey(e)) {
          throw e;
        }
        if (next == 0 && claim != null && !uncertain) {
          throw new TreeLock.ClaimRefused();
        }
        return settleLost();
      } catch (MongoException e) {
        if (!MongoErrors.transientError(e)) {
          throw e;
        }
        if (next == 0) {
          uncertain = true; // the lead may have gone through
        }
        retryAfter(e, start);
      } catch (IllegalStateException e) { // the client was closed under the change
        throw interrupted(e, next == 0 && commitPoint == 0);
      }
    }
  }

  /** Nothing: the lone fence sent before the batch leads it. */
  @Override
  public int lead(List<TreeLock.Statement> batch, List<Integer> index, int next, int kind) {
    return next;
  }

  @Override
  public TreeLock.Statement bounded(TreeLock.Statement s) {
    return new TreeLock.Statement(Fences.withDeadline(s.model(), deadline), s.step());
  }

  /** Closes a batch of updates or deletes: it fails if the batch ran on past the lease. */
  @Override
  public void close(List<TreeLock.Statement> batch, List<Integer> index, int kind) {
    if (kind != 1 && index.get(index.size() - 1) != program.size() - 1) {
      batch.add(new TreeLock.Statement(fencing.closing(token, deadline), 0));
      index.add(-2);
    }
  }

  @Override
  public boolean stepRan(MongoBulkWriteException e, List<Integer> index, int i) {
    return ranAlone(e, index.indexOf(1));
  }

  /** The closing fence of a batch, or the release, which closes the last one. */
  @Override
  public boolean closingFence(int at) {
    return at == -2 || at == program.size() - 1;
  }

  /**
   * Whether the single step of a change without journal ran, from the answer to the command
   * that carried it on a server that goes on after a failed statement: the batch held the step
   * (bounded by its deadline) and the release, which failed, so the counts are the step's.
   */
  private boolean ranAlone(MongoBulkWriteException e, int at) {
    Step step = steps.get(0);
    if (step instanceof Step.Insert) {
      // led by its insert fence, which the server counts too: the insert ran unless refused
      for (BulkWriteError error : e.getWriteErrors()) {
        if (error.getIndex() <= at) {
          return false;
        }
      }
      return true;
    }
    BulkWriteResult r = e.getWriteResult();
    return step instanceof Step.Update ? r.getMatchedCount() > 0 : r.getDeletedCount() > 0;
  }
}
