package dev.arbor.bench;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.InsertManyOptions;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CommandMeter;
import dev.arbor.tools.ServerConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.bson.RawBsonDocument;

/**
 * The scale benchmark of issue 14: per pattern and tree size (default 1 000, 10 000, 100 000 and
 * 1 000 000 nodes), a generated tree is streamed into the store with {@link
 * TreeStore#load(Iterator)} and the run measures, in a client JVM of its own with a small heap
 * ({@code -Xmx256m} by default) while the server runs elsewhere (the embedded one in this JVM, or
 * the one named by {@code --uri}):
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
 *       node with {@value #FAN_OUT} children, {@code ancestors} of the last (deepest) node, {@code
 *       descendants} of a node two levels above the bottom, and a small insert, move and delete of
 *       a leaf; the reads and writes are repeated ({@code --repeat}, median time);
 *   <li>the growth exponent of each figure from the smallest size to the largest: the
 *       least-squares slope of log(figure) against log(n) (0: flat, 1: linear).
 * </ul>
 *
 * <p>The tree: node {@code n<i>} ({@code i} from 0 to n-1) has children {@code n<8i+1>} to {@code
 * n<8i+8>} (those below n): a complete {@value #FAN_OUT}-ary tree, depth log8(n) (6 at 1 M), about
 * 60 bytes of attributes a node. It is generated in preorder on the fly, holding only the open
 * path, so the client never holds the tree.
 *
 * <pre>{@code
 * java -Xmx8g -jar tree-bench/target/arbor.jar scale [--patterns all]
 *     [--sizes 1k,10k,100k,1M] [--repeat 3] [--client-heap 256m] [--limit-seconds 300]
 *     [--uri mongodb://...] [--markdown FILE]
 * }</pre>
 *
 * <p>The options are {@link ScaleCommand}'s. With no {@code --uri} the embedded server runs in
 * this JVM (hence its {@code -Xmx}: it holds the largest tree twice), the clients in child JVMs,
 * each started as {@code arbor scale client …} on this JVM's class path. An operation whose
 * time, extrapolated from the smaller sizes by its growth exponent, would pass {@code
 * --limit-seconds} is skipped and reported so.
 */
