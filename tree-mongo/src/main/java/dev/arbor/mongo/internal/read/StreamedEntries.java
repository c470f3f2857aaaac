package dev.arbor.mongo.internal.read;

import com.mongodb.MongoException;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.FencedJournalProtocol;
import dev.arbor.mongo.internal.protocol.ReadRetry;
import dev.arbor.mongo.internal.protocol.TreeLock;
import org.jspecify.annotations.Nullable;

/**
 * A store's {@link MongoTreeStore#entries()}: the layout's preorder walk ({@link
 * Layout#preorder}: {@link KeyedPreorder}, the children of many nodes a query; {@link
 * ListedPreorder} for child references; nested sets by one cursor in {@code left} order) from
 * server-side sorted reads, holding a bounded read-ahead and a slice of documents per level in
 * client memory, never the tree; between two checks of the lock document when reads are
 * isolated.
 *
 * <p><b>What it guarantees.</b> Without isolated reads, nothing beyond each query's own. With
 * them, the stream first waits, as every read does, until no change is in flight, and notes the
 * version; when the last entry has been read it reads the lock document again. If a change took
 * effect in between (or one is in flight), the entries delivered may mix the tree before and
 * after it (or a change in a lane is still in flight): the stream then throws {@link
 * dev.arbor.core.TreeChangedException} instead of ending, and the caller reads again (an empty
 * stream, which delivered nothing, retries by itself). A stream that ends normally delivered
 * exactly the tree at the version noted first. A structure the walk cannot follow (a cycle) throws
 * {@link dev.arbor.core.TreeException}, or {@code TreeChangedException} if a change took effect
 * meanwhile.
 */
public final class StreamedEntries implements PreorderCursor {
  private final MongoTreeStore store;
  private final FencedJournalProtocol fenced;
  private TreeLock.@Nullable Quiet before;
  private PreorderCursor walk;
  private long delivered;
  private boolean ended;
  /**
   * How the stream outlives a cut or stalled connection: its cursors resume past what they
   * delivered, a stream that delivered nothing starts over, and the lock checks are made again,
   * until the lock wait runs out.
   */
  private final ReadRetry retry;

  public StreamedEntries(MongoTreeStore store, FencedJournalProtocol fenced) {
    this.store = store;
    this.fenced = fenced;
    this.retry = new ReadRetry(store.lock.lock);
    start();
  }

  /**
   * Waits for a quiet tree and starts the walk; made again after a transient driver error until
   * the lock wait runs out ({@link ReadRetry}).
   */
  private void start() {
    walk = retry.retrying(() -> {
      before = fenced.awaitQuiet();
      return store.layout.preorder(fenced.unisolated(() -> {}, retry));
    });
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
        if (delivered > 0) {
          throw cut(e);
        }
        walk.close(); // nothing delivered yet: start over
        retry.failed(e);
        start();
        continue;
      } catch (dev.arbor.core.ChangeInterruptedException e) { // a cursor's retry gave up
        close();
        throw e;
      } catch (RuntimeException e) {
        throw changedOr(e);
      }
      if (more) {
        return true;
      }
      walk.close();
      // With isolated reads, the nodes stored (one count) against those the walk reached: a
      // node no root reaches (an orphan, a node below one, a cycle of parent links) is not
      // left out without a word, as snapshot() says too
      long stored = before == null ? -1
          : retry.retrying(() -> fenced.unisolated(() -> {}, retry)
              .count(MongoTreeStore.NODES));
      TreeLock.State now = changed();
      if (now == null) {
        ended = true;
        if (stored > delivered) {
          throw new dev.arbor.core.TreeException("The stream of tree '" + store.collectionName
              + "' reached " + delivered + " of its " + stored + " nodes: the others are"
              + " unreachable from every root (an orphan, a node below one, or a cycle of parent"
              + " links); check() lists them, and repair() settles what it can");
        }
        return false;
      }
      if (delivered > 0) {
        throw changedWhileStreaming(now, null);
      }
      start(); // nothing delivered yet: read again
    }
  }

  /**
   * The lock's state if a change took effect since {@link #before} or one is in flight, in a
   * lane too ({@link dev.arbor.mongo.internal.protocol.Lanes#look}; the tree's lanes, which
   * other stores may run even if this one has them off), else null.
   */
  private TreeLock.@Nullable State changed() {
    if (before == null) {
      return null;
    }
    TreeLock.State now = retry.retrying(store.lock::read);
    dev.arbor.mongo.internal.protocol.Lanes lanes = store.lock.lanes;
    if (lanes == null) { // nested sets, transactions: no lanes
      return before.same(now) ? null : now;
    }
    dev.arbor.mongo.internal.protocol.Lanes.Look look = lanes.look(before, now);
    return look.stands() ? null : look.last();
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
  public Node next() {
    if (!hasNext()) {
      throw new java.util.NoSuchElementException();
    }
    delivered++;
    try {
      return walk.next();
    } catch (MongoException e) {
      throw cut(e);
    } catch (dev.arbor.core.ChangeInterruptedException e) { // a cursor's retry gave up
      close();
      throw e;
    } catch (RuntimeException e) { // nested sets check each node's interval as they deliver it
      throw changedOr(e);
    }
  }

  /**
   * What a stream that delivered entries throws when a read of its walk that is not a resumable
   * cursor (the listed children of child references) fails for good: {@code e} itself if it is
   * not transient, else the stream was cut ({@code NOT_APPLIED}, read again).
   */
  private RuntimeException cut(MongoException e) {
    close();
    if (!dev.arbor.mongo.internal.protocol.TreeLock.transientError(e)) {
      return e;
    }
    return new dev.arbor.core.ChangeInterruptedException("The stream of tree '"
        + store.collectionName + "' was cut after " + delivered + " entries (" + e.getMessage()
        + "); nothing was written, read it again",
        dev.arbor.core.ChangeInterruptedException.Outcome.NOT_APPLIED, e);
  }

  /**
   * What a walk that could not go on throws: {@code e} itself for a driver error; else {@link
   * dev.arbor.core.TreeChangedException} if a change took effect meanwhile (the walk met the tree
   * half before, half after it), else {@code e} (a structure the walk cannot follow).
   */
  private RuntimeException changedOr(RuntimeException e) {
    if (e instanceof MongoException) {
      return e;
    }
    TreeLock.State now = changed();
    return now != null ? changedWhileStreaming(now, e) : e;
  }

  @Override
  public void close() {
    ended = true;
    walk.close();
  }
}
