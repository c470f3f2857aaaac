package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoBulkWriteException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The sending of a program on a server that stops an ordered bulk write at its first error
 * (MongoDB): statements go in ordered bulk writes of one kind each: updates (with the lead, the
 * journal, inserts as upserts, the release) led by a fence, so that the server stops before the
 * first data write when this caller no longer holds the lock; each sent with a time limit shorter
 * than the lease ({@link Fences#timed}), which the fence renews as the command starts.
 *
 * <p>Deletes, which the driver sends as a command of their own, cannot be led by a fence: a
 * holder paused between its fence and its deletes would send them after its lease, and their
 * time limit counts from their own arrival. So they are bounded as on a server that goes on after
 * errors ({@link DeadlineExecution}): a lone fence ({@code findOneAndUpdate}: the lead itself when
 * deletes follow it, else a renewal once a third of the lease has passed) tells the server's time
 * of the renewal; every delete applies only before that time plus the lease, and the release (or
 * a closing fence) after them fails once it has passed. A delete command sent late changes
 * nothing, and is sent again behind a new fence if this caller still holds the lock.
 */
final class OrderedExecution extends Execution {
  /** Whether the batch being built is one of deletes, bounded by the lone fence's deadline. */
  private boolean bounding;

  OrderedExecution(TreeLock facade, String token, String origin,
      TreeLock.@Nullable Quiet claim,
      long v, String what, List<Step> steps, List<TreeLock.Statement> program, int commitPoint,
      boolean journaled, TreeLock.@Nullable Hold hold) {
    super(facade, token, origin, claim, v, what, steps, program, commitPoint, journaled, hold);
  }

  /**
   * A lone fence before a batch of deletes, unless one was sent less than a third of the lease
   * ago: the lead itself when the deletes follow it (it would go alone anyway).
   */
  @Override
  int beforeBatch(int next, int kind, long start) {
    if (next == 0 && program.size() > 1 && Fences.kind(program.get(1)) == 2) {
      return loneFence(0, start, true);
    }
    if (kind == 2 && !freshFence()) {
      return loneFence(next, start, true);
    }
    return next;
  }

  /**
   * The first batch is led by the program's lead (claim or fence); a later batch of updates by a
   * fence, unless it is the release alone (itself a fence).
   */
  @Override
  int lead(List<TreeLock.Statement> batch, List<Integer> index, int next, int kind) {
    bounding = kind == 2;
    if (bounding) {
      return next; // bounded by the lone fence sent before it
    }
    if (next == 0) {
      batch.add(program.get(0));
      index.add(0);
      if (grew()) {
        // Sent again after a step alone outlasted its time limit: the batch's time limit is now
        // that of the longer lease, which the lock document must hold before the steps run.
        batch.add(new TreeLock.Statement(fencing.fence(token, null, leaseMillis), 0));
        index.add(-1);
        leased = true;
      }
      return 1;
    }
    if (kind == 0 && next != program.size() - 1) {
      batch.add(new TreeLock.Statement(fencing.fence(token, null, leaseMillis), 0));
      index.add(-1);
      leased = true;
    } else if (kind == 0) {
      leased = true; // the release alone, itself a fence: it lands whole or not at all
    }
    return next;
  }

  @Override
  TreeLock.Statement bounded(TreeLock.Statement s) {
    return bounding ? new TreeLock.Statement(Fences.withDeadline(s.model(), deadline), s.step())
        : s;
  }

  /**
   * Closes a batch of deletes that the release does not close: it fails if the batch ran on past
   * the lease. (The server stopped a batch of updates at its first failed statement.)
   */
  @Override
  void close(List<TreeLock.Statement> batch, List<Integer> index, int kind) {
    if (bounding && index.get(index.size() - 1) != program.size() - 1) {
      batch.add(new TreeLock.Statement(fencing.closing(token, deadline), 0));
      index.add(-2);
    }
  }

  /**
   * The server stopped at statement {@code i}: the step ran if it came before, unless it is a
   * delete bounded by a deadline, which its count tells.
   */
  @Override
  boolean stepRan(MongoBulkWriteException e, List<Integer> index, int i) {
    return bounding ? ranAlone(e, index.indexOf(1)) : index.indexOf(1) < i;
  }

  /** The closing fence of a batch of deletes, or the release that closes one. */
  @Override
  boolean closingFence(int at) {
    return at == -2 || (bounding && at == program.size() - 1);
  }
}