final class ScaleBench {
  /** Children per node of the generated tree. */
  static final int FAN_OUT = 8;
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
      List<String> launcher, Path markdown) {
    static final List<Integer> DEFAULT_SIZES = List.of(1_000, 10_000, 100_000, 1_000_000);
    static final int DEFAULT_REPEAT = 3;
    static final String DEFAULT_CLIENT_HEAP = "256m";
    static final double DEFAULT_LIMIT_SECONDS = 300;

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
          System.getProperty("java.class.path"), launcher, null);
    }

    Settings withSizes(List<Integer> s) {
      return new Settings(patterns, s, ops, repeat, clientHeap, limitSeconds, uri, classpath,
          launcher, markdown);
    }

    Settings withPatterns(List<TreePattern> p) {
      return new Settings(p, sizes, ops, repeat, clientHeap, limitSeconds, uri, classpath,
          launcher, markdown);
    }

    Settings withRepeat(int r) {
      return new Settings(patterns, sizes, ops, r, clientHeap, limitSeconds, uri, classpath,
          launcher, markdown);
    }

    Settings withClasspath(String c) {
      return new Settings(patterns, sizes, ops, repeat, clientHeap, limitSeconds, uri, c,
          launcher, markdown);
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

  // ------------------------------------------------------------------ the orchestrator

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

  /** Runs the clients one pattern at a time, relaying their progress to {@code out}. */
  static Results run(Settings s, PrintWriter out) throws IOException, InterruptedException {
    long start = System.nanoTime();
    Results results = new Results();
    results.sizes = s.sizes().stream().sorted().toList();
    ServerConnection server = ServerConnection.open(s.uri(), null, new CommandMeter());
    boolean embedded = server.embedded().isPresent();
    String uri = server.uri();
    String db = "arbor_scale_" + Long.toString(System.currentTimeMillis(), 36);
    out.printf(Locale.ROOT, "arbor scale: %s, sizes %s, client -Xmx%s, server %s%n",
        s.patterns().stream().map(Names::of).toList(), results.sizes, s.clientHeap(),
        embedded ? "embedded (this JVM, -Xmx" + Runtime.getRuntime().maxMemory()
            / (1 << 20) + "m)" : uri);
    try {
      for (TreePattern p : s.patterns()) {
        long t0 = System.nanoTime();
        List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx" + s.clientHeap(), "-Xms" + s.clientHeap(), "-XX:+UseSerialGC", "-cp",
            s.classpath()));
        command.addAll(s.launcher());
        command.addAll(List.of("client", uri, db, p.name(),
            String.join(",", results.sizes.stream().map(String::valueOf).toList()),
            String.valueOf(s.repeat()), String.valueOf(s.limitSeconds()),
            String.join(",", s.ops())));
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        ArrayDeque<String> last = new ArrayDeque<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
            child.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.startsWith("@")) {
              take(results, p, line);
            } else {
              out.println(line);
              out.flush();
              last.add(line);
              if (last.size() > 20) {
                last.removeFirst();
              }
            }
          }
        }
        if (!child.waitFor(1, TimeUnit.MINUTES)) {
          child.destroyForcibly();
        }
        results.patternMillis.put(p, (System.nanoTime() - t0) / 1_000_000);
        if (child.exitValue() != 0) {
          results.failures.put(p, "client exited with " + child.exitValue() + ": "
              + String.join(" | ", last));
          out.println("  " + Names.of(p) + " FAILED: " + results.failures.get(p));
        }
      }
    } finally {
      server.close();
    }
    results.totalMillis = (System.nanoTime() - start) / 1_000_000;
    return results;
  }

  /**
   * Reads a machine line of a client: {@code @op}, {@code @skip}, {@code @ratio} or {@code
   * @heap}.
   */
  private static void take(Results r, TreePattern p, String line) {
    String[] f = line.split(" ", 7);
    switch (f[0]) {
      case "@op" -> r.figures.add(new Figure(p, Integer.parseInt(f[1]), f[2],
          Double.parseDouble(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]), null));
      case "@skip" -> r.figures.add(new Figure(p, Integer.parseInt(f[1]), f[2], Double.NaN, 0,
          0, line.substring(line.indexOf(f[2]) + f[2].length()).trim()));
      case "@ratio" -> r.ratios.computeIfAbsent(p, k -> new TreeMap<>())
          .put(Integer.parseInt(f[1]), Double.parseDouble(f[2]));
      case "@heap" -> {
        r.heap.computeIfAbsent(p, k -> new TreeMap<>())
            .put(Integer.parseInt(f[1]), Long.parseLong(f[2]));
        r.live.computeIfAbsent(p, k -> new TreeMap<>())
            .put(Integer.parseInt(f[1]), Long.parseLong(f[3]));
      }
      default -> throw new IllegalStateException("unknown client line: " + line);
    }
  }

  // ------------------------------------------------------------------ the client

  /**
   * The largest heap in use right after a full collection (the live data then, plus nothing
   * else), from the JVM's notifications of its collections: the client forces one after each
   * operation (untimed), and the collector runs others when the old generation fills.
   */
  static final class LiveHeap implements javax.management.NotificationListener {
    private final java.util.Set<String> heapPools = new java.util.HashSet<>();
    private volatile long max;

    LiveHeap() {
      for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
        if (pool.getType() == MemoryType.HEAP) {
          heapPools.add(pool.getName());
        }
      }
      for (java.lang.management.GarbageCollectorMXBean gc
          : ManagementFactory.getGarbageCollectorMXBeans()) {
        if (gc instanceof javax.management.NotificationEmitter e) {
          e.addNotificationListener(this, null, null);
        }
      }
    }

    @Override
    public void handleNotification(javax.management.Notification n, Object handback) {
      if (!n.getType().equals(com.sun.management.GarbageCollectionNotificationInfo
          .GARBAGE_COLLECTION_NOTIFICATION)) {
        return;
      }
      var info = com.sun.management.GarbageCollectionNotificationInfo.from(
          (javax.management.openmbean.CompositeData) n.getUserData());
      if (!info.getGcAction().contains("major")) {
        return;
      }
      long used = 0;
      for (var e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
        if (heapPools.contains(e.getKey())) {
          used += e.getValue().getUsed();
        }
      }
      synchronized (this) {
        max = Math.max(max, used);
      }
    }

    /** Forces a full collection and waits a little for its notification. */
    void sample() {
      System.gc();
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    synchronized long takeMax() {
      long m = max;
      max = 0;
      return m;
    }
  }

  /**
   * The client JVM ({@code arbor scale client uri db PATTERN sizes repeat limitSeconds ops}):
   * measures one pattern at every size and prints its figures as {@code @} lines for {@link
   * #run}. Its commands are counted and timed by the connection's meter.
   */
  static void client(String[] args) {
    String uri = args[0];
    String dbName = args[1];
    TreePattern pattern = TreePattern.valueOf(args[2]);
    int[] sizes = Arrays.stream(args[3].split(",")).mapToInt(Integer::parseInt).toArray();
    int repeat = Integer.parseInt(args[4]);
    double limit = Double.parseDouble(args[5]);
    List<String> ops = List.of(args[6].split(","));
    LiveHeap live = new LiveHeap();
    try (ServerConnection server = ServerConnection.open(uri, null,
        new CommandMeter(CommandMeter.Tally.COMMAND_TIMES))) {
      CommandMeter trips = server.meter();
      MongoDatabase db = server.client().getDatabase(dbName);
      Map<String, List<double[]>> seen = new LinkedHashMap<>(); // op -> (n, millis)
      for (int n : sizes) {
        live.sample();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
          if (pool.getType() == MemoryType.HEAP) {
            pool.resetPeakUsage();
          }
        }
        live.takeMax();
        new Client(db, pattern, n, ops, repeat, limit, trips, seen, live).run();
        long liveMax = live.takeMax();
        long peak = 0;
        List<String> pools = new ArrayList<>();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
          if (pool.getType() == MemoryType.HEAP) {
            peak += pool.getPeakUsage().getUsed();
            pools.add(String.format(Locale.ROOT, "%s %.1f", pool.getName(),
                pool.getPeakUsage().getUsed() / 1048576.0));
          }
        }
        System.out.printf(Locale.ROOT, "  %s %,d: client peak heap %.1f MB (of %d MB; %s),"
            + " largest live heap after a full collection %.1f MB%n", Names.of(pattern), n,
            peak / 1048576.0, Runtime.getRuntime().maxMemory() >> 20, String.join(", ", pools),
            liveMax / 1048576.0);
        System.out.println("@heap " + n + " " + peak + " " + liveMax);
        System.out.flush();
      }
    }
  }

  /** One run of an operation: its time, round trips, count, and where its time went. */
  record Sample(double millis, long trips, long count, String breakdown) {}

  /** One pattern at one size, in the client JVM. */
  private static final class Client {
    final MongoDatabase db;
    final TreePattern pattern;
    final int n;
    final List<String> ops;
    final int repeat;
    final double limit;
    final CommandMeter trips;
    final Map<String, List<double[]>> seen;
    final LiveHeap live;

    Client(MongoDatabase db, TreePattern pattern, int n, List<String> ops, int repeat,
        double limit, CommandMeter trips, Map<String, List<double[]>> seen, LiveHeap live) {
      this.live = live;
      this.db = db;
      this.pattern = pattern;
      this.n = n;
      this.ops = ops;
      this.repeat = repeat;
      this.limit = limit;
      this.trips = trips;
      this.seen = seen;
    }

    void run() {
      String name = Names.of(pattern) + "_" + n;
      MongoCollection<org.bson.Document> first = db.getCollection(name + "_first");
      MongoCollection<RawBsonDocument> copy = db.getCollection(name + "_raw",
          RawBsonDocument.class);
      MongoCollection<org.bson.Document> c = db.getCollection(name);
      first.drop();
      copy.drop();
      c.drop();
      try {
        // The load and its raw baseline, each while the server holds the other n documents:
        // a first load (into an empty server) whose documents are spooled raw to a file, then
        // --repeat pairs, alternating: the spool inserted raw into a fresh collection (timed),
        // the load into a fresh collection (timed), so that both see the same server state.
        TreeStore firstStore = pattern.open(first);
        firstStore.ensureIndexes();
        measure("firstLoad", 1, () -> firstStore.load(generate(n)));
        TreeStore[] last = new TreeStore[1];
        Path spool = spool(db.getCollection(first.getNamespace().getCollectionName(),
            RawBsonDocument.class));
        try {
          List<Sample> raws = new ArrayList<>();
          List<Sample> loads = new ArrayList<>();
          for (int i = 0; i < repeat; i++) {
            copy.drop();
            copyIndexes(first.getNamespace().getCollectionName(),
                copy.getNamespace().getCollectionName());
            long docs = insertFrom(spool, copy);
            raws.add(new Sample(copyMillis, copyTrips, docs, trips.times(copyMillis)));
            if (i == 0) {
              first.drop();
            }
            c.drop();
            TreeStore loaded = pattern.open(c); // a fresh store: nothing remembered of the last
            loaded.ensureIndexes();
            last[0] = loaded;
            long r0 = trips.roundTrips();
            trips.resetTimes();
            long t0 = System.nanoTime();
            long count = loaded.load(generate(n));
            double ms = (System.nanoTime() - t0) / 1e6;
            loads.add(new Sample(ms, trips.roundTrips() - r0, count, trips.times(ms)));
          }
          report("insertMany", raws);
          report("load", loads);
          // each pair ran side by side, on the same server state: their ratios vary less than
          // the times themselves (the embedded server's own collections and compilations)
          double[] ratios = new double[raws.size()];
          for (int i = 0; i < ratios.length; i++) {
            ratios[i] = raws.get(i).millis() / loads.get(i).millis();
          }
          Arrays.sort(ratios);
          System.out.printf(Locale.ROOT, "  %s %,d: load / insertMany %.2f (median of the pairs:"
              + " %s)%n", Names.of(pattern), n, ratios[ratios.length / 2],
              Arrays.stream(ratios).mapToObj(x -> String.format(Locale.ROOT, "%.2f", x))
                  .collect(java.util.stream.Collectors.joining(", ")));
          System.out.printf(Locale.ROOT, "@ratio %d %.4f%n", n, ratios[ratios.length / 2]);
        } finally {
          try {
            Files.deleteIfExists(spool);
          } catch (IOException e) {
            // a temporary file
          }
        }
        copy.drop();
        TreeStore store = last[0];
        measure("entries", 1, () -> {
          try (Stream<Node> entries = store.entries()) {
            return entries.count();
          }
        });
        String parent = id(childrenTarget(n));
        String deepest = id(n - 1);
        String top = id(descendantsTarget(n));
        measure("children", repeat, () -> store.children(parent).size());
        measure("ancestors", repeat, () -> store.ancestors(deepest).size());
        measure("descendants", repeat, () -> store.descendants(top).size());
        // A leaf: inserted under the node of the children read, moved to the end of the
        // roots' first child... of the root, deleted: each repeated with a new id.
        int[] k = new int[3];
        if (!measure("insert", repeat, () -> {
          store.insert("scale-" + k[0]++, Position.lastChildOf(parent),
              Map.of("new", true));
          return 1;
        })) {
          return; // nothing to move or delete
        }
        measure("move", repeat, () -> {
          store.move("scale-" + k[1]++, Position.lastChildOf(id(0)));
          return 1;
        });
        measure("delete", repeat, () -> store.delete("scale-" + k[2]++));
      } finally {
        first.drop();
        copy.drop();
        c.drop();
      }
    }

    /**
     * Runs {@code op} {@code times} times (once if it is the load or a stream); prints and
     * reports the median time, the round trips of one run, and the count it returned. Skipped if
     * its time extrapolated from the smaller sizes passes the limit.
     */
    boolean measure(String op, int times, LongSupplier body) {
      if (!ops.contains(op) && !op.equals("firstLoad")) {
        return false;
      }
      List<double[]> before = seen.computeIfAbsent(op, k -> new ArrayList<>());
      // the load and its baseline always run: everything else needs the tree
      if (!before.isEmpty() && !op.equals("load") && !op.equals("insertMany")
          && !op.equals("firstLoad")) {
        double[] prev = before.get(before.size() - 1);
        double exp = before.size() >= 2 ? Math.max(1, slope(before)) : 2;
        double estimate = prev[1] / 1000 * Math.pow((double) n / prev[0], exp) * times;
        if (estimate > limit) {
          String why = String.format(Locale.ROOT, "estimated %.0f s (%.0f s at %d, exponent"
              + " %.2f) > limit %.0f s", estimate, prev[1] / 1000, (int) prev[0], exp, limit);
          System.out.printf(Locale.ROOT, "  %s %,d: %-11s skipped: %s%n", Names.of(pattern), n,
              op, why);
          System.out.println("@skip " + n + " " + op + " " + why);
          System.out.flush();
          return false;
        }
      }
      List<Sample> samples = new ArrayList<>();
      for (int i = 0; i < times; i++) {
        long r0 = trips.roundTrips();
        trips.resetTimes();
        long t0 = System.nanoTime();
        long count = body.getAsLong();
        double ms = (System.nanoTime() - t0) / 1e6;
        samples.add(new Sample(ms, trips.roundTrips() - r0, count, trips.times(ms)));
      }
      report(op, samples);
      return true;
    }

    /**
     * Prints and records the median time of {@code samples} of {@code op}, with the round trips
     * and count of the last (a first run may also pay for what a store learns once), and for
     * the loads and streams where the time of the median run went.
     */
    void report(String op, List<Sample> samples) {
      live.sample();
      List<Sample> sorted = new ArrayList<>(samples);
      sorted.sort(java.util.Comparator.comparingDouble(Sample::millis));
      Sample m = sorted.get(sorted.size() / 2);
      Sample last = samples.get(samples.size() - 1);
      double median = m.millis();
      seen.computeIfAbsent(op, k -> new ArrayList<>())
          .add(new double[] {n, Math.max(median, 0.001)});
      String rate = op.endsWith("oad") || op.equals("insertMany") || op.equals("entries")
          ? String.format(Locale.ROOT, " (%,.0f nodes/s)", last.count() / (median / 1000)) : "";
      String all = samples.size() < 2 ? "" : samples.stream()
          .map(x -> String.format(Locale.ROOT, "%.0f", x.millis()))
          .collect(java.util.stream.Collectors.joining(", ", " (median of ", " ms)"));
      System.out.printf(Locale.ROOT, "  %s %,d: %-11s %10.1f ms%s%s, %d round trips, %d%s%n",
          Names.of(pattern), n, op, median, all, rate, last.trips(), last.count(),
          op.equals("insertMany") ? " documents" : op.equals("load") ? " entries"
              : op.equals("firstLoad") ? " entries (into an empty server)"
              : op.equals("entries") ? " entries streamed" : "");
      if (op.endsWith("oad") || op.equals("entries") || op.equals("insertMany")) {
        // where the time went: waiting for each kind of command, and the rest
        System.out.printf(Locale.ROOT, "      %s time: %s%n", op, m.breakdown());
      }
      System.out.printf(Locale.ROOT, "@op %d %s %.3f %d %d%n", n, op, median, last.trips(),
          last.count());
      System.out.flush();
    }

    double copyMillis;
    long copyTrips;

    /**
     * Gives collection {@code to} the indexes of {@code from} (their specifications as listed,
     * so that the raw inserts maintain what the load's inserts maintain).
     */
    void copyIndexes(String from, String to) {
      List<org.bson.Document> specs = new ArrayList<>();
      for (org.bson.Document spec : db.getCollection(from).listIndexes()) {
        if (!spec.getString("name").equals("_id_")) {
          spec.remove("v");
          spec.remove("ns");
          specs.add(spec);
        }
      }
      db.createCollection(to);
      if (!specs.isEmpty()) {
        db.runCommand(new org.bson.Document("createIndexes", to).append("indexes", specs));
      }
    }

    /**
     * Reads every document of {@code from} by cursor, as raw BSON, into a temporary file (so
     * that no cursor is open on the server while the inserts are timed, and the client holds
     * one batch).
     */
    Path spool(MongoCollection<RawBsonDocument> from) {
      try {
        Path spool = Files.createTempFile("arbor-scale-", ".bson");
        try (java.io.OutputStream out = new java.io.BufferedOutputStream(
                Files.newOutputStream(spool), 1 << 16);
            MongoCursor<RawBsonDocument> cursor = from.find().batchSize(COPY_BATCH).cursor()) {
          while (cursor.hasNext()) {
            java.nio.ByteBuffer b = cursor.next().getByteBuffer().asNIO();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            out.write(bytes); // a BSON document starts with its length
          }
        }
        return spool;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    /**
     * Inserts the documents of {@code spool} into {@code to} with ordered {@code insertMany} in
     * batches of {@value #COPY_BATCH}; times the inserts only ({@link #copyMillis}, {@link
     * #copyTrips}).
     *
     * @return the documents inserted
     */
    long insertFrom(Path spool, MongoCollection<RawBsonDocument> to) {
      long nanos = 0;
      long rt = 0;
      long docs = 0;
      InsertManyOptions ordered = new InsertManyOptions().ordered(true);
      trips.resetTimes();
      try (java.io.DataInputStream in = new java.io.DataInputStream(
          new java.io.BufferedInputStream(Files.newInputStream(spool), 1 << 16))) {
        List<RawBsonDocument> batch = new ArrayList<>(COPY_BATCH);
        while (true) {
          byte[] bytes = readDocument(in);
          if (bytes != null) {
            batch.add(new RawBsonDocument(bytes));
          }
          if (batch.size() == COPY_BATCH || (bytes == null && !batch.isEmpty())) {
            long r0 = trips.roundTrips();
            long t0 = System.nanoTime();
            to.insertMany(batch, ordered);
            nanos += System.nanoTime() - t0;
            rt += trips.roundTrips() - r0;
            docs += batch.size();
            batch = new ArrayList<>(COPY_BATCH);
          }
          if (bytes == null) {
            break;
          }
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      copyMillis = nanos / 1e6;
      copyTrips = rt;
      return docs;
    }

    /** The next BSON document of {@code in}, or null at its end. */
    private static byte[] readDocument(java.io.DataInputStream in) throws IOException {
      int b0 = in.read();
      if (b0 < 0) {
        return null;
      }
      byte[] head = new byte[4];
      head[0] = (byte) b0;
      in.readFully(head, 1, 3);
      int length = (head[0] & 0xff) | (head[1] & 0xff) << 8 | (head[2] & 0xff) << 16
          | (head[3] & 0xff) << 24;
      byte[] bytes = new byte[length];
      System.arraycopy(head, 0, bytes, 0, 4);
      in.readFully(bytes, 4, length - 4);
      return bytes;
    }
  }

  // ------------------------------------------------------------------ the tree

  /** The id of node {@code i}. */
  static String id(long i) {
    return "n" + i;
  }

  /** The depth of node {@code i} (the root, 0, has depth 0). */
  static int depth(long i) {
    int d = 0;
    while (i > 0) {
      i = (i - 1) / FAN_OUT;
      d++;
    }
    return d;
  }

  /** The first node of depth {@code d}. */
  static long firstAt(int d) {
    long first = 0;
    for (int i = 0; i < d; i++) {
      first = first * FAN_OUT + 1;
    }
    return first;
  }

  /** The deepest node of the leftmost path whose {@value #FAN_OUT} children all exist. */
  static long childrenTarget(int n) {
    int d = 0;
    while (firstAt(d + 2) + FAN_OUT - 1 < n) {
      d++;
    }
    return firstAt(d);
  }

  /** The parent of {@link #childrenTarget} (the root if that is the root). */
  static long descendantsTarget(int n) {
    long c = childrenTarget(n);
    return c == 0 ? 0 : (c - 1) / FAN_OUT;
  }

  /** The number of nodes of the subtree of node {@code i} in a tree of {@code n}. */
  static long subtreeSize(long i, long n) {
    long size = 0;
    long lo = i;
    long hi = i;
    while (lo < n) {
      size += Math.min(hi, n - 1) - lo + 1;
      lo = lo * FAN_OUT + 1;
      hi = hi * FAN_OUT + FAN_OUT;
    }
    return size;
  }

  /**
   * The tree of {@code n} nodes in preorder, made on the fly: the stack holds, per open level, the
   * range of siblings still to come.
   */
  static Iterator<Node> generate(long n) {
    return new Iterator<>() {
      /** Per open level: the next sibling, the end of the siblings, their depth. */
      private final ArrayDeque<long[]> open = new ArrayDeque<>(List.of(new long[] {0, 1, 0}));

      @Override
      public boolean hasNext() {
        return !open.isEmpty() && n > 0;
      }

      @Override
      public Node next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        long[] range = open.peek();
        int depth = (int) range[2];
        long i = range[0]++;
        if (range[0] == range[1]) {
          open.pop();
        }
        long first = i * FAN_OUT + 1;
        if (first < n) {
          open.push(new long[] {first, Math.min(first + FAN_OUT, n), depth + 1});
        }
        Map<String, Object> attributes = new LinkedHashMap<>();
        attributes.put("i", i);
        attributes.put("name", "file-" + i + ".txt");
        attributes.put("size", (i * 7919) % 100_000);
        return new Node(id(i), i == 0 ? null : id((i - 1) / FAN_OUT), depth, attributes);
      }
    };
  }

  // ------------------------------------------------------------------ the report

  private static final List<String> READS_AND_WRITES = List.of("entries", "children",
      "ancestors", "descendants", "insert", "move", "delete");

  /** The run as Markdown: the summary per pattern, the exponents, the figures per size. */
  static String markdown(Settings s, Results r) {
    StringBuilder b = new StringBuilder();
    List<Integer> sizes = r.sizes;
    int big = sizes.get(sizes.size() - 1);
    int mid = sizes.size() >= 2 ? sizes.get(sizes.size() - 2) : big;
    b.append(String.format(Locale.ROOT, "arbor scale: sizes %s, client -Xmx%s, repeat %d;"
        + " total run time %s%n%n", sizes.stream().map(ScaleBench::size).toList(),
        s.clientHeap(), s.repeat(), duration(r.totalMillis)));
    b.append("| pattern | load / insertMany at ").append(sizes.stream().map(ScaleBench::size)
        .reduce((x, y) -> x + " / " + y).orElse("")).append(" | client heap at ")
        .append(size(mid)).append(": peak / live | at ").append(size(big))
        .append(": peak / live | load time at ").append(size(big)).append(" | run time |\n");
    b.append("|---|---|---|---|---|---|\n");
    for (TreePattern p : s.patterns()) {
      List<String> ratios = new ArrayList<>();
      for (int n : sizes) {
        double x = r.loadRatio(p, n);
        ratios.add(Double.isNaN(x) ? "–" : String.format(Locale.ROOT, "%.2f", x));
      }
      Map<Integer, Long> heap = r.heap.getOrDefault(p, Map.of());
      Map<Integer, Long> live = r.live.getOrDefault(p, Map.of());
      Figure load = r.figure(p, big, "load");
      b.append("| ").append(Names.of(p)).append(" | ").append(String.join(" / ", ratios))
          .append(" | ").append(mb(heap.get(mid))).append(" / ").append(mb(live.get(mid)))
          .append(" | ").append(mb(heap.get(big))).append(" / ").append(mb(live.get(big)))
          .append(" | ").append(load == null || load.skipped != null ? "–"
              : duration((long) load.millis)).append(" | ")
          .append(duration(r.patternMillis.getOrDefault(p, 0L)))
          .append(r.failures.containsKey(p) ? " (failed)" : "").append(" |\n");
    }
    for (boolean trips : new boolean[] {false, true}) {
      b.append("\nGrowth exponent of ").append(trips ? "round trips" : "time")
          .append(" per operation from ").append(size(sizes.get(0))).append(" to ")
          .append(size(big)).append(" (slope of log ").append(trips ? "round trips" : "time")
          .append(" against log n; 0 flat, 1 linear; `(to X)`: measured up to X only)\n\n");
      b.append("| pattern | load | insertMany | ").append(String.join(" | ", READS_AND_WRITES))
          .append(" |\n|---|---|---|").append("---|".repeat(READS_AND_WRITES.size()))
          .append('\n');
      for (TreePattern p : s.patterns()) {
        b.append("| ").append(Names.of(p));
        for (String op : OPS) {
          double e = r.exponent(p, op, trips);
          int upTo = r.largestMeasured(p, op);
          b.append(" | ").append(Double.isNaN(e) ? "–" : String.format(Locale.ROOT, "%.2f", e));
          if (!Double.isNaN(e) && upTo < big) {
            b.append(" (to ").append(size(upTo)).append(')');
          }
        }
        b.append(" |\n");
      }
    }
    b.append("\nPer size: median time in ms / round trips\n\n");
    b.append("| pattern | n | ").append(String.join(" | ", OPS))
        .append(" | heap: peak / live |\n|---|---|")
        .append("---|".repeat(OPS.size() + 1)).append('\n');
    for (TreePattern p : s.patterns()) {
      for (int n : sizes) {
        b.append("| ").append(Names.of(p)).append(" | ").append(size(n));
        for (String op : OPS) {
          Figure f = r.figure(p, n, op);
          b.append(" | ").append(f == null ? "–" : f.skipped != null ? "skipped"
              : String.format(Locale.ROOT, "%s / %d", millis(f.millis), f.roundTrips));
        }
        b.append(" | ").append(mb(r.heap.getOrDefault(p, Map.of()).get(n))).append(" / ")
            .append(mb(r.live.getOrDefault(p, Map.of()).get(n))).append(" |\n");
      }
    }
    for (Figure f : r.figures) {
      if (f.skipped != null) {
        b.append("\nSkipped: ").append(Names.of(f.pattern)).append(' ').append(f.op)
            .append(" at ").append(size(f.n)).append(": ").append(f.skipped);
      }
    }
    for (Map.Entry<TreePattern, String> e : r.failures.entrySet()) {
      b.append("\nFailed: ").append(Names.of(e.getKey())).append(": ").append(e.getValue());
    }
    return b.toString().strip() + "\n";
  }

  static String size(int n) {
    if (n >= 1_000_000 && n % 1_000_000 == 0) {
      return n / 1_000_000 + "M";
    }
    if (n >= 1_000 && n % 1_000 == 0) {
      return n / 1_000 + "k";
    }
    return String.valueOf(n);
  }

  private static String mb(Long bytes) {
    return bytes == null ? "–" : String.format(Locale.ROOT, "%.0f MB", bytes / 1048576.0);
  }

  private static String millis(double ms) {
    return ms >= 100 ? String.format(Locale.ROOT, "%.0f", ms)
        : String.format(Locale.ROOT, "%.2g", ms);
  }

  private static String duration(long ms) {
    if (ms < 1_000) {
      return ms + " ms";
    }
    if (ms < 120_000) {
      return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
    return String.format(Locale.ROOT, "%d min %02d s", ms / 60_000, ms / 1000 % 60);
  }
}
