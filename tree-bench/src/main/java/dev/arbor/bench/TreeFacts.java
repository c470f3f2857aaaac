package dev.arbor.bench;

import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-node facts about a generated tree, by preorder index: parent, depth, subtree size, number of
 * children and previous sibling. Computed once, in two passes, without recursion.
 */
final class TreeFacts {
  final Tree tree;
  final List<Tree.Entry> entries;
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
      Tree.Entry e = entries.get(i);
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
}
