package dev.arbor.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * Progress of a long run on stderr: each phase that lasts longer than the interval gets a line
 * every interval, with the nodes done where they are counted, the share done and an estimate of
 * the time left where the whole is known, and the time spent; short runs print nothing but their
 * summary. Disabled by {@code --quiet}.
 *
 * <pre>
 * arbor: reading big.json: 61,332 nodes, 41%, 1.2 s, about 2 s left
 * arbor: loading 150,000 nodes into arbor.t (nested-sets): 50,000 of 150,000 nodes (33%), 2.0 s, about 4 s left
 * </pre>
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
  private volatile DoubleSupplier fraction;
  private volatile long phaseStart;
  /** Whether the current phase got a line (guarded by {@code err}). */
  private boolean told;

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
    start(description, null, -1, null);
  }

  /**
   * Starts a phase that does a known number of nodes.
   *
   * @param counter the nodes done so far
   * @param total the nodes to do
   */
  void phase(String description, LongSupplier counter, long total) {
    start(description, counter, total, () -> total <= 0 ? Double.NaN
        : Math.min(1.0, (double) counter.getAsLong() / total));
  }

  /**
   * Starts a phase whose nodes are counted but not known in advance.
   *
   * @param counter the nodes done so far
   * @param fraction the share of the work done, from 0 to 1, or NaN if unknown
   */
  void phase(String description, LongSupplier counter, DoubleSupplier fraction) {
    start(description, counter, -1, fraction);
  }

  private void start(String description, LongSupplier counter, long total,
      DoubleSupplier fraction) {
    catchUp();
    this.counter = counter;
    this.total = total;
    this.fraction = fraction;
    this.phaseStart = System.nanoTime();
    synchronized (err) {
      told = false;
      this.phase = description;
    }
  }

  private void tick() {
    print(false);
  }

  /**
   * A phase that lasted longer than the interval without a line (its ticks came late: a busy
   * machine) gets one as it ends, so that every such phase is told.
   */
  private void catchUp() {
    if (ticker != null) {
      print(true);
    }
  }

  private void print(boolean onlyIfUntold) {
    String p = phase;
    long elapsed = System.nanoTime() - phaseStart;
    if (p == null || elapsed < TimeUnit.MILLISECONDS.toNanos(intervalMillis)) {
      return;
    }
    String line = line(p, counter == null ? -1 : counter.getAsLong(), total,
        fraction == null ? Double.NaN : fraction.getAsDouble(), elapsed);
    synchronized (err) {
      if (onlyIfUntold && told || p != phase) {
        return;
      }
      err.println(line);
      err.flush();
      told = true;
    }
  }

  /**
   * One progress line: the phase, the nodes done (of the total), the share done, the time spent
   * and, once a share is known, an estimate of the time left.
   *
   * @param done nodes done, or -1 if not counted
   * @param total nodes to do, or -1 if unknown
   * @param fraction the share done, or NaN if unknown
   */
  static String line(String phase, long done, long total, double fraction, long elapsedNanos) {
    StringBuilder line = new StringBuilder("arbor: ").append(phase).append(':');
    if (done >= 0) {
      line.append(String.format(Locale.ROOT, " %,d", done));
      if (total >= 0) {
        line.append(String.format(Locale.ROOT, " of %,d", total));
      }
      line.append(" nodes");
    }
    boolean share = fraction >= 0 && fraction <= 1;
    if (share) {
      line.append(done >= 0 && total >= 0 ? " (" : done >= 0 ? ", " : " ")
          .append(Math.round(fraction * 100)).append('%')
          .append(done >= 0 && total >= 0 ? ")" : "");
    }
    line.append(done >= 0 || share ? ", " : " ").append(seconds(elapsedNanos));
    if (share && fraction > 0.02 && fraction < 1) {
      line.append(", about ").append(left(elapsedNanos * (1 - fraction) / fraction))
          .append(" left");
    }
    return line.toString();
  }

  private static String left(double nanos) {
    double s = nanos / 1e9;
    if (s < 60) {
      return Math.max(1, Math.round(s)) + " s";
    }
    return Math.round(s / 60) + " min";
  }

  /** Prints the closing line of a successful run, with the total time. */
  void done(String summary) {
    catchUp();
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
