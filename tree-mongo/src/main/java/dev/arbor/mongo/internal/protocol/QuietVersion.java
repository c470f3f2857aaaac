package dev.arbor.mongo.internal.protocol;

import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The latest version at which a store saw its tree with no change in flight, shared by the store
 * and its views: a change plans from it without the lock and claims the lock at that version
 * with its first write, and an isolated read starts from it without reading the lock document.
 */
public final class QuietVersion {
  private final AtomicReference<TreeLock.@Nullable Quiet> known = new AtomicReference<>();

  /** The version last seen, or null. */
  TreeLock.@Nullable Quiet get() {
    return known.get();
  }

  /** Records a quiet version seen; keeps the latest of an epoch. */
  public void remember(TreeLock.Quiet seen) {
    known.accumulateAndGet(seen, (old, now) -> old == null || !old.epoch().equals(now.epoch())
        || now.version() > old.version() ? now : old);
  }

  /** Forgets it: the next change takes the lock first, the next read reads the lock document. */
  public void forget() {
    known.set(null);
  }
}
