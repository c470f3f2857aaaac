package dev.arbor.core;

import static java.util.Objects.requireNonNull;

/**
 * An inconsistency found by {@link TreeStore#check()} in the stored structure.
 *
 * @param nodeId the node the problem is about (for problems of the whole store, the id of the
 *     first node involved)
 * @param message what is wrong, in words
 */
public record Problem(String nodeId, String message) {
  /** Validates the components. */
  public Problem {
    requireNonNull(nodeId, "nodeId");
    requireNonNull(message, "message");
  }

  @Override
  public String toString() {
    return "'" + nodeId + "': " + message;
  }
}
