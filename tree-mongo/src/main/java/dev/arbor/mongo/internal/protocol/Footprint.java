package dev.arbor.mongo.internal.protocol;

import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.mongo.internal.layout.Layout;
import java.util.LinkedHashSet;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a change holds when it runs in a lane ({@link Lanes}): the node ids whose documents it
 * marks, the <i>head</i> first — a document the change never deletes, which carries the lane's
 * lease and journal. Null: the change takes the tree's lock (it changes the top level, whose
 * parent is no document).
 *
 * <pre>
 *   change                          marks
 *   ------------------------------  -------------------------------------------------------
 *   insert under P (or beside a     P                 (P's document stands for P's children)
 *   child of P)
 *   update of N                     N
 *   move of X from P to Q           P, Q, X and every node of X's subtree
 *   delete of X (leaf or subtree),  P, X and every node of X's subtree
 *   delete lifting X's children
 * </pre>
 *
 * <p>A footprint is computed twice: before the marks are claimed (to know what to claim), and
 * again under them, before the change is planned; if the second is not within the first, the
 * marks are released and the union is claimed. Every change that would make the target Q of a
 * move a descendant of X marks a node of X's subtree (its own target), and every change of the
 * ancestors of Q marks Q (moved or deleted with a subtree that holds it): so the cycle check of a
 * move, made under its marks, cannot be overtaken.
 */
@FunctionalInterface
public interface Footprint {
  /**
   * The node ids to mark, head first, or null: take the tree's lock.
   *
   * @param underMarks false for the first reading, before any mark is claimed: it may leave out
   *     what is read again under the marks (a moved or deleted node's descendants), since a
   *     footprint read under the marks that is not within the marks claimed claims them all again
   */
  public @Nullable List<String> of(Reads r, boolean underMarks);

  /** An insert at {@code position}. */
  public static Footprint insert(Layout layout, Position position) {
    return (r, underMarks) -> {
      String parent = parentAt(layout, r, position);
      return parent == null ? null : List.of(parent);
    };
  }

  /** An update of {@code id}'s attributes. */
  public static Footprint update(String id) {
    return (r, underMarks) -> List.of(id);
  }

  /** A move of {@code id} to {@code position}. */
  public static Footprint move(Layout layout, String id, Position position) {
    return (r, underMarks) -> {
      Layout.Family family;
      try {
        family = family(layout, r, id, underMarks);
      } catch (NodeNotFoundException e) {
        return List.of(id); // claimed as missing: the tree's lock tells the caller
      }
      String to = parentAt(layout, r, position);
      if (family.parent() == null || to == null) {
        return null;
      }
      LinkedHashSet<String> ids = new LinkedHashSet<>(List.of(family.parent(), to, id));
      ids.addAll(family.descendants());
      return List.copyOf(ids);
    };
  }

  /** The node's parent, and under the marks its descendants (in one query for a leaf). */
  private static Layout.Family family(Layout layout, Reads r, String id, boolean underMarks) {
    return underMarks ? layout.parentAndDescendants(r, id)
        : new Layout.Family(layout.parentOf(r, id), List.of());
  }

  /** A delete of {@code id} (its subtree, or lifting its children). */
  public static Footprint delete(Layout layout, String id) {
    return (r, underMarks) -> {
      Layout.Family family;
      try {
        family = family(layout, r, id, underMarks);
      } catch (NodeNotFoundException e) {
        return List.of(id);
      }
      if (family.parent() == null) {
        return null;
      }
      LinkedHashSet<String> ids = new LinkedHashSet<>(List.of(family.parent(), id));
      ids.addAll(family.descendants());
      return List.copyOf(ids);
    };
  }

  /** The parent a node at {@code position} has, null at the top level (or no such sibling). */
  private static @Nullable String parentAt(Layout layout, Reads r, Position position) {
    if (position instanceof Position.Child child) {
      return child.parentId();
    }
    if (position instanceof Position.Sibling sibling) {
      try {
        return layout.parentOf(r, sibling.siblingId());
      } catch (NodeNotFoundException e) {
        return null;
      }
    }
    return null;
  }
}
