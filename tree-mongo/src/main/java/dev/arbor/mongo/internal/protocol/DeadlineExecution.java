package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoBulkWriteException;
import java.util.List;
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
final class DeadlineExecution extends Execution {
  DeadlineExecution(TreeLock facade, String token, String origin,
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
  int beforeBatch(int next, int kind, long start) {
    if (next == 0 || (kind != 1 && !freshFence())) {
      return loneFence(next, start);
    }
    return next;
  }

  /** Nothing: the lone fence sent before the batch leads it. */
  @Override
  int lead(List<TreeLock.Statement> batch, List<Integer> index, int next, int kind) {
    return next;
  }

  @Override
  TreeLock.Statement bounded(TreeLock.Statement s) {
    return new TreeLock.Statement(Fences.withDeadline(s.model(), deadline), s.step());
  }

  /** Closes a batch of updates or deletes: it fails if the batch ran on past the lease. */
  @Override
  void close(List<TreeLock.Statement> batch, List<Integer> index, int kind) {
    if (kind != 1 && index.get(index.size() - 1) != program.size() - 1) {
      batch.add(new TreeLock.Statement(fencing.closing(token, deadline), 0));
      index.add(-2);
    }
  }

  @Override
  boolean stepRan(MongoBulkWriteException e, List<Integer> index, int i) {
    return ranAlone(e, index.indexOf(1));
  }

  /** The closing fence of a batch, or the release, which closes the last one. */
  @Override
  boolean closingFence(int at) {
    return at == -2 || at == program.size() - 1;
  }
}
