package dev.arbor.mongo;

import static java.util.Objects.requireNonNull;

import java.util.EnumSet;
import java.util.Set;

/**
 * A structural field of the node documents of a pattern, whose name a store may be given with
 * {@link TreeOptions#withFieldName} so that a collection laid out by another tool ({@code
 * parentId}, {@code lft} and {@code rgt}, {@code ancestorIds}, ...) is read, written, checked and
 * repaired as it is.
 *
 * <table>
 * <caption>structural fields</caption>
 * <tr><th>field<th>default name<th>used by<th>holds
 * <tr><td>{@link #PARENT}<td>{@code parent}<td>parent references, array of ancestors, nested
 *     sets<td>the parent's id, null for a root
 * <tr><td>{@link #CHILDREN}<td>{@code children}<td>child references<td>the children's ids in
 *     order
 * <tr><td>{@link #ANCESTORS}<td>{@code ancestors}<td>array of ancestors<td>the ancestors' ids,
 *     root first
 * <tr><td>{@link #PATH}<td>{@code path}<td>materialized paths<td>{@code ,root,...,parent,}, null
 *     for a root
 * <tr><td>{@link #LEFT}<td>{@code left}<td>nested sets<td>the preorder number on entry
 * <tr><td>{@link #RIGHT}<td>{@code right}<td>nested sets<td>the preorder number on exit
 * <tr><td>{@link #DEPTH}<td>{@code arborDepth}<td>nested sets<td>the number of ancestors
 * <tr><td>{@link #RANK}<td>{@code arborRank}<td>all but nested sets (child references: roots
 *     only)<td>the order among siblings
 * </table>
 *
 * <p>The first six are the manual's names (Data Models, section 4.2), so a collection laid out
 * as the manual shows opens as it is. The last two are Arbor's own additions, named so that they
 * take no ordinary domain word: with the defaults, a node attribute called {@code rank}, {@code
 * depth}, {@code order}, {@code level}, {@code position} or {@code sort} is an attribute like any
 * other, in every pattern. (Snapshots of Arbor before 0.1.0 named them {@code rank} and {@code
 * depth}: open a collection they wrote with {@code withFieldName(TreeField.RANK, "rank")}, or
 * {@code (TreeField.DEPTH, "depth")} for nested sets.)
 */
public enum TreeField {
  /** The parent's id; null (or, in the manual's nested sets, {@code 0}) for a root. */
  PARENT("parent"),
  /** The ordered ids of the node's children (child references). */
  CHILDREN("children"),
  /** The ids of the node's ancestors, root first (array of ancestors). */
  ANCESTORS("ancestors"),
  /** The ancestors' ids as a string {@code ,a,b,}, null for a root (materialized paths). */
  PATH("path"),
  /** The number given on entering the node in a preorder walk (nested sets). */
  LEFT("left"),
  /** The number given on leaving the node in a preorder walk (nested sets). */
  RIGHT("right"),
  /** The node's number of ancestors (nested sets: limits a descendants read to a depth). */
  DEPTH("arborDepth"),
  /** The node's order among its siblings (all patterns but nested sets, whose order is left). */
  RANK("arborRank");

  private final String defaultName;

  TreeField(String defaultName) {
    this.defaultName = defaultName;
  }

  /** The name the field has when no other is given. */
  public String defaultName() {
    return defaultName;
  }

  /** Whether stores of {@code pattern} keep this field. */
  public boolean usedBy(TreePattern pattern) {
    return of(pattern).contains(this);
  }

  /** The structural fields stores of {@code pattern} keep, in declaration order. */
  public static Set<TreeField> of(TreePattern pattern) {
    requireNonNull(pattern, "pattern");
    return switch (pattern) {
      case PARENT_REFERENCES -> EnumSet.of(PARENT, RANK);
      case CHILD_REFERENCES -> EnumSet.of(CHILDREN, RANK);
      case ARRAY_OF_ANCESTORS -> EnumSet.of(PARENT, ANCESTORS, RANK);
      case MATERIALIZED_PATHS -> EnumSet.of(PATH, RANK);
      case NESTED_SETS -> EnumSet.of(PARENT, LEFT, RIGHT, DEPTH);
    };
  }
}
