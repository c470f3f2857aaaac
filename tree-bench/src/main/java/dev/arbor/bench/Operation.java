package dev.arbor.bench;

/**
 * The single operations the benchmark measures. Each names its subject as chosen by {@link
 * Subjects}, so that every pattern performs exactly the same logical operation on the same nodes.
 */
enum Operation {
  /** {@code load(tree)} of the whole generated tree into an empty collection, then its indexes. */
  LOAD("bulk load + indexes", false),
  /** {@code insert} of a new leaf as the last child of an inner node in the middle of the tree. */
  INSERT_LEAF("insert a leaf mid-tree", false),
  /** {@code children} of the node with the largest fan-out. */
  CHILDREN("children of the widest node", true),
  /** {@code ancestors} of a deepest leaf. */
  ANCESTORS("ancestors of a deepest leaf", true),
  /** {@code descendants} of a subtree of about 10 nodes. */
  DESCENDANTS_SMALL("descendants, ~10 nodes", true),
  /** {@code descendants} of a subtree of about sqrt(N) nodes. */
  DESCENDANTS_MEDIUM("descendants, ~sqrt(N) nodes", true),
  /** {@code descendants} of a subtree of about N/4 nodes. */
  DESCENDANTS_LARGE("descendants, ~N/4 nodes", true),
  /** {@code descendants(id, 2)} of the large subtree's root: two levels only. */
  DESCENDANTS_LIMITED("descendants, 2 levels of ~N/4", true),
  /** {@code childNodes(id, null, 50)}: the first page of the widest node's children, with data. */
  CHILD_NODES("first page of 50 children, with data", true),
  /** {@code ancestorNodes} of a deepest leaf: a breadcrumb, with data. */
  ANCESTOR_NODES("breadcrumb of a deepest leaf, with data", true),
  /** {@code subtree(id, 2)} of the ~N/4 subtree's root: what a UI shows, with data. */
  SUBTREE("subtree, 2 levels of ~N/4, with data", true),
  /** {@code move} of a leaf under another inner node. */
  MOVE_LEAF("move a leaf", false),
  /** {@code move} of the ~N/4 subtree under a node outside it. */
  MOVE_SUBTREE("move a ~N/4 subtree", false),
  /** {@code delete} of the ~10-node subtree. */
  DELETE_SUBTREE("delete a ~10-node subtree", false);

  /** How many levels {@link #DESCENDANTS_LIMITED} and {@link #SUBTREE} read. */
  static final int LIMITED_DEPTH = 2;

  /** The page size of {@link #CHILD_NODES}. */
  static final int PAGE = 50;

  private final String description;
  private final boolean read;

  Operation(String description, boolean read) {
    this.description = description;
    this.read = read;
  }

  /** A few words saying what is measured. */
  String description() {
    return description;
  }

  /** Whether the operation only reads (and so needs no undo). */
  boolean read() {
    return read;
  }

  /**
   * Whether a read is timed beside the manual's hand-written query: the reads of ids are; the
   * reads with data (a node's attributes, which the manual's queries do not assemble) are not.
   */
  boolean baseline() {
    return read && this != CHILD_NODES && this != ANCESTOR_NODES && this != SUBTREE;
  }
}
