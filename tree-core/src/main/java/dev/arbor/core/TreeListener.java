package dev.arbor.core;

/**
 * Told after each change of a tree is committed, on the thread that made the change, before the
 * call returns: to invalidate a cache, re-index a search, write an audit log.
 *
 * <p>A listener is never called for a change that did not commit (an exception, or a call that
 * changed nothing, such as moving a node to where it is). An exception thrown by a listener is
 * logged and swallowed: it never undoes the change, never reaches the caller and never stops the
 * other listeners. A listener sees the changes made through the store it was registered with, in
 * this process; to observe every process's changes, watch the collection with a MongoDB change
 * stream (see docs/data-api.md).
 *
 * <p>Listeners should return quickly: the caller waits for them (the tree's lock is already
 * released).
 */
@FunctionalInterface
public interface TreeListener {
  /** Called once per committed change. */
  void changed(TreeEvent event);
}
