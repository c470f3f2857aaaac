package dev.arbor.bench;

import dev.arbor.core.Tree;

/**
 * Where the trees of a run come from: a generated {@link Shape}, or the one tree of a file given
 * with {@code --tree} ({@link TreeFile}). The runner loads the source's tree for every pattern and
 * the reports group the measurements by source, under its {@link #label()}.
 */
sealed interface TreeSource permits Shape, TreeFile {
  /** The name the reports, {@code results.csv} and {@code results.json} give the trees. */
  String label();

  /** One line saying what the trees are, for the report. */
  String description();

  /**
   * The tree of {@code size} nodes for {@code seed}: generated for a shape; for a file, its tree,
   * whose node count is the only size a run of it has.
   */
  Tree tree(int size, long seed);
}
