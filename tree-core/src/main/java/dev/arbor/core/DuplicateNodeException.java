package dev.arbor.core;

/** Thrown when an insert or a load names an id that is already in the tree. */
public class DuplicateNodeException extends TreeException {
  private static final long serialVersionUID = 1L;

  private final String id;

  /** Creates an exception for the duplicated id. */
  public DuplicateNodeException(String id) {
    super("A node with id '" + id + "' already exists");
    this.id = id;
  }

  /** The id that is already taken. */
  public String id() {
    return id;
  }
}
