package dev.arbor.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Progress of a long run on stderr: each phase that lasts longer than the interval gets a line
 * every interval, with a node count where one is known and the time spent; short runs print
 * nothing but their summary. Disabled by {@code --quiet}.
 */
final class Progress implements AutoCloseable {
  private final PrintWriter err;
  private final boolean enabled;
  private final long intervalMillis;
  private final long start = System.nanoTime();
  private final ScheduledExecutorService ticker;
  private final ScheduledFuture<?> task;

  private volatile String phase;
  private volatile LongSupplier counter;
  private volatile long total;
  private volatile long phaseStart;

  Progress(PrintWriter err, boolean enabled, long intervalMillis) {
    this.err = err;
    this.enabled = enabled;
    this.intervalMillis = intervalMillis;
    if (enabled && intervalMillis > 0) {
      ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "arbor-progress");
        t.setDaemon(true);
        return t;
      });
      task = ticker.scheduleAtFixedRate(this::tick, intervalMillis, intervalMillis,
          TimeUnit.MILLISECONDS);
    } else {
      ticker = null;
      task = null;
    }
  }

  /** Starts a phase without a count. */
  void phase(String description) {
    phase(description, null, -1);
  }

  /**
   * Starts a phase.
   *
   * @param counter the nodes done so far, or null
   * @param total the nodes to do, or -1 if unknown
   */
  void phase(String description, LongSupplier counter, long total) {
    this.counter = counter;
    this.total = total;
    this.phaseStart = System.nanoTime();
    this.phase = description;
  }

  private void tick() {
    String p = phase;
    if (p == null || System.nanoTime() - phaseStart < TimeUnit.MILLISECONDS.toNanos(
        intervalMillis)) {
      return;
    }
    StringBuilder line = new StringBuilder("arbor: ").append(p);
    LongSupplier c = counter;
    if (c != null) {
      line.append(": ").append(String.format(Locale.ROOT, "%,d", c.getAsLong()));
      if (total >= 0) {
        line.append(String.format(Locale.ROOT, " of %,d", total));
      }
      line.append(" nodes");
    }
    line.append(" (").append(seconds(System.nanoTime() - phaseStart)).append(')');
    synchronized (err) {
      err.println(line);
      err.flush();
    }
  }

  /** Prints the closing line of a successful run, with the total time. */
  void done(String summary) {
    phase = null;
    if (enabled) {
      synchronized (err) {
        err.println(summary + " in " + seconds(System.nanoTime() - start));
        err.flush();
      }
    }
  }

  /** Prints a note (a warning that is not an error), unless quiet. */
  void note(String message) {
    if (enabled) {
      synchronized (err) {
        err.println("arbor: " + message);
        err.flush();
      }
    }
  }

  static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
  }

  @Override
  public void close() {
    phase = null;
    if (ticker != null) {
      task.cancel(false);
      ticker.shutdownNow();
    }
  }
}
