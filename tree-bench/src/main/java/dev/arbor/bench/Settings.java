package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One run's parameters, validated.
 *
 * @param uri the MongoDB URI, or null for the embedded server
 * @param patterns the patterns to measure
 * @param shapes where the trees come from: the generated shapes, or the one {@link TreeFile} of
 *     {@code --tree}
 * @param sizes the tree sizes (nodes), ascending; with a tree file, its number of nodes alone
 * @param ops the single operations
 * @param workloads the mixed workloads
 * @param repeat the most timed invocations per measurement
 * @param warmup untimed invocations before the counted and timed ones
 * @param seed the seed of the generated trees and of random choices (the subjects of the
 *     operations, the sequences of the workloads)
 * @param out the directory the reports go to
 * @param cellSeconds after this many seconds on one measurement, stop repeating it (at least one
 *     timed invocation is always made)
 * @param isolatedReads whether the stores check their lock around reads (the library's default)
 * @param transactions whether the stores use multi-document transactions where the server has
 *     them, instead of their lock and journal
 * @param rankBy what ranks the patterns per workload
 */
record Settings(String uri, List<TreePattern> patterns, List<TreeSource> shapes,
    List<Integer> sizes, List<Operation> ops, List<Workload> workloads, int repeat, int warmup,
    long seed, Path out, double cellSeconds, boolean isolatedReads, boolean transactions,
    RankBy rankBy) {

  /** What ranks the patterns of a workload. */
  enum RankBy {
    /** {@link #COUNTS} on the embedded server, {@link #TIME} on any other. */
    AUTO,
    /**
     * Median latency per operation, geometric mean over the shapes, with a 95% bootstrap interval
     * from the timed invocations; ranks whose intervals overlap are ties.
     */
    TIME,
    /**
     * Round trips and documents written per operation, means over the shapes: the same on any
     * server. A pattern ranks below another only if that one needs fewer of one (by more than
     * 10%) and not more of the other; patterns that trade one for the other tie.
     */
    COUNTS;

    /**
     * Parses a command-line name.
     *
     * @throws IllegalArgumentException naming the value and the valid ones
     */
    static RankBy parse(String value) {
      for (RankBy r : values()) {
        if (Names.of(r).equals(value.trim().toLowerCase(java.util.Locale.ROOT))) {
          return r;
        }
      }
      throw new IllegalArgumentException("unknown ranking figure '" + value.trim() + "' (valid: "
          + Names.list(values()) + ")");
    }

    /** AUTO resolved for a server. */
    RankBy on(boolean embedded) {
      return this != AUTO ? this : embedded ? COUNTS : TIME;
    }
  }

  static final List<Integer> DEFAULT_SIZES = List.of(300, 1_000);
  static final int DEFAULT_REPEAT = 5;
  static final int DEFAULT_WARMUP = 1;
  static final long DEFAULT_SEED = 42;
  static final double DEFAULT_CELL_SECONDS = 1;
  static final int MIN_SIZE = 10;
  static final int MAX_SIZE = 100_000_000;

  /**
   * Validates the parameters.
   *
   * @throws IllegalArgumentException naming the offending option and value
   */
  Settings {
    if (patterns.isEmpty()) {
      throw new IllegalArgumentException("--patterns selects no pattern");
    }
    if (shapes.isEmpty()) {
      throw new IllegalArgumentException("--shapes selects no shape");
    }
    if (sizes.isEmpty()) {
      throw new IllegalArgumentException("--sizes selects no size");
    }
    if (ops.isEmpty() && workloads.isEmpty()) {
      throw new IllegalArgumentException("--ops and --workload select nothing to measure");
    }
    if (repeat < 1) {
      throw new IllegalArgumentException("--repeat must be at least 1, got " + repeat);
    }
    if (warmup < 0) {
      throw new IllegalArgumentException("--warmup must be at least 0, got " + warmup);
    }
    if (!(cellSeconds > 0)) {
      throw new IllegalArgumentException("--cell-seconds must be positive, got " + cellSeconds);
    }
    shapes = List.copyOf(shapes);
    sizes = sizes.stream().distinct().sorted().toList();
    for (TreeSource source : shapes) {
      if (source instanceof TreeFile f
          && (shapes.size() > 1 || !sizes.equals(List.of(f.size())))) {
        throw new IllegalArgumentException("a tree file is measured alone and at its own size, "
            + f.size() + " nodes");
      }
    }
  }

  /** The file of {@code --tree}, or null when the trees are generated. */
  TreeFile treeFile() {
    return shapes.get(0) instanceof TreeFile f ? f : null;
  }

  /**
   * Parses tree sizes: integers with an optional {@code k} (thousand) or {@code M} (million)
   * suffix, e.g. {@code 1000,10k,1M}.
   *
   * @throws IllegalArgumentException naming a value that is not a size or is out of range
   */
  static List<Integer> parseSizes(List<String> values) {
    if (values == null || values.isEmpty()) {
      return DEFAULT_SIZES;
    }
    List<Integer> sizes = new ArrayList<>();
    for (String raw : values) {
      String v = raw.trim();
      long factor = 1;
      String lower = v.toLowerCase(Locale.ROOT);
      if (lower.endsWith("k")) {
        factor = 1_000;
        v = v.substring(0, v.length() - 1);
      } else if (lower.endsWith("m")) {
        factor = 1_000_000;
        v = v.substring(0, v.length() - 1);
      }
      long size;
      try {
        size = Long.parseLong(v.replace("_", "")) * factor;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("invalid size '" + raw.trim()
            + "' (valid: a number of nodes like 1000, 10k, 1M)");
      }
      if (size < MIN_SIZE || size > MAX_SIZE) {
        throw new IllegalArgumentException("size '" + raw.trim() + "' is out of range (valid: "
            + MIN_SIZE + " to " + MAX_SIZE + " nodes)");
      }
      sizes.add((int) size);
    }
    return sizes;
  }
}
