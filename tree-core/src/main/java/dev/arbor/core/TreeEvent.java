package dev.arbor.core;

import static java.util.Objects.requireNonNull;

import org.jspecify.annotations.Nullable;

/**
 * A committed change of a tree, as told to a {@link TreeListener}: what happened, to which node,
 * where it was and where it went, and how many nodes it touched.
 *
 * <table>
 * <caption>fields by kind</caption>
 * <tr><th>kind<th>{@code id}<th>{@code oldParent}<th>{@code newParent}<th>{@code position}
 *     <th>{@code nodes}
 * <tr><td>{@link Kind#INSERT}<td>the new node<td>null<td>its parent (null: a root)<td>as given
 *     <td>1
 * <tr><td>{@link Kind#MOVE}<td>the moved node<td>its parent before<td>its parent after<td>as
 *     given<td>the moved subtree's size (the node and its descendants)
 * <tr><td>{@link Kind#UPDATE}<td>the node<td colspan=2>its parent<td>null<td>1
 * <tr><td>{@link Kind#DELETE}<td>the deleted node<td>its parent before<td>null<td>null<td>the
 *     nodes deleted
 * <tr><td>{@link Kind#LOAD}<td>null<td>null<td>null<td>null<td>the nodes loaded
 * <tr><td>{@link Kind#GRAFT}<td>null<td>null<td>the node grafted under (null: new roots)<td>null
 *     <td>the nodes grafted
 * <tr><td>{@link Kind#REPAIR}<td>null<td>null<td>null<td>null<td>the documents it rewrote (a
 *     repair that finds nothing to rewrite tells nothing)
 * </table>
 *
 * @param kind what happened
 * @param id the node changed, or null for a change of the whole tree
 * @param oldParent the node's parent before the change, or null (a root, or not applicable)
 * @param newParent the node's parent after the change, or null (a root, or not applicable)
 * @param position the position the caller asked for, or null
 * @param nodes how many nodes the change touched (see the table)
 * @param version the version of the tree's lock document at which the change took effect (grows
 *     with every change of the tree: events of one tree can be ordered by it); -1 where not known
 */
public record TreeEvent(Kind kind, @Nullable String id, @Nullable String oldParent,
    @Nullable String newParent, @Nullable Position position, long nodes, long version) {

  /** What a change did. */
  public enum Kind {
    /** A node was inserted. */
    INSERT,
    /** A node (with its subtree) was moved. */
    MOVE,
    /** A node's attributes were updated. */
    UPDATE,
    /** A node and its subtree were deleted. */
    DELETE,
    /** A whole tree was loaded into an empty store. */
    LOAD,
    /** A forest was grafted under a node, or as new roots, of a tree. */
    GRAFT,
    /** The tree's derived fields were rewritten by a repair. */
    REPAIR
  }

  /** Checks that {@code kind} is set. */
  public TreeEvent {
    requireNonNull(kind, "kind");
  }
}
