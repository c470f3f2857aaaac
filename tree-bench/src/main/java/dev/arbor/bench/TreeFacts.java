package dev.arbor.bench;

import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Per-node facts about a tree, generated or read from a file, by preorder index: parent, depth,
 * subtree size, number of children and previous sibling; and from them the tree's {@link Profile}.
 * Computed once, in two passes, without recursion.
 */
final class TreeFacts {
  final Tree tree;
  final List<Node> entries;
  final int[] parent;
  final int[] depth;
  final int[] subtreeSize;
  final int[] childCount;
  final int[] previousSibling;
  private final Map<String, Integer> index;

  TreeFacts(Tree tree) {
    this.tree = tree;
    this.entries = tree.entries();
    int n = entries.size();
    parent = new int[n];
    depth = new int[n];
    subtreeSize = new int[n];
    childCount = new int[n];
    previousSibling = new int[n];
    index = new HashMap<>(n * 2);
    Map<Integer, Integer> lastChild = new HashMap<>();
    for (int i = 0; i < n; i++) {
      Node e = entries.get(i);
      index.put(e.id(), i);
      parent[i] = e.parentId() == null ? -1 : index.get(e.parentId());
      depth[i] = e.depth();
      subtreeSize[i] = 1;
      Integer previous = lastChild.put(parent[i], i);
      previousSibling[i] = previous == null ? -1 : previous;
      if (parent[i] >= 0) {
        childCount[parent[i]]++;
      }
    }
    for (int i = n - 1; i > 0; i--) {
      if (parent[i] >= 0) {
        subtreeSize[parent[i]] += subtreeSize[i];
      }
    }
  }

  int size() {
    return entries.size();
  }

  int indexOf(String id) {
    return index.get(id);
  }

  String id(int i) {
    return entries.get(i).id();
  }

  boolean isLeaf(int i) {
    return childCount[i] == 0;
  }

  /** Whether node {@code i} lies in the subtree of {@code root} (itself included). */
  boolean inSubtree(int i, int root) {
    // In preorder, a subtree is the contiguous range [root, root + size).
    return i >= root && i < root + subtreeSize[root];
  }

  /** The position that puts node {@code i} back where it is in the tree. */
  Position positionOf(int i) {
    if (previousSibling[i] >= 0) {
      return Position.after(id(previousSibling[i]));
    }
    return parent[i] >= 0 ? Position.firstChildOf(id(parent[i])) : Position.firstRoot();
  }

  /**
   * The shape of a tree in figures, for the report.
   *
   * @param nodes the number of nodes
   * @param roots the number of roots
   * @param leaves the number of nodes without children
   * @param maxDepth the largest depth (a root is at depth 0)
   * @param meanDepth the mean depth over all nodes
   * @param maxFanOut the most children of one node
   * @param meanFanOut the mean number of children of the nodes that have some (0 if none has)
   */
  record Profile(int nodes, int roots, int leaves, int maxDepth, double meanDepth, int maxFanOut,
      double meanFanOut) {

    /**
     * One line: {@code 6 nodes, 1 root, 3 leaves; depth max 3, mean 1.83 (roots at 0); fan-out
     * max 2, mean 1.67 children per inner node}.
     */
    String describe() {
      return Format.count(nodes) + (nodes == 1 ? " node, " : " nodes, ") + Format.count(roots)
          + (roots == 1 ? " root, " : " roots, ") + Format.count(leaves)
          + (leaves == 1 ? " leaf" : " leaves") + "; depth max " + maxDepth + ", mean "
          + String.format(Locale.ROOT, "%.2f", meanDepth) + " (roots at 0); fan-out max "
          + maxFanOut + ", mean " + String.format(Locale.ROOT, "%.2f", meanFanOut)
          + " children per inner node";
    }
  }

  /** The tree's {@link Profile}. */
  Profile profile() {
    int n = size();
    int roots = 0;
    int leaves = 0;
    int maxDepth = 0;
    long depths = 0;
    int maxFanOut = 0;
    for (int i = 0; i < n; i++) {
      roots += parent[i] < 0 ? 1 : 0;
      leaves += isLeaf(i) ? 1 : 0;
      maxDepth = Math.max(maxDepth, depth[i]);
      depths += depth[i];
      maxFanOut = Math.max(maxFanOut, childCount[i]);
    }
    int inner = n - leaves;
    return new Profile(n, roots, leaves, maxDepth, n == 0 ? 0 : (double) depths / n, maxFanOut,
        inner == 0 ? 0 : (double) (n - roots) / inner);
  }

  /**
   * A prefix that no id of the tree starts with, for the ids of the nodes the benchmark inserts:
   * {@code bench-}, else {@code bench2-}, {@code bench3-}, ... (a file's tree may hold any id).
   */
  String newIdPrefix() {
    for (int k = 1; ; k++) {
      String prefix = k == 1 ? "bench-" : "bench" + k + "-";
      boolean used = false;
      for (Node e : entries) {
        if (e.id().startsWith(prefix)) {
          used = true;
          break;
        }
      }
      if (!used) {
        return prefix;
      }
    }
  }
}
