package dev.arbor.core;

/**
 * What {@link TreeStore#delete(String, Deletion)} does with the children of the node it deletes.
 *
 * <pre>{@code
 *   before          SUBTREE          LIFT_CHILDREN        LEAF_ONLY
 *   a               a                a                    refused: 'b' has
 *   ├─ b            └─ e             ├─ c                 children; nothing
 *   │  ├─ c                          ├─ d                 deleted
 *   │  └─ d                          └─ e
 *   └─ e
 * }</pre>
 */
public enum Deletion {
  /** Deletes the node and its whole subtree: what {@link TreeStore#delete(String)} does. */
  SUBTREE,
  /**
   * Deletes the node alone; its children, with their subtrees, take its place among its siblings,
   * in their order. One all-or-nothing change.
   */
  LIFT_CHILDREN,
  /** Deletes the node only if it is a leaf; otherwise throws {@link NodeHasChildrenException}. */
  LEAF_ONLY
}
