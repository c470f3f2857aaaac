package dev.arbor.mongo;

import dev.arbor.core.TreeException;

/**
 * A change or load refused before anything was written because a node's document would pass
 * MongoDB's 16 MB limit on one document (measured in encoded BSON): an array of ancestors or a
 * materialized path that grows with the node's depth, a {@code children} array that grows with
 * its fan-out, or attributes that are too large themselves. The message names the node, its
 * depth or number of children, the size, and the patterns whose documents would hold the tree.
 */
public class NodeTooLargeException extends TreeException {
  private static final long serialVersionUID = 1L;

  private final String nodeId;
  private final long bytes;

  /**
   * Creates the exception for the node {@code nodeId}, whose document would measure {@code
   * bytes} of encoded BSON.
   */
  public NodeTooLargeException(String nodeId, long bytes, String message) {
    super(message);
    this.nodeId = nodeId;
    this.bytes = bytes;
  }

  /** The node whose document would be too large. */
  public String nodeId() {
    return nodeId;
  }

  /** The size its document would have, in bytes of BSON (at least this much). */
  public long bytes() {
    return bytes;
  }
}
