package dev.arbor.bench;

import dev.arbor.core.Position;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The nodes each single {@link Operation} works on, chosen once per tree (generated, or read from
 * {@code --tree}) so that every pattern does the same work. Choices are deterministic: extremes are
 * taken first in preorder and random picks use the run's seed.
 *
 * @param deepLeaf a leaf of maximum depth (ancestors)
 * @param widest the node with the most children (children)
 * @param small root of the non-root subtree closest to 10 nodes (descendants, delete)
 * @param medium root of the non-root subtree closest to sqrt(N) nodes
 * @param large root of the non-root subtree closest to N/4 nodes (descendants, move)
 * @param insertParent the inner node in the middle of the preorder (insert)
 * @param movedLeaf a random leaf (move a leaf)
 * @param leafTarget where the leaf goes: last child of a random inner node other than its parent
 * @param subtreeTarget where the large subtree goes: last child of a random inner node outside
 *     it, other than its parent, or the last root if there is none
 */
record Subjects(int deepLeaf, int widest, int small, int medium, int large, int insertParent,
    int movedLeaf, Position leafTarget, Position subtreeTarget) {

  static Subjects choose(TreeFacts f, long seed) {
    int n = f.size();
    SplittableRandom random = new SplittableRandom(seed);
    int deepLeaf = 0;
    int widest = 0;
    List<Integer> inner = new ArrayList<>();
    List<Integer> leaves = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (f.isLeaf(i)) {
        leaves.add(i);
        if (f.depth[i] > f.depth[deepLeaf] || !f.isLeaf(deepLeaf)) {
          deepLeaf = i;
        }
      } else {
        inner.add(i);
      }
      if (f.childCount[i] > f.childCount[widest]) {
        widest = i;
      }
    }
    int small = closestSubtree(f, 10);
    int medium = closestSubtree(f, Math.sqrt(n));
    int large = closestSubtree(f, n / 4.0);
    int insertParent = inner.isEmpty() ? 0 : inner.get(inner.size() / 2);

    int movedLeaf = leaves.get(random.nextInt(leaves.size()));
    List<Integer> leafTargets = new ArrayList<>();
    for (int i : inner) {
      if (i != f.parent[movedLeaf]) {
        leafTargets.add(i);
      }
    }
    Position leafTarget = leafTargets.isEmpty() ? Position.lastRoot()
        : Position.lastChildOf(f.id(leafTargets.get(random.nextInt(leafTargets.size()))));

    List<Integer> subtreeTargets = new ArrayList<>();
    for (int i : inner) {
      if (!f.inSubtree(i, large) && i != f.parent[large]) {
        subtreeTargets.add(i);
      }
    }
    Position subtreeTarget = subtreeTargets.isEmpty() ? Position.lastRoot()
        : Position.lastChildOf(f.id(subtreeTargets.get(random.nextInt(subtreeTargets.size()))));
    return new Subjects(deepLeaf, widest, small, medium, large, insertParent, movedLeaf,
        leafTarget, subtreeTarget);
  }

  /**
   * The root of the subtree whose size is closest to {@code target} on a log scale, among non-root
   * nodes with at least one child (any node if there is none); the first in preorder on ties.
   */
  static int closestSubtree(TreeFacts f, double target) {
    int best = -1;
    double bestDistance = Double.MAX_VALUE;
    for (int pass = 0; pass < 2 && best < 0; pass++) {
      for (int i = 0; i < f.size(); i++) {
        boolean eligible = pass == 1 || (f.parent[i] >= 0 && !f.isLeaf(i));
        if (!eligible) {
          continue;
        }
        double distance = Math.abs(Math.log(f.subtreeSize[i]) - Math.log(target));
        if (distance < bestDistance) {
          best = i;
          bestDistance = distance;
        }
      }
    }
    return best;
  }
}
