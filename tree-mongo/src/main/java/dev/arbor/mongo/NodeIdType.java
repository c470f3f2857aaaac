package dev.arbor.mongo;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * The BSON type of the node ids a tree stores ({@link TreeOptions#withIdType}): in {@code _id}
 * and in the fields that name other nodes (the parent, the {@code children} and the ancestors).
 * The {@link dev.arbor.core.TreeStore} contract names nodes by strings whatever the type; each
 * type maps a stored id to exactly one string, its canonical form:
 *
 * <table>
 * <caption>stored ids and their strings</caption>
 * <tr><th>type<th>stored as<th>the contract's string
 * <tr><td>{@link #STRING}<td>string<td>the string itself
 * <tr><td>{@link #OBJECT_ID}<td>{@code ObjectId}<td>its 24 lowercase hexadecimal digits ({@code
 *     ObjectId.toHexString()}), e.g. {@code 5f1d7c2a9b3e4d0012345678}
 * <tr><td>{@link #UUID}<td>binary subtype 4 (the standard UUID representation), whatever the
 *     codec registry's UUID representation<td>its canonical lowercase 8-4-4-4-12 form, e.g.
 *     {@code 123e4567-e89b-12d3-a456-426614174000}
 * <tr><td>{@link #LONG}<td>64-bit integer ({@code Int64}; a 32-bit integer is accepted on
 *     read)<td>its canonical decimal form ({@code Long.toString}), e.g. {@code -42}, never
 *     {@code 007} or {@code +42}
 * </table>
 *
 * <p>A materialized path keeps the canonical strings of its ancestors inside the path string
 * ({@code ,<id>,<id>,}): the path field is a string whatever the id type.
 *
 * <p>An id that is not in the canonical form of the tree's type is refused by {@code insert},
 * {@code load} and {@code graft} with an {@link IllegalArgumentException} naming the id and the
 * type, before anything is written; a read, move or delete of such an id throws {@link
 * dev.arbor.core.NodeNotFoundException}, since no node can have it.
 */
public enum NodeIdType {
  /** String ids (the default): the contract's strings are stored as they are. */
  STRING,
  /** {@code ObjectId} ids, named by their 24 lowercase hexadecimal digits. */
  OBJECT_ID,
  /** UUID ids stored as binary subtype 4, named by their canonical lowercase form. */
  UUID,
  /** 64-bit integer ids, named by their canonical decimal form. */
  LONG;

  /**
   * Why {@code id} cannot name a node of a tree of this type, or empty if it can: an id not in
   * this type's canonical form (see the table above). Stores refuse such ids in {@code insert},
   * {@code load} and {@code graft}; this lets a reader of another format refuse them first, where
   * it can say where they are.
   *
   * @param id a node id
   */
  public Optional<String> refusal(String id) {
    requireNonNull(id, "id");
    return Optional.ofNullable(dev.arbor.mongo.internal.bson.NodeIds.refusal(this, id));
  }
}
