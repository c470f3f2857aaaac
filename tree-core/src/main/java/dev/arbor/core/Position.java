package dev.arbor.core;

import dev.arbor.core.internal.TreeStores;
import org.jspecify.annotations.Nullable;

/**
 * Where {@link TreeStore#insert(String, Position) insert} and {@link TreeStore#move(String,
 * Position) move} put a node: relative to the ordered list of roots, to the ordered children of a
 * parent, or to a sibling.
 *
 * <pre>{@code
 *   firstRoot()            lastRoot()
 *       v                      v
 *   [ A ,         B         ,  ]            roots, in order
 *              /  |  \
 *   firstChildOf(B)  lastChildOf(B)
 *             v         v
 *            [ c , d , e ]                  children of B, in order
 *                ^   ^
 *       before(d)     after(d)
 * }</pre>
 *
 * <p>A position names its anchor (a parent or a sibling) by id; the anchor must exist when the
 * position is used, otherwise the store throws {@link NodeNotFoundException}. Positions are values:
 * two positions built by the same factory with the same anchor are equal.
 */
public sealed interface Position permits Position.Root, Position.Child, Position.Sibling {

  /** The first place among the roots. */
  static Position firstRoot() {
    return new Root(true);
  }

  /** The last place among the roots. */
  static Position lastRoot() {
    return new Root(false);
  }

  /** The first place among the children of {@code parentId}. */
  static Position firstChildOf(String parentId) {
    return new Child(parentId, true);
  }

  /** The last place among the children of {@code parentId}. */
  static Position lastChildOf(String parentId) {
    return new Child(parentId, false);
  }

  /** The place just before {@code siblingId}, under the same parent (or among the roots). */
  static Position before(String siblingId) {
    return new Sibling(siblingId, true);
  }

  /** The place just after {@code siblingId}, under the same parent (or among the roots). */
  static Position after(String siblingId) {
    return new Sibling(siblingId, false);
  }

  /** The id this position is relative to, or {@code null} for a root position. */
  @Nullable String anchor();

  /**
   * A place among the roots.
   *
   * @param first {@code true} for the first place, {@code false} for the last
   */
  record Root(boolean first) implements Position {
    @Override
    public @Nullable String anchor() {
      return null;
    }

    @Override
    public String toString() {
      return first ? "firstRoot()" : "lastRoot()";
    }
  }

  /**
   * A place among the children of a parent.
   *
   * @param parentId the parent
   * @param first {@code true} for the first child, {@code false} for the last
   */
  record Child(String parentId, boolean first) implements Position {
    /** Validates the parent id. */
    public Child {
      TreeStores.checkId(parentId);
    }

    @Override
    public String anchor() {
      return parentId;
    }

    @Override
    public String toString() {
      return (first ? "firstChildOf(" : "lastChildOf(") + parentId + ")";
    }
  }

  /**
   * A place next to a sibling, under the same parent.
   *
   * @param siblingId the sibling
   * @param before {@code true} for just before the sibling, {@code false} for just after
   */
  record Sibling(String siblingId, boolean before) implements Position {
    /** Validates the sibling id. */
    public Sibling {
      TreeStores.checkId(siblingId);
    }

    @Override
    public String anchor() {
      return siblingId;
    }

    @Override
    public String toString() {
      return (before ? "before(" : "after(") + siblingId + ")";
    }
  }
}
