package dev.arbor.mongo.internal.protocol;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.model.Updates;
import dev.arbor.core.LockLostException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The lease of one {@linkplain TreeLock.Hold hold}. While it is open, a background task of the
 * {@link LeaseScheduler} renews it every third of the lease (unless the holder renewed it
 * meanwhile), so that a live holder keeps its lock for as long as its call runs, however slow its
 * round trips; a holder that stops (a crash, a pause of its process, a partition) stops renewing,
 * and its lease expires. Closing it stops the renewals; so does the end of the thread that took
 * it. A lease is renewed by the server's clock ({@code $currentDate}): whether it has expired is
 * only ever judged by the server's time too (see {@link LockQueue}).
 */
public final class Lease implements AutoCloseable {
  private final LockDocument lock;
  private final String token;
  private final String what;
  private volatile long renewedAt;
  private final Thread thread = Thread.currentThread();
  private volatile @Nullable Future<?> renewal;

  /**
   * @param keepAlive whether to renew in the background (off in tests of a paused process)
   */
  public Lease(LockDocument lock, String token, String what, boolean keepAlive,
      LeaseScheduler renewals) {
    this.lock = lock;
    this.token = token;
    this.what = what;
    this.renewedAt = lock.timing.nanoTime();
    if (keepAlive) {
      long period = Math.max(1, lock.leaseMillis / 3);
      renewal = renewals.every(period, this::renewInBackground);
    }
  }

  private boolean due() {
    return lock.timing.nanoTime() - renewedAt
        > TimeUnit.MILLISECONDS.toNanos(lock.leaseMillis) / 3;
  }

  /**
   * Whether a tick of the background renewal renews: unless the lease was renewed within the last
   * half period. (A tick comes one period after the last; had it waited for a whole period since
   * the last renewal, which is stamped a little after its tick, it would skip every other tick,
   * and the server would see a renewal every two thirds of the lease only.)
   */
  private boolean dueInBackground() {
    return lock.timing.nanoTime() - renewedAt
        > TimeUnit.MILLISECONDS.toNanos(lock.leaseMillis) / 6;
  }

  /** Renews the lease if a third of it has passed since the last renewal. */
  void renewIfDue() {
    if (due()) {
      renew();
    }
  }

  /**
   * Renews the lease.
   *
   * @throws LockLostException if this holder no longer holds the lock
   */
  void renew() {
    if (!renewOnServer()) {
      throw lock.lostTo(what, lock.read());
    }
  }

  private boolean renewOnServer() {
    long sent = lock.timing.nanoTime(); // the server's renewal is at or after this moment
    if (lock.raw.updateOne(and(lock.lockKey(), eq(LockDocument.OWNER, token)),
        Updates.currentDate(LockDocument.RENEWED)).getMatchedCount() == 0) {
      return false;
    }
    renewedAt = sent;
    return true;
  }

  private void renewInBackground() {
    if (!thread.isAlive()) {
      close();
      return;
    }
    if (!dueInBackground()) {
      return;
    }
    try {
      if (!renewOnServer()) {
        close(); // lost: the holder's next fenced write finds out
      }
    } catch (RuntimeException e) {
      // tried again at the next period; the holder's own writes report a lasting failure
    }
  }

  /** Notes a renewal made by a fence of the holder's own writes. */
  public void renewed() {
    renewedAt = lock.timing.nanoTime();
  }

  /** Stops renewing this lease. */
  @Override
  public void close() {
    Future<?> r = renewal;
    if (r != null) {
      r.cancel(false);
      renewal = null;
    }
  }
}
