package dev.arbor.embedded.internal;

import static java.util.Objects.requireNonNull;

import dev.arbor.embedded.EmbeddedMongo;
import org.jspecify.annotations.Nullable;

/**
 * Not API: the control of an {@link EmbeddedMongo}'s data directory that Arbor's command line
 * needs and a library user should not: save now, or stop without saving. A command saves what it
 * wrote when it succeeds ({@link #checkpoint}) and, if it fails, leaves the directory as it was
 * ({@link #abandon}), as a killed process would.
 *
 * <p>{@code EmbeddedMongo} lends these operations to this class once, when it is initialized
 * ({@link #install}): they stay off its public API, and this package is not exported by a modular
 * build.
 *
 * <p>Thread-safe.
 */
public final class DataDirectories {
  /** The operations {@code EmbeddedMongo} lends; not for other implementations. */
  public interface Control {
    /** See {@link DataDirectories#checkpoint}. */
    void checkpoint(EmbeddedMongo mongo);

    /** See {@link DataDirectories#abandon}. */
    void abandon(EmbeddedMongo mongo);
  }

  private static volatile @Nullable Control control;

  private DataDirectories() {}

  /**
   * Called once by {@code EmbeddedMongo}'s class initialization.
   *
   * @throws IllegalStateException if called again
   */
  public static synchronized void install(Control c) {
    requireNonNull(c, "control");
    if (control != null) {
      throw new IllegalStateException("the data directories' control is already installed");
    }
    control = c;
  }

  /**
   * Saves every change made so far to the data file, in one atomic commit taken between two
   * commands (it waits for those in flight); does nothing in memory.
   *
   * @throws IllegalStateException if the server is closed
   */
  public static void checkpoint(EmbeddedMongo mongo) {
    control(mongo).checkpoint(mongo);
  }

  /**
   * Stops the server without saving: the data file stays as at the last {@link #checkpoint} (or
   * save between two commands), as if the process had been killed. Use it when the changes must
   * not be kept, e.g. after a failure. Does nothing if already closed.
   */
  public static void abandon(EmbeddedMongo mongo) {
    control(mongo).abandon(mongo);
  }

  private static Control control(EmbeddedMongo mongo) {
    requireNonNull(mongo, "mongo");
    Control c = control; // installed: the class of mongo is initialized
    if (c == null) {
      throw new IllegalStateException("EmbeddedMongo did not install its control");
    }
    return c;
  }
}
