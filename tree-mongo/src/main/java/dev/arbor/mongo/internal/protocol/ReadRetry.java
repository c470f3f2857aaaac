package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoException;
import dev.arbor.core.ChangeInterruptedException;
import java.util.function.Supplier;

/**
 * How a read outlives a cut or stalled connection: after an I/O error or a timeout (a transient
 * error, {@link MongoErrors#transientError}) it pauses as the lock's own commands do and is made
 * again, until the lock wait has run out since the first error of a run of them; then it ends
 * with {@link ChangeInterruptedException} {@code NOT_APPLIED} naming the tree, never with a raw
 * driver exception (docs/guarantees.md, "What an exception means"). Any other driver error is
 * thrown as it is. Nothing a read does writes a node, so making it again is always safe.
 *
 * <p>One object per read or stream, used by one thread.
 */
public final class ReadRetry {
  private final LockDocument lock;
  /** When the current run of errors began ({@link Timing#nanoTime}), or -1: none. */
  private long since = -1;

  /** Whether it retries the server checks of a store being opened, not a read. */
  private final boolean opening;

  /** A retry of reads of the tree of {@code lock}, bounded by its lock wait. */
  public ReadRetry(LockDocument lock) {
    this(lock, false);
  }

  private ReadRetry(LockDocument lock, boolean opening) {
    this.lock = lock;
    this.opening = opening;
  }

  /**
   * Runs {@code read} (a whole read: its lock checks and its queries), made again after each
   * transient error until the lock wait runs out.
   */
  public static <T> T run(LockDocument lock, Supplier<T> read) {
    return new ReadRetry(lock).retrying(read);
  }

  /**
   * Runs the server checks of a store being opened ({@code check}), made again after each
   * transient error until the lock wait runs out; then {@link ChangeInterruptedException} {@code
   * NOT_APPLIED} saying the tree could not be opened.
   */
  public static void opening(LockDocument lock, Runnable check) {
    new ReadRetry(lock, true).retrying(() -> {
      check.run();
      return null;
    });
  }

  /**
   * Runs {@code read} (a whole query, or a whole read), made again after each transient error
   * until the lock wait has run out since this run of errors began; its success ends the run.
   */
  public <T> T retrying(Supplier<T> read) {
    for (;;) {
      try {
        T answer = read.get();
        succeeded();
        return answer;
      } catch (MongoException e) {
        failed(e);
      } catch (IllegalStateException e) {
        throw clientClosed(e)
            ? closed((opening ? "open" : "read") + " tree '" + lock.tree + "'", e) : e;
      }
    }
  }

  /**
   * Whether {@code e} is the driver's refusal of a call on a closed {@code MongoClient}: an
   * {@link IllegalStateException} "state should be: open", not a {@link MongoException}.
   */
  public static boolean clientClosed(RuntimeException e) {
    return e instanceof IllegalStateException && "state should be: open".equals(e.getMessage());
  }

  /**
   * What a call whose client was closed before it wrote anything ends with, {@code what} saying
   * the call: {@link ChangeInterruptedException} {@code NOT_APPLIED}, as a change whose client
   * is closed under it before its commit point, never the driver's raw exception.
   */
  public static ChangeInterruptedException closed(String what, RuntimeException e) {
    return new ChangeInterruptedException("Could not " + what + ": its MongoClient is closed:"
        + " open the store on an open client; nothing was written",
        ChangeInterruptedException.Outcome.NOT_APPLIED, e);
  }

  /**
   * After the driver error {@code e}: throws it if it is not transient, throws {@link
   * ChangeInterruptedException} if the lock wait has run out since this run of errors began, and
   * otherwise pauses before the read is made again.
   */
  public void failed(MongoException e) {
    if (!MongoErrors.transientError(e)) {
      throw e;
    }
    if (since < 0) {
      since = lock.timing.nanoTime();
    }
    lock.retryPause(e, since, this::gaveUp);
  }

  /** Notes that the read went on: the next error starts a new run of them. */
  public void succeeded() {
    since = -1;
  }

  /** What a read (or an opening) that could not reach the server within the lock wait throws. */
  public ChangeInterruptedException gaveUp(MongoException e) {
    return new ChangeInterruptedException("Could not " + (opening ? "open" : "read") + " tree '"
        + lock.tree + "' (" + e.getMessage() + "): " + (opening ? "the server's checks were"
        : "the read was") + " made again until the lock wait of " + lock.waitMillis
        + " ms ran out; nothing was written, " + (opening ? "open it" : "read") + " again",
        ChangeInterruptedException.Outcome.NOT_APPLIED, e);
  }
}
