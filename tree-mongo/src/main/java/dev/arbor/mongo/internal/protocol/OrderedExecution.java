package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoBulkWriteException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The sending of a program on a server that stops an ordered bulk write at its first error
 * (MongoDB): statements go in ordered bulk writes of one kind each: updates (with the lead, the
 * journal, inserts as upserts, the release) led by a fence, so that the server stops before the
 * first data write when this caller no longer holds the lock; deletes, which the driver sends as
 * a command of their own, guarded so that one that arrives late deletes nothing a later change
 * wrote. Each batch is sent with a time limit shorter than the lease ({@link Fences#timed}).
 */
public final class OrderedExecution extends Execution {
  public OrderedExecution(TreeLock facade, String token, String origin, TreeLock.@Nullable Quiet claim,
      long v, String what, List<Step> steps, List<TreeLock.Statement> program, int commitPoint,
      boolean journaled, TreeLock.@Nullable Hold hold) {
    super(facade, token, origin, claim, v, what, steps, program, commitPoint, journaled, hold);
  }

  /** Nothing: the lead and the fences go in the batches themselves. */
  @Override
  public int beforeBatch(int next, int kind, long start) {
    return next;
  }

  /**
   * The first batch is led by the program's lead (claim or fence); a later batch of updates by a
   * fence, unless it is the release alone (itself a fence).
   */
  @Override
  public int lead(List<TreeLock.Statement> batch, List<Integer> index, int next, int kind) {
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
  public TreeLock.Statement bounded(TreeLock.Statement s) {
    return s;
  }

  @Override
  public void close(List<TreeLock.Statement> batch, List<Integer> index, int kind) {
    // the server stopped at the first failed statement: nothing ran after it
  }

  /** The server stopped at statement {@code i}: the step ran if it came before. */
  @Override
  public boolean stepRan(MongoBulkWriteException e, List<Integer> index, int i) {
    return index.indexOf(1) < i;
  }

  @Override
  public boolean closingFence(int at) {
    return at == -2;
  }
}
