package dev.arbor.bench;

import static dev.arbor.bench.ScaleBench.COPY_BATCH;
import static dev.arbor.bench.ScaleBench.slope;
import static dev.arbor.bench.ScaleTree.childrenTarget;
import static dev.arbor.bench.ScaleTree.descendantsTarget;
import static dev.arbor.bench.ScaleTree.generate;
import static dev.arbor.bench.ScaleTree.id;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.InsertManyOptions;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CommandMeter;
import dev.arbor.tools.ServerConnection;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.bson.RawBsonDocument;

/**
 * The client JVM of a scale run ({@link ScaleBench}): one pattern at one size, measured against
 * the server: the first load, the pairs of raw {@code insertMany} and load, the reads and the
 * leaf's insert, move and delete; its figures printed as {@code @} lines for {@link
 * ScaleLauncher}.
 */
final class ScaleClient {
  /**
   * The client JVM ({@code arbor scale client uri db PATTERN sizes repeat limitSeconds ops
   * serverPid}): measures one pattern at every size and prints its figures as {@code @} lines
   * for {@link ScaleLauncher#run}. Its commands are counted and timed by the connection's meter;
   * its CPU time and the server's ({@code serverPid}, {@code -} when not on this machine) by
   * {@link CpuClocks}.
   */
  static void client(String[] args) {
    String uri = args[0];
    String dbName = args[1];
    TreePattern pattern = TreePattern.valueOf(args[2]);
    int[] sizes = Arrays.stream(args[3].split(",")).mapToInt(Integer::parseInt).toArray();
    int repeat = Integer.parseInt(args[4]);
    double limit = Double.parseDouble(args[5]);
    List<String> ops = List.of(args[6].split(","));
    CpuClocks cpu = new CpuClocks(args.length > 7 && !args[7].equals("-")
        ? Long.parseLong(args[7]) : -1);
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
        new ScaleClient(db, pattern, n, ops, repeat, limit, trips, seen, live, cpu).run();
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

  /**
   * One run of an operation: its time, round trips, count, where its time went, and the CPU
   * milliseconds the client and the server spent meanwhile (negative: unknown).
   */
  record Sample(double millis, long trips, long count, String breakdown, double clientCpu,
      double serverCpu) {}

  final MongoDatabase db;
  final TreePattern pattern;
  final int n;
  final List<String> ops;
  final int repeat;
  final double limit;
  final CommandMeter trips;
  final Map<String, List<double[]>> seen;
  final LiveHeap live;
  final CpuClocks cpu;

  private ScaleClient(MongoDatabase db, TreePattern pattern, int n, List<String> ops, int repeat,
      double limit, CommandMeter trips, Map<String, List<double[]>> seen, LiveHeap live,
      CpuClocks cpu) {
    this.live = live;
    this.cpu = cpu;
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
          raws.add(new Sample(copyMillis, copyTrips, docs, trips.times(copyMillis),
              copyClientCpu, copyServerCpu));
          if (i == 0) {
            first.drop();
          }
          c.drop();
          TreeStore loaded = pattern.open(c); // a fresh store: nothing remembered of the last
          loaded.ensureIndexes();
          last[0] = loaded;
          long r0 = trips.roundTrips();
          trips.resetTimes();
          long c0 = cpu.client();
          long s0 = cpu.server();
          long t0 = System.nanoTime();
          long count = loaded.load(generate(n));
          double ms = (System.nanoTime() - t0) / 1e6;
          loads.add(new Sample(ms, trips.roundTrips() - r0, count, trips.times(ms),
              cpuMillis(c0, cpu.client()), cpuMillis(s0, cpu.server())));
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
        // the same pairs by CPU time, which a machine shared with other work disturbs less
        List<String> server = new ArrayList<>();
        List<String> total = new ArrayList<>();
        for (int i = 0; i < raws.size(); i++) {
          Sample raw = raws.get(i);
          Sample load = loads.get(i);
          if (raw.serverCpu() > 0 && load.serverCpu() > 0) {
            server.add(String.format(Locale.ROOT, "%.2f", raw.serverCpu() / load.serverCpu()));
            total.add(String.format(Locale.ROOT, "%.2f", (raw.serverCpu() + raw.clientCpu())
                / (load.serverCpu() + load.clientCpu())));
          }
        }
        if (!server.isEmpty()) {
          System.out.printf(Locale.ROOT, "  %s %,d: CPU time insertMany / load per pair: the"
              + " server's %s, the client's and server's together %s%n", Names.of(pattern), n,
              String.join(", ", server), String.join(", ", total));
        }
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
      long c0 = cpu.client();
      long s0 = cpu.server();
      long t0 = System.nanoTime();
      long count = body.getAsLong();
      double ms = (System.nanoTime() - t0) / 1e6;
      samples.add(new Sample(ms, trips.roundTrips() - r0, count, trips.times(ms),
          cpuMillis(c0, cpu.client()), cpuMillis(s0, cpu.server())));
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
      System.out.printf(Locale.ROOT, "      %s cpu: client %s, server %s%n", op,
          cpuText(m.clientCpu()), cpuText(m.serverCpu()));
      System.out.printf(Locale.ROOT, "@cpu %d %s %.1f %.1f%n", n, op, m.clientCpu(),
          m.serverCpu());
    }
    System.out.printf(Locale.ROOT, "@op %d %s %.3f %d %d%n", n, op, median, last.trips(),
        last.count());
    System.out.flush();
  }

  double copyMillis;
  long copyTrips;
  double copyClientCpu;
  double copyServerCpu;

  /** Milliseconds between two CPU clock readings, -1 if either is unknown. */
  private static double cpuMillis(long from, long to) {
    return from < 0 || to < 0 ? -1 : (to - from) / 1e6;
  }

  private static String cpuText(double ms) {
    return ms < 0 ? "unknown" : String.format(Locale.ROOT, "%.0f ms", ms);
  }

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
   * batches of {@value ScaleBench#COPY_BATCH}; times the inserts only ({@link #copyMillis}, {@link
   * #copyTrips}).
   *
   * @return the documents inserted
   */
  long insertFrom(Path spool, MongoCollection<RawBsonDocument> to) {
    long nanos = 0;
    long rt = 0;
    long docs = 0;
    double clientCpu = 0;
    double serverCpu = 0;
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
          long c0 = cpu.client();
          long s0 = cpu.server();
          long t0 = System.nanoTime();
          to.insertMany(batch, ordered);
          nanos += System.nanoTime() - t0;
          clientCpu += cpuMillis(c0, cpu.client());
          serverCpu += cpuMillis(s0, cpu.server());
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
    copyClientCpu = clientCpu < 0 ? -1 : clientCpu;
    copyServerCpu = serverCpu < 0 ? -1 : serverCpu;
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
