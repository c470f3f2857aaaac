package dev.arbor.mongo;

import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import java.util.Iterator;

/** A closeable iterator of a forest's entries in preorder, which may hold server cursors. */
interface PreorderCursor extends Iterator<Node>, AutoCloseable {
  /** Closes the server cursors still open; never throws. */
  @Override
  void close();
}
