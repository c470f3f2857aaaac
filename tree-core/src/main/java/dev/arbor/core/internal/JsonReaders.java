package dev.arbor.core.internal;

import static java.util.Objects.requireNonNull;

import dev.arbor.core.json.TreeJsonException;
import dev.arbor.core.json.TreeJsonReader;
import org.jspecify.annotations.Nullable;

/**
 * What Arbor's command line asks of a {@link TreeJsonReader} beyond its API: to read without
 * checking that ids are unique (a MongoDB store's unique {@code _id} index refuses a repeat, and
 * its load is undone), and then to find where the repeat is. The reader hands these over when its
 * class is initialized; they are not part of the API.
 */
public final class JsonReaders {
  /** The reader's part, installed by {@link TreeJsonReader} once. */
  public interface Access {
    /** See {@link JsonReaders#withoutDuplicateCheck}. */
    TreeJsonReader withoutDuplicateCheck(TreeJsonReader reader);

    /** See {@link JsonReaders#findRepeat}. */
    @Nullable TreeJsonException findRepeat(TreeJsonReader reader, String id);
  }

  private static volatile @Nullable Access access;

  private JsonReaders() {}

  /**
   * Installs the reader's part; called by {@link TreeJsonReader} when its class is initialized.
   *
   * @throws IllegalStateException if it is installed already
   */
  public static void install(Access reader) {
    requireNonNull(reader, "reader");
    synchronized (JsonReaders.class) {
      if (access != null) {
        throw new IllegalStateException("JsonReaders is installed already");
      }
      access = reader;
    }
  }

  /**
   * Stops {@code reader} checking that ids are unique, so that reading node by node holds nothing
   * that grows with the input. Set it before reading.
   *
   * @return {@code reader}
   */
  public static TreeJsonReader withoutDuplicateCheck(TreeJsonReader reader) {
    return access(reader).withoutDuplicateCheck(reader);
  }

  /**
   * Reads on to the second node whose id is {@code id} (from where {@code reader} is), and gives
   * the error a checking reader throws there; null if the rest of the input has it once or never.
   * Holds nothing that grows with the input.
   */
  public static @Nullable TreeJsonException findRepeat(TreeJsonReader reader, String id) {
    return access(reader).findRepeat(reader, id);
  }

  private static Access access(TreeJsonReader reader) {
    requireNonNull(reader, "reader"); // its class is initialized: the access is installed
    return requireNonNull(access, "JsonReaders: TreeJsonReader did not install its access");
  }
}
