package dev.arbor.bench;

import java.util.List;

/**
 * The mixed workloads: a fixed sequence of {@link Script#WORKLOAD_STEPS} operations drawn from a
 * mix, with subjects drawn at random from the tree as it evolves, the same sequence for every
 * pattern. Reported per operation (the sequence's total divided by its length).
 */
enum Workload {
  /** Read-heavy browsing: 95% reads (menus, breadcrumbs, listings), 5% edits. */
  BROWSE("read-heavy browsing 95/5", List.of(
      new Weighted(Step.CHILDREN, 35), new Weighted(Step.ANCESTORS, 30),
      new Weighted(Step.DESCENDANTS_LIMITED, 15), new Weighted(Step.DESCENDANTS, 15),
      new Weighted(Step.INSERT, 3), new Weighted(Step.MOVE_LEAF, 1),
      new Weighted(Step.DELETE, 1))),
  /** Half reads, half edits. */
  BALANCED("balanced 50/50", List.of(
      new Weighted(Step.CHILDREN, 15), new Weighted(Step.ANCESTORS, 15),
      new Weighted(Step.DESCENDANTS, 10), new Weighted(Step.DESCENDANTS_LIMITED, 10),
      new Weighted(Step.INSERT, 25), new Weighted(Step.MOVE_LEAF, 15),
      new Weighted(Step.DELETE, 10))),
  /** Reorganisation-heavy: 80% edits, most of them moves of leaves and of whole subtrees. */
  REORGANISE("reorganisation-heavy 20/80", List.of(
      new Weighted(Step.CHILDREN, 10), new Weighted(Step.ANCESTORS, 10),
      new Weighted(Step.MOVE_LEAF, 30), new Weighted(Step.MOVE_SUBTREE, 25),
      new Weighted(Step.INSERT, 15), new Weighted(Step.DELETE, 10)));

  /** The kinds of step a workload draws. */
  enum Step {
    /** Children of a random inner node. */
    CHILDREN,
    /** Ancestors of a random node. */
    ANCESTORS,
    /** Descendants of a random node whose subtree is small (2 to 50 nodes). */
    DESCENDANTS,
    /** Two levels of descendants of a random inner node. */
    DESCENDANTS_LIMITED,
    /** Insert a leaf next to or under a random node. */
    INSERT,
    /** Move a random leaf under a random other node. */
    MOVE_LEAF,
    /** Move a random subtree of 2 to 4 sqrt(N) nodes under a random node outside it. */
    MOVE_SUBTREE,
    /** Delete a random leaf or small subtree (at most 5 nodes). */
    DELETE
  }

  /** A step kind with its weight in the mix. */
  record Weighted(Step step, int weight) {}

  private final String description;
  private final List<Weighted> mix;

  Workload(String description, List<Weighted> mix) {
    this.description = description;
    this.mix = mix;
  }

  /** A few words saying what the mix is. */
  String description() {
    return description;
  }

  /** The step kinds and their weights. */
  List<Weighted> mix() {
    return mix;
  }

  /** The percentage of reads in the mix. */
  int readPercent() {
    int reads = 0;
    int total = 0;
    for (Weighted w : mix) {
      total += w.weight();
      if (w.step().ordinal() <= Step.DESCENDANTS_LIMITED.ordinal()) {
        reads += w.weight();
      }
    }
    return Math.round(100f * reads / total);
  }
}
