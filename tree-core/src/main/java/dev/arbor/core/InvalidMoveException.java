package dev.arbor.core;

/** Thrown when a move would put a node inside its own subtree, which would make a cycle. */
public class InvalidMoveException extends TreeException {
  private static final long serialVersionUID = 1L;

  private final String id;

  /** Creates an exception for the node {@code id} that cannot move to {@code position}. */
  public InvalidMoveException(String id, Position position) {
    super("Cannot move '" + id + "' to " + position + ": the target is inside its own subtree");
    this.id = id;
  }

  /** The id of the node that could not be moved. */
  public String id() {
    return id;
  }
}
