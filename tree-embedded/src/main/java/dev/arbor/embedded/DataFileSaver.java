package dev.arbor.embedded;

import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.h2.mvstore.MVStore;

/**
 * The saves of a data file: each an atomic commit of its MVStore taken between two commands of
 * the server, at a checkpoint or when more than {@code autosaveBytes} of changes are unsaved.
 * Commands hold its gate shared; a save holds it alone, so that it never captures half a command.
 *
 * <p>Thread-safe.
 */
final class DataFileSaver {
  /**
   * Unsaved changes past this many bytes are saved between two commands: a 32nd of the heap, at
   * most 32 MB (H2 counts a document at about its serialized size, a fraction of what it takes in
   * the heap: an array of ancestors several times). A load larger than the heap then goes
   * through, its pages written as it goes instead of all at its end.
   */
  static final long AUTOSAVE_BYTES = Math.min(32L << 20, Runtime.getRuntime().maxMemory() / 32);

  private final MVStore store;
  private final long autosaveBytes;
  private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();

  /** Saves {@code store} between two commands past {@code autosaveBytes} unsaved. */
  DataFileSaver(MVStore store, long autosaveBytes) {
    this.store = store;
    this.autosaveBytes = autosaveBytes;
  }

  /** Runs a command, then saves if more than {@code autosaveBytes} are unsaved. */
  <T> T command(Supplier<T> command) {
    gate.readLock().lock();
    try {
      return command.get();
    } finally {
      gate.readLock().unlock();
      if (store.getUnsavedMemory() > autosaveBytes) {
        save(autosaveBytes); // several threads may get here: the first saves
      }
    }
  }

  /** Saves every change made so far in one atomic commit, between two commands. */
  void save() {
    save(-1);
  }

  /**
   * {@link #save()} if more than {@code unsaved} bytes are still unsaved once the server is held.
   */
  private void save(long unsaved) {
    gate.writeLock().lock();
    try {
      if (!store.isClosed() && store.getUnsavedMemory() > unsaved) {
        store.commit();
        // Pages rewritten by later saves leave chunks mostly dead: their live pages are moved on,
        // so that whole chunks are freed and their space reused (H2's own background thread,
        // which would do it, is off).
        store.compact(50, (int) Math.min(autosaveBytes, 16 << 20));
        // On disk before the next save may reuse the space this one freed (no retention time:
        // see EmbeddedMongo.start).
        store.sync();
      }
    } finally {
      gate.writeLock().unlock();
    }
  }
}
