package dev.arbor.mongo.internal.protocol;

import dev.arbor.core.TreeException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * Sends the commands of a streamed load one at a time on a thread of its own, so that the client
 * builds and encodes the next batch while the server takes the last one: at most one command is
 * in flight, and each waits for the one before it, so the commands reach the server in the order
 * they were given and the lock's hold passes between the two threads only through that wait.
 *
 * <p>A failure of a command is thrown by the next {@link #send} or {@link #await}, as it was
 * thrown by the command. The thread is started by the first command that is not sent {@link
 * #inline()}, so a load of one batch starts none; {@link #close} waits for the command in flight
 * (a load may be undone only once nothing of it is still on its way) and stops the thread.
 */
public final class SendAhead implements AutoCloseable {
  private final String name;
  private @Nullable ExecutorService thread;
  private @Nullable Future<?> inFlight;
  private boolean inline;

  /** @param name the name of the sending thread, for thread dumps */
  public SendAhead(String name) {
    this.name = name;
  }

  /** From now on, sends in the calling thread (at the end of a stream: nothing left to build). */
  public void inline() {
    inline = true;
  }

  /**
   * Sends {@code command} once the command before it is done: in the background, or in the
   * calling thread once {@link #inline()}.
   *
   * @throws RuntimeException the failure of the command before, as it threw it
   */
  public void send(Runnable command) {
    await();
    if (inline) {
      command.run();
      return;
    }
    if (thread == null) {
      thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
      });
    }
    inFlight = thread.submit(command);
  }

  /**
   * Waits for the command in flight.
   *
   * @throws RuntimeException its failure, as it threw it
   */
  public void await() {
    Future<?> f = inFlight;
    if (f == null) {
      return;
    }
    try {
      waitFor(f);
    } finally {
      inFlight = null;
    }
  }

  private static void waitFor(Future<?> f) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          f.get();
          return;
        } catch (InterruptedException e) {
          interrupted = true; // the command is on its way: it must end before anything else runs
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof RuntimeException re) {
            throw re;
          }
          if (cause instanceof Error err) {
            throw err;
          }
          throw new TreeException("A command of the load failed: " + cause, cause);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Waits for the command in flight, ignoring its failure, and stops the thread; never throws. */
  @Override
  public void close() {
    try {
      await();
    } catch (RuntimeException | Error e) {
      // the caller is already failing, or has seen it at await()
    } finally {
      if (thread != null) {
        thread.shutdown();
        thread = null;
      }
    }
  }
}
