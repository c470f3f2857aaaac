package dev.arbor.core;

/**
 * Thrown by {@link TreeStore#delete(String, Deletion)} with {@link Deletion#LEAF_ONLY} when the
 * node has children; nothing is deleted.
 */
public class NodeHasChildrenException extends TreeException {
  private static final long serialVersionUID = 1L;

  private final String id;

  /** Creates an exception for the node {@code id}, which has children. */
  public NodeHasChildrenException(String id) {
    super("Cannot delete '" + id + "' alone: it has children (delete its subtree, or lift its"
        + " children into its place)");
    this.id = id;
  }

  /** The id of the node that has children. */
  public String id() {
    return id;
  }
}
