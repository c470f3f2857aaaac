package dev.arbor.embedded.internal;

import static java.util.Objects.requireNonNull;

import dev.arbor.embedded.EmbeddedMongo;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * Not API: makes an {@link EmbeddedMongo} run ordered {@code update} and {@code insert} commands
 * as MongoDB does, stopping at the first statement that fails and answering the counts of the
 * statements before it, where mongo-java-server goes on with an update command's later
 * statements. Off by default; Arbor's tests switch it on to run the lock protocol's MongoDB path
 * against a server that really stops.
 *
 * <p>{@code EmbeddedMongo} lends the switch to this class once, when it is initialized ({@link
 * #install}), as it does {@link DataDirectories}' operations.
 *
 * <p>Thread-safe: the switch applies to the commands that arrive after it.
 */
public final class OrderedBulkWrites {
  private static volatile @Nullable BiConsumer<EmbeddedMongo, Boolean> control;

  private OrderedBulkWrites() {}

  /**
   * Called once by {@code EmbeddedMongo}'s class initialization.
   *
   * @throws IllegalStateException if called again
   */
  public static synchronized void install(BiConsumer<EmbeddedMongo, Boolean> c) {
    requireNonNull(c, "control");
    if (control != null) {
      throw new IllegalStateException("the ordered writes' control is already installed");
    }
    control = c;
  }

  /** Switches MongoDB's ordered behaviour on ({@code true}) or off for {@code mongo}. */
  public static void stopAtFirstError(EmbeddedMongo mongo, boolean on) {
    requireNonNull(mongo, "mongo");
    BiConsumer<EmbeddedMongo, Boolean> c = control; // installed: mongo's class is initialized
    if (c == null) {
      throw new IllegalStateException("EmbeddedMongo did not install its control");
    }
    c.accept(mongo, on);
  }
}
