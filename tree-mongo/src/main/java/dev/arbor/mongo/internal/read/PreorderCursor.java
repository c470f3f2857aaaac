package dev.arbor.mongo.internal.read;

import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import java.util.Iterator;

/** A closeable iterator of a forest's entries in preorder, which may hold server cursors. */
public interface PreorderCursor extends Iterator<Node>, AutoCloseable {
  /** Closes the server cursors still open; never throws. */
  @Override
  public void close();
}
