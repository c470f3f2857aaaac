package dev.arbor.core;

import dev.arbor.core.internal.TreeStores;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One node as read from a store: its id, its parent, its depth and its attributes.
 *
 * @param id the node id
 * @param parentId the parent's id, or {@code null} for a root
 * @param depth the number of ancestors: {@code 0} for a root
 * @param attributes the user data stored with the node, never {@code null} (a value may be
 *     {@code null}: stored and read back as such); unmodifiable
 */
public record Node(String id, @Nullable String parentId, int depth,
    Map<String, @Nullable Object> attributes) {
  /** Validates the components and copies the attributes. */
  public Node {
    TreeStores.checkId(id);
    if (depth < 0) {
      throw new IllegalArgumentException("depth < 0: " + depth);
    }
    attributes = TreeStores.copyAttributes(attributes);
  }

  /** Whether this node is a root. */
  public boolean isRoot() {
    return parentId == null;
  }
}
