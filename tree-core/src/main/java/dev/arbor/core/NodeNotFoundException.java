package dev.arbor.core;

/** Thrown when an operation names a node, or a position anchor, that is not in the tree. */
public class NodeNotFoundException extends TreeException {
  private static final long serialVersionUID = 1L;

  private final String id;

  /** Creates an exception for the missing node {@code id}. */
  public NodeNotFoundException(String id) {
    super("No node with id '" + id + "'");
    this.id = id;
  }

  /** The id that was not found. */
  public String id() {
    return id;
  }
}
