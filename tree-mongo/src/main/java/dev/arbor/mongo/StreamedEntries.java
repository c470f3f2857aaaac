package dev.arbor.mongo;

import com.mongodb.MongoException;
import dev.arbor.core.Tree;
import org.jspecify.annotations.Nullable;

/**
 * A store's {@link MongoTreeStore#entries()}: the layout's preorder walk, between two checks of
 * the lock document when reads are isolated (see there for what it guarantees).
 */
final class StreamedEntries implements PreorderCursor {
  private final MongoTreeStore store;
  private final FencedJournalProtocol fenced;
  private TreeLock.@Nullable Quiet before;
  private PreorderCursor walk;
  private long delivered;
  private boolean ended;

  StreamedEntries(MongoTreeStore store, FencedJournalProtocol fenced) {
    this.store = store;
    this.fenced = fenced;
    start();
  }

  private void start() {
    before = fenced.awaitQuiet();
    walk = store.layout.preorder(fenced.unisolated(() -> {}));
  }

  @Override
  public boolean hasNext() {
    if (ended) {
      return false;
    }
    for (;;) {
      boolean more;
      try {
        more = walk.hasNext();
      } catch (MongoException e) {
        throw e;
      } catch (RuntimeException e) {
        TreeLock.State now = changed();
        if (now != null) {
          throw changedWhileStreaming(now, e);
        }
        throw e;
      }
      if (more) {
        return true;
      }
      walk.close();
      TreeLock.State now = changed();
      if (now == null) {
        ended = true;
        return false;
      }
      if (delivered > 0) {
        throw changedWhileStreaming(now, null);
      }
      start(); // nothing delivered yet: read again
    }
  }

  /** The lock's state if a change took effect since {@link #before}, else null. */
  private TreeLock.@Nullable State changed() {
    if (before == null) {
      return null;
    }
    TreeLock.State now = store.lock.read();
    return before.same(now) ? null : now;
  }

  private RuntimeException changedWhileStreaming(TreeLock.State now,
      @Nullable Throwable cause) {
    close();
    RuntimeException e = new dev.arbor.core.TreeChangedException("the tree in collection '"
        + store.collectionName + "' changed while it was streamed (version " + before.version()
        + " when it started, " + now.version + (now.quiet() ? "" : " with a change in flight")
        + " at the end), after " + delivered + " entries: they may mix the tree before and"
        + " after the change; read it again");
    if (cause != null) {
      e.addSuppressed(cause);
    }
    return e;
  }

  @Override
  public Tree.Entry next() {
    if (!hasNext()) {
      throw new java.util.NoSuchElementException();
    }
    delivered++;
    return walk.next();
  }

  @Override
  public void close() {
    ended = true;
    walk.close();
  }
}
