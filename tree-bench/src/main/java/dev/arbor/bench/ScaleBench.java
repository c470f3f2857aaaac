package dev.arbor.bench;

import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CommandMeter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The scale benchmark of issue 14: per pattern and tree size (default 1 000, 10 000, 100 000 and
 * 1 000 000 nodes), a generated tree is streamed into the store with {@link
 * TreeStore#load(Iterator)} and the run measures, in a client JVM of its own with a small heap
 * ({@code -Xmx256m} by default) while the server runs elsewhere (the embedded one in a JVM of its
 * own, {@link ScaleServer}, or the one named by {@code --uri}):
 *
 * <ul>
 *   <li>load throughput as a ratio of raw {@code insertMany} of the same documents: a first
 *       load (into an empty server, reported apart) writes the tree; every document of its
 *       collection, as stored (read generically, as raw BSON), is read back by cursor into a
 *       temporary file. Then {@code --repeat} pairs run side by side: the file inserted with
 *       ordered {@code insertMany} in batches of {@value #COPY_BATCH} into a fresh collection
 *       with the same indexes (only the {@code insertMany} calls timed), and the load into a
 *       fresh collection, timed from the first entry to its return; each writes n documents
 *       while the server holds the other's n. Ratio = insertMany time / load time of a pair,
 *       the median over the pairs (1.0: the load writes as fast as raw inserts of its own
 *       documents; the goal of issue 14 is at least 0.8);
 *   <li>the client's heap per size: the sum of the heap pools' peaks (an upper bound that
 *       counts garbage not yet collected; reset after a full collection at the start of each
 *       size), and the live heap: the largest heap in use right after a full collection (one is
 *       forced after each operation, untimed; others happen when the old generation fills);
 *   <li>per operation, time and round trips ({@link CommandMeter}, every command the client
 *       sends): the load, the raw inserts, {@code entries()} streamed whole, {@code children} of a
 *       node with {@value ScaleTree#FAN_OUT} children, {@code ancestors} of the last (deepest)
 *       node, {@code descendants} of a node two levels above the bottom, and a small insert, move
 *       and delete of a leaf; the reads and writes are repeated ({@code --repeat}, median time);
 *   <li>the growth exponent of each figure from the smallest size to the largest: the
 *       least-squares slope of log(figure) against log(n) (0: flat, 1: linear).
 * </ul>
 *
 * <p>The tree: node {@code n<i>} ({@code i} from 0 to n-1) has children {@code n<8i+1>} to {@code
 * n<8i+8>} (those below n): a complete {@value ScaleTree#FAN_OUT}-ary tree, depth log8(n) (6 at
 * 1 M), about 60 bytes of attributes a node. It is generated in preorder on the fly, holding
 * only the open path, so the client never holds the tree.
 *
 * <pre>{@code
 * java -jar tree-bench/target/arbor.jar scale [--patterns all]
 *     [--sizes 1k,10k,100k,1M] [--repeat 3] [--client-heap 256m] [--server-heap 10g]
 *     [--in-process-server] [--limit-seconds 300] [--uri mongodb://...] [--markdown FILE]
 * }</pre>
 *
 * <p>The options are {@link ScaleCommand}'s. With no {@code --uri} the embedded server runs in a
 * JVM of its own ({@code arbor scale server}, {@code -Xmx} of {@code --server-heap}: it holds the
 * largest tree twice; in this JVM with {@code --in-process-server}), the clients in child JVMs,
 * each started as {@code arbor scale client …} on this JVM's class path. An operation whose
 * time, extrapolated from the smaller sizes by its growth exponent, would pass {@code
 * --limit-seconds} is skipped and reported so.
 */
final class ScaleBench {
  /** Documents per {@code insertMany} of the raw copy (as the load's batches). */
  static final int COPY_BATCH = 10_000;
  /** The operations, in the order measured. */
  static final List<String> OPS = List.of("load", "insertMany", "entries", "children",
      "ancestors", "descendants", "insert", "move", "delete");

  private ScaleBench() {}

  /**
   * What to run.
   *
   * @param classpath the class path of the client JVMs
   * @param launcher the client JVM's main class and the arguments before {@code client}: the
   *     command line this one runs as: the class whose main runs it, then {@code scale}
   */
  record Settings(List<TreePattern> patterns, List<Integer> sizes, List<String> ops, int repeat,
      String clientHeap, double limitSeconds, String uri, String classpath,
      List<String> launcher, Path markdown, boolean inProcessServer, String serverHeap) {
    static final List<Integer> DEFAULT_SIZES = List.of(1_000, 10_000, 100_000, 1_000_000);
    static final int DEFAULT_REPEAT = 3;
    static final String DEFAULT_CLIENT_HEAP = "256m";
    static final double DEFAULT_LIMIT_SECONDS = 300;
    /** -Xmx of the embedded server's JVM: it holds the largest tree twice (1M nodes: ~4 GB). */
    static final String DEFAULT_SERVER_HEAP = "10g";

    Settings {
      patterns = List.copyOf(patterns);
      sizes = List.copyOf(sizes);
      ops = List.copyOf(ops);
      launcher = List.copyOf(launcher);
    }

    /** The defaults, the clients launched as {@code launcher}. */
    static Settings defaults(List<String> launcher) {
      return new Settings(List.of(TreePattern.values()), DEFAULT_SIZES, OPS, DEFAULT_REPEAT,
          DEFAULT_CLIENT_HEAP, DEFAULT_LIMIT_SECONDS, null,
          System.getProperty("java.class.path"), launcher, null, false, DEFAULT_SERVER_HEAP);
    }

    Settings withSizes(List<Integer> s) {
      return new Settings(patterns, s, ops, repeat, clientHeap, limitSeconds, uri, classpath,
          launcher, markdown, inProcessServer, serverHeap);
    }

    Settings withPatterns(List<TreePattern> p) {
      return new Settings(p, sizes, ops, repeat, clientHeap, limitSeconds, uri, classpath,
          launcher, markdown, inProcessServer, serverHeap);
    }

    Settings withRepeat(int r) {
      return new Settings(patterns, sizes, ops, r, clientHeap, limitSeconds, uri, classpath,
          launcher, markdown, inProcessServer, serverHeap);
    }

    Settings withClasspath(String c) {
      return new Settings(patterns, sizes, ops, repeat, clientHeap, limitSeconds, uri, c,
          launcher, markdown, inProcessServer, serverHeap);
    }
  }

  /** One operation's figures at one size; {@code skipped} non-null if it was not run. */
  record Figure(TreePattern pattern, int n, String op, double millis, long roundTrips, long count,
      String skipped) {}

  /** Everything a run measured. */
  static final class Results {
    final List<Figure> figures = new ArrayList<>();
    /** Peak heap in bytes per pattern and size. */
    final Map<TreePattern, Map<Integer, Long>> heap = new LinkedHashMap<>();
    /** The largest heap in use after a full collection, in bytes, per pattern and size. */
    final Map<TreePattern, Map<Integer, Long>> live = new LinkedHashMap<>();
    /** Wall time of each pattern's client, in ms. */
    final Map<TreePattern, Long> patternMillis = new LinkedHashMap<>();
    /** Failures per pattern (a client that ended badly), with its last lines. */
    final Map<TreePattern, String> failures = new LinkedHashMap<>();
    long totalMillis;
    List<Integer> sizes = List.of();
    /** The median of the per-pair ratios insertMany / load, per pattern and size. */
    final Map<TreePattern, Map<Integer, Double>> ratios = new LinkedHashMap<>();
    /**
     * CPU milliseconds of the client and of the server (negative: unknown) during the median
     * run of the loads and streams, per pattern, size and operation.
     */
    final Map<TreePattern, Map<Integer, Map<String, double[]>>> cpu = new LinkedHashMap<>();

    Figure figure(TreePattern p, int n, String op) {
      for (Figure f : figures) {
        if (f.pattern == p && f.n == n && f.op.equals(op)) {
          return f;
        }
      }
      return null;
    }

    /**
     * insertMany time / load time at size n: the median of the ratios of the pairs run side by
     * side, or (from a client that did not report them) the ratio of the medians; NaN if not
     * measured.
     */
    double loadRatio(TreePattern p, int n) {
      Double paired = ratios.getOrDefault(p, Map.of()).get(n);
      if (paired != null) {
        return paired;
      }
      Figure load = figure(p, n, "load");
      Figure raw = figure(p, n, "insertMany");
      if (load == null || raw == null || load.skipped != null || raw.skipped != null) {
        return Double.NaN;
      }
      return raw.millis / load.millis;
    }

    /** The growth exponent of an operation's time (or round trips) over the sizes measured. */
    double exponent(TreePattern p, String op, boolean roundTrips) {
      List<double[]> points = new ArrayList<>();
      for (Figure f : figures) {
        if (f.pattern == p && f.op.equals(op) && f.skipped == null) {
          double v = roundTrips ? f.roundTrips : f.millis;
          if (v > 0) {
            points.add(new double[] {f.n, v});
          }
        }
      }
      return slope(points);
    }

    /** The largest size at which an operation was measured (for the range of an exponent). */
    int largestMeasured(TreePattern p, String op) {
      int m = 0;
      for (Figure f : figures) {
        if (f.pattern == p && f.op.equals(op) && f.skipped == null) {
          m = Math.max(m, f.n);
        }
      }
      return m;
    }
  }

  /** Least-squares slope of log(y) against log(x); NaN with fewer than two distinct x. */
  static double slope(List<double[]> points) {
    if (points.size() < 2) {
      return Double.NaN;
    }
    double sx = 0;
    double sy = 0;
    for (double[] p : points) {
      sx += Math.log(p[0]);
      sy += Math.log(p[1]);
    }
    double mx = sx / points.size();
    double my = sy / points.size();
    double num = 0;
    double den = 0;
    for (double[] p : points) {
      double dx = Math.log(p[0]) - mx;
      num += dx * (Math.log(p[1]) - my);
      den += dx * dx;
    }
    return den == 0 ? Double.NaN : num / den;
  }

  /**
   * The operations to measure from {@code --ops}: the load always, then those named, the leaf's
   * insert, move and delete last and in that order.
   *
   * @throws IllegalArgumentException naming an unknown operation
   */
  static List<String> ops(List<String> names) {
    List<String> ops = new ArrayList<>(List.of("load"));
    for (String name : names) {
      String op = name.trim();
      if (!OPS.contains(op)) {
        throw new IllegalArgumentException("unknown operation '" + op + "' (valid: "
            + String.join(", ", OPS) + "; the load always runs)");
      }
      if (!ops.contains(op)) {
        ops.add(op);
      }
    }
    if (ops.contains("insert") || ops.contains("move") || ops.contains("delete")) {
      ops.removeAll(List.of("insert", "move", "delete")); // a leaf's life, in this order
      ops.addAll(List.of("insert", "move", "delete"));
    }
    return ops;
  }
}
