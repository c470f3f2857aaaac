package dev.arbor.core;

/**
 * Thrown when an insert, a load or a graft names an id that is already in the tree, or that it
 * gives twice.
 */
public class DuplicateNodeException extends TreeException {
  private static final long serialVersionUID = 1L;

  private final String id;

  /** Creates an exception for the duplicated id. */
  public DuplicateNodeException(String id) {
    this(id, "A node with id '" + id + "' already exists");
  }

  /**
   * Creates an exception for the duplicated id, with a message saying where it was met (an id
   * given twice among the nodes of one load, for example).
   */
  public DuplicateNodeException(String id, String message) {
    super(message);
    this.id = java.util.Objects.requireNonNull(id, "id");
  }

  /** The id that is already taken. */
  public String id() {
    return id;
  }
}
