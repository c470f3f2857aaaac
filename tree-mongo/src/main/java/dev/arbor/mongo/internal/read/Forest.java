package dev.arbor.mongo.internal.read;

import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Client-side assembly of rows into ordered trees: preorder walks, snapshots and the structural
 * checks every pattern shares (orphans, cycles, duplicated sibling order).
 */
public final class Forest {
  private static final Comparator<Row> BY_ORDER =
      Comparator.comparingLong(Row::order).thenComparing(Row::id);

  private final Map<String, Row> rows = new LinkedHashMap<>();
  private final Map<String, List<Row>> children = new HashMap<>();

  public Forest(Iterable<Row> rows) {
    for (Row r : rows) {
      this.rows.put(r.id(), r);
      children.computeIfAbsent(r.parent(), k -> new ArrayList<>()).add(r);
    }
    for (List<Row> siblings : children.values()) {
      siblings.sort(BY_ORDER);
    }
  }

  public @Nullable Row row(String id) {
    return rows.get(id);
  }

  int size() {
    return rows.size();
  }

  List<String> childrenOf(String id) {
    List<String> out = new ArrayList<>();
    for (Row r : children.getOrDefault(id, List.of())) {
      out.add(r.id());
    }
    return out;
  }

  /** The descendants of {@code id} in preorder, down to {@code maxDepth} levels. */
  public List<String> preorderBelow(@Nullable String id, int maxDepth) {
    List<String> out = new ArrayList<>();
    Deque<Object[]> stack = new ArrayDeque<>();
    pushChildren(stack, id, 1);
    Set<String> seen = new HashSet<>();
    while (!stack.isEmpty()) {
      Object[] top = stack.pop();
      Row r = (Row) top[0];
      int depth = (Integer) top[1];
      if (depth > maxDepth || !seen.add(r.id())) {
        continue;
      }
      out.add(r.id());
      pushChildren(stack, r.id(), depth + 1);
    }
    return out;
  }

  private void pushChildren(Deque<Object[]> stack, @Nullable String id, int depth) {
    List<Row> kids = children.getOrDefault(id, List.of());
    for (int i = kids.size() - 1; i >= 0; i--) {
      stack.push(new Object[] {kids.get(i), depth});
    }
  }

  /** The ancestors of {@code id} following parent links, root first; stops at a cycle. */
  public List<String> ancestorsOf(String id) {
    List<String> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    Row r = rows.get(id);
    while (r != null && r.parent() != null && seen.add(r.parent())) {
      out.add(0, r.parent());
      r = rows.get(r.parent());
    }
    return out;
  }

  /**
   * Checks the shared structure: every parent exists, no node is its own ancestor, siblings have
   * distinct orders. Appends one problem per offending node.
   */
  public void checkStructure(List<Problem> problems) {
    for (Row r : rows.values()) {
      if (r.parent() != null && !rows.containsKey(r.parent())) {
        problems.add(new Problem(r.id(), "parent '" + r.parent() + "' does not exist (orphan)"));
      }
    }
    Set<String> reachable = new HashSet<>(preorderBelow(null, Integer.MAX_VALUE));
    for (Row r : rows.values()) {
      if (!reachable.contains(r.id()) && (r.parent() == null || rows.containsKey(r.parent()))) {
        problems.add(new Problem(r.id(), unreachable(r.id())));
      }
    }
    for (List<Row> siblings : children.values()) {
      for (int i = 1; i < siblings.size(); i++) {
        if (siblings.get(i).order() == siblings.get(i - 1).order()) {
          problems.add(new Problem(siblings.get(i).id(), "has the same sibling order ("
              + siblings.get(i).order() + ") as '" + siblings.get(i - 1).id() + "'"));
          problems.add(new Problem(siblings.get(i - 1).id(), "has the same sibling order ("
              + siblings.get(i).order() + ") as '" + siblings.get(i).id() + "'"));
        }
      }
    }
  }

  /**
   * Why {@code id} is unreachable from every root: its parent does not exist (an orphan), an
   * ancestor's does not (an orphan above it), or its parent links form a cycle.
   */
  private String unreachable(String id) {
    Set<String> seen = new HashSet<>();
    Row r = rows.get(id);
    while (r != null && r.parent() != null && seen.add(r.id())) {
      Row up = rows.get(r.parent());
      if (up == null) {
        String orphan = "orphan (parent '" + r.parent() + "' does not exist)";
        return r.id().equals(id) ? "is an " + orphan : "is unreachable from any root: its"
            + " ancestor '" + r.id() + "' is an " + orphan;
      }
      r = up;
    }
    return "is on a parent cycle, unreachable from any root";
  }

  /**
   * {@code id}, read from a document below {@code parent} to be answered as a node.
   *
   * @throws TreeException if it is the empty string, which no node has (a document of another
   *     tool; {@code check()} lists it), rather than the bare {@code IllegalArgumentException} of
   *     a {@link Tree} or {@link dev.arbor.core.Node} given it
   */
  public static String nodeId(String id, @Nullable String parent) {
    if (id.isEmpty()) {
      throw new dev.arbor.core.TreeException("The document with _id '' (the empty string"
          + (parent == null ? "" : ", under '" + parent + "'") + ") is no node: a node id is a"
          + " non-empty string; check() lists it: give it another _id, or delete it");
    }
    return id;
  }

  /**
   * The forest as a {@link Tree}.
   *
   * @throws TreeException naming a node that no root reaches (an orphan, a node below one, or a
   *     cycle of parent links), or a document whose {@code _id} is the empty string: the tree
   *     cannot be read whole; {@code check()} lists every such node
   */
  public Tree toTree() {
    Tree.Builder builder = Tree.builder();
    List<String> reached = preorderBelow(null, Integer.MAX_VALUE);
    if (reached.size() < rows.size()) {
      Set<String> in = new HashSet<>(reached);
      String first = rows.keySet().stream().filter(id -> !in.contains(id)).sorted().findFirst()
          .orElseThrow();
      throw new dev.arbor.core.TreeException("Cannot read the tree whole: node '" + first
          + "' " + unreachable(first) + " (" + (rows.size() - reached.size()) + " of "
          + rows.size() + " nodes are unreachable); check() lists them, and repair() settles"
          + " what it can");
    }
    for (String id : reached) {
      Row r = rows.get(id);
      builder.add(nodeId(id, r.parent()), r.parent(), r.attributes());
    }
    return builder.build();
  }
}
