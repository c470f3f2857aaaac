package dev.arbor.mongo.internal.protocol;


/**
 * The local passage of time as the lock protocol sees it: when a renewal is due, how long to wait
 * between polls, when a caller gives up waiting. Injected so that tests can make a holder slow or
 * time stand still; the expiry of a lease is never judged with it, but with the server's clock.
 */
public interface Timing {
  /** A monotonic reading in nanoseconds, as {@link System#nanoTime()}. */
  public long nanoTime();

  /** Waits {@code millis} milliseconds. */
  public void sleep(long millis) throws InterruptedException;

  /** The system's monotonic clock and {@link Thread#sleep(long)}. */
  public Timing SYSTEM = new Timing() {
    @Override
    public long nanoTime() {
      return System.nanoTime();
    }

    @Override
    public void sleep(long millis) throws InterruptedException {
      Thread.sleep(millis);
    }
  };
}
