package dev.arbor.bench;

import dev.arbor.core.Tree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The tree shapes the benchmark generates, each deterministically from a size and a seed. Node ids
 * are {@code n0, n1, ...} in creation order; every node has one small attribute, {@code name}, so
 * that documents have a realistic payload besides the structure.
 *
 * <pre>{@code
 * BALANCED   complete 4-ary tree, filled level by level     depth log4 N
 * DEEP       chains (20 nodes on average) that branch off    mean depth ~ 54 at 1 000,
 *            at random earlier nodes                         81 at 4 000, 141 at 100 000
 * WIDE       one root, 5 parents, all other nodes leaves     depth 2, fan-out ~ N/5
 *            spread evenly under the 5 parents
 * RANDOM     random recursive tree: node i hangs under a     depth ~ e ln N at most
 *            uniformly chosen earlier node
 * CATALOG    a category tree: at most 4 levels below the     depth <= 4, skewed fan-out
 *            root, parents chosen by preferential attachment
 *            (a category with many children attracts more)
 * }</pre>
 */
enum Shape implements TreeSource {
  /** A complete 4-ary tree filled level by level. */
  BALANCED("complete 4-ary tree"),
  /** Long chains that branch off at random earlier nodes. */
  DEEP("chains of ~20 branching at random"),
  /** One root, five parents, every other node a leaf under one of them. */
  WIDE("root, 5 parents, N/5 leaves each"),
  /** Random recursive tree. */
  RANDOM("random recursive tree"),
  /** A realistic category tree: few levels, skewed fan-out. */
  CATALOG("category tree, <= 4 levels, skewed");

  static final int FAN_OUT = 4;
  static final int MEAN_CHAIN = 20;
  static final int WIDE_PARENTS = 5;
  static final int CATALOG_LEVELS = 4;

  private final String description;

  Shape(String description) {
    this.description = description;
  }

  /** The command-line name: {@code balanced}, {@code deep}, ... */
  @Override
  public String label() {
    return Names.of(this);
  }

  /** One line saying how the shape is built. */
  @Override
  public String description() {
    return description;
  }

  /** {@link #generate}. */
  @Override
  public Tree tree(int size, long seed) {
    return generate(size, seed);
  }

  /**
   * Generates a forest of {@code size} nodes (one root) of this shape.
   *
   * @throws IllegalArgumentException if {@code size < 1}
   */
  Tree generate(int size, long seed) {
    if (size < 1) {
      throw new IllegalArgumentException("tree size must be at least 1, got " + size);
    }
    int[] parent = parents(size, new SplittableRandom(seed ^ ordinal() * 0x9E3779B97F4A7C15L));
    Tree.Builder builder = Tree.builder();
    String label = this == CATALOG ? "Category " : "Node ";
    for (int i = 0; i < size; i++) {
      builder.add(id(i), parent[i] < 0 ? null : id(parent[i]), Map.of("name", label + i));
    }
    return builder.build();
  }

  static String id(int i) {
    return "n" + i;
  }

  /** The parent index of every node, -1 for the root; a parent always precedes its children. */
  private int[] parents(int size, SplittableRandom random) {
    int[] parent = new int[size];
    parent[0] = -1;
    switch (this) {
      case BALANCED -> {
        for (int i = 1; i < size; i++) {
          parent[i] = (i - 1) / FAN_OUT;
        }
      }
      case DEEP -> {
        for (int i = 1; i < size; i++) {
          parent[i] = random.nextInt(MEAN_CHAIN) == 0 ? random.nextInt(i) : i - 1;
        }
      }
      case WIDE -> {
        int parents = Math.min(WIDE_PARENTS, size - 1);
        for (int i = 1; i < size; i++) {
          parent[i] = i <= parents ? 0 : 1 + (i - parents - 1) % parents;
        }
      }
      case RANDOM -> {
        for (int i = 1; i < size; i++) {
          parent[i] = random.nextInt(i);
        }
      }
      case CATALOG -> {
        // Preferential attachment among the nodes that may still have children: each appears in
        // the urn once plus once per child, so large categories grow faster.
        int[] depth = new int[size];
        List<Integer> urn = new ArrayList<>();
        urn.add(0);
        for (int i = 1; i < size; i++) {
          int p = urn.get(random.nextInt(urn.size()));
          parent[i] = p;
          depth[i] = depth[p] + 1;
          urn.add(p);
          if (depth[i] < CATALOG_LEVELS) {
            urn.add(i);
          }
        }
      }
      default -> throw new AssertionError(this);
    }
    return parent;
  }
}
