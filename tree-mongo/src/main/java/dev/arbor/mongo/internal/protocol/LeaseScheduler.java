package dev.arbor.mongo.internal.protocol;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs the background renewals of held leases. Injected (through {@link ServerCapabilities}), so
 * that a test can pause the renewals of one store as a paused process would.
 *
 * <p>The default cannot be starved by a busy JVM: one timer thread of the highest priority, which
 * does nothing but hand each renewal to a thread of its own from a cached pool, so that a renewal
 * waiting on its network round trip never delays another hold's renewal; a renewal still running
 * when its next period comes is not started twice.
 */
public interface LeaseScheduler {
  /** Runs {@code renewal} every {@code periodMillis} until the returned handle is cancelled. */
  public Future<?> every(long periodMillis, Runnable renewal);

  /** The JVM's shared scheduler (daemon threads: they never keep a JVM alive). */
  public LeaseScheduler SYSTEM = new LeaseScheduler() {
    private final ScheduledThreadPoolExecutor timer = timer();
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "arbor-lease-renewal");
      t.setDaemon(true);
      t.setPriority(Thread.MAX_PRIORITY);
      return t;
    });

    private ScheduledThreadPoolExecutor timer() {
      ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "arbor-lease-timer");
        t.setDaemon(true);
        t.setPriority(Thread.MAX_PRIORITY);
        return t;
      });
      e.setRemoveOnCancelPolicy(true);
      return e;
    }

    @Override
    public Future<?> every(long periodMillis, Runnable renewal) {
      AtomicReference<Future<?>> running = new AtomicReference<>();
      ScheduledFuture<?> tick = timer.scheduleAtFixedRate(() -> {
        Future<?> last = running.get();
        if (last == null || last.isDone()) {
          running.set(workers.submit(renewal));
        }
      }, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
      return tick;
    }
  };
}
