package dev.arbor.bench;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CommandMeter;
import dev.arbor.tools.Counts;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.Document;

/**
 * Runs the benchmark: for each size, shape and pattern, loads the generated tree (or the tree of
 * {@code --tree}, the only one of such a run) and measures every selected operation and workload on
 * it.
 *
 * <p>Each measurement follows one fixed discipline, pinned here and nowhere else:
 *
 * <ol>
 *   <li>{@code max(1, warmup)} untimed invocations (the first also triggers the stores' one-time
 *       server probes, which are thus never charged to an operation; the bulk load, which has no
 *       probe, makes exactly {@code warmup});
 *   <li>one <b>counted</b> invocation with the {@link CommandMeter} armed: round trips, documents
 *       and
 *       bytes; with explain, the commands it sent are then replayed under {@code explain};
 *   <li>up to {@code repeat} <b>timed</b> invocations with the meter disarmed, each read followed
 *       by its hand-written baseline, timed the same way;
 * </ol>
 *
 * and after every invocation that changes the tree, the tree is restored untimed and uncounted
 * (inverse operations, or a reload where the first undo took longer than loading the tree), so
 * every invocation starts from the same state. Warm-up and timed invocations stop early once a
 * measurement has taken {@code --cell-seconds}, after at least one of each. After the last
 * measurement of a tree, the store's snapshot is compared with the tree loaded.
 */
final class Runner {
  /** Nodes of the tree the JVM warm-up runs on (fewer if the run's smallest size is smaller). */
  static final int WARM_UP_SIZE = 200;

  private final Settings settings;
  private final Server server;
  private final CommandMeter meter;
  private final PrintWriter progress;
  private final List<String> warnings = new ArrayList<>();
  private long start;
  private int cell;
  private int cells;
  private boolean warmingUp;

  Runner(Settings settings, Server server, PrintWriter progress) {
    this.settings = settings;
    this.server = server;
    this.meter = server.meter();
    this.progress = progress;
  }

  Results run() {
    Instant started = Instant.now();
    start = System.nanoTime();
    Map<TreePattern, String> skipped = new EnumMap<>(TreePattern.class);
    List<TreePattern> available = new ArrayList<>();
    for (TreePattern p : settings.patterns()) {
      String reason = unavailable(p);
      if (reason == null) {
        available.add(p);
      } else {
        skipped.put(p, reason);
        progress.println("skipping " + Names.of(p) + ": " + reason);
      }
    }
    cells = available.size() * settings.shapes().size() * settings.sizes().size()
        * (settings.ops().size() + settings.workloads().size());
    warmUp(available);
    List<Measurement> measurements = new ArrayList<>();
    for (int size : settings.sizes()) {
      for (TreeSource shape : settings.shapes()) {
        Tree tree = shape.tree(size, settings.seed());
        Scripts scripts = new Scripts(tree, settings.seed());
        for (TreePattern pattern : available) {
          measurements.addAll(measureTree(pattern, shape, size, tree, scripts));
        }
      }
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    return new Results(settings, started, elapsed, server.description(), server.version(),
        server.embedded(), server.explainSupported(), available, skipped, measurements,
        List.copyOf(warnings));
  }

  /**
   * Runs every selected measurement once on a small tree, untimed and unrecorded, so that the
   * first sizes measured are not charged with class loading and JIT compilation (JMH's warm-up
   * iterations, done once for the whole run).
   */
  private void warmUp(List<TreePattern> available) {
    int size = Math.min(WARM_UP_SIZE, settings.sizes().get(0));
    progress.printf(Locale.ROOT, "warming up the JVM on a %d-node tree, untimed...%n", size);
    progress.flush();
    warmingUp = true;
    try {
      Tree tree = Shape.RANDOM.generate(size, settings.seed());
      Scripts scripts = new Scripts(tree, settings.seed());
      for (TreePattern pattern : available) {
        measureTree(pattern, Shape.RANDOM, size, tree, scripts);
      }
    } finally {
      warmingUp = false;
    }
  }

  /** Why a pattern cannot be measured, or null if it can. */
  private String unavailable(TreePattern pattern) {
    try {
      pattern.open(server.collection("arbor_probe_" + Names.of(pattern)));
      return null;
    } catch (UnsupportedOperationException e) {
      return "not available in this build of tree-mongo (" + e.getMessage() + ")";
    }
  }

  /**
   * The scripts of one tree, built on first use and shared by all patterns (a workload's
   * script is computed on an in-memory copy of the tree, worth doing once at a million nodes).
   */
  private static final class Scripts {
    private final TreeFacts facts;
    private final Subjects subjects;
    private final long seed;
    private final Map<Object, Script> built = new java.util.HashMap<>();

    Scripts(Tree tree, long seed) {
      this.facts = new TreeFacts(tree);
      this.subjects = Subjects.choose(facts, seed);
      this.seed = seed;
    }

    Script of(Operation op) {
      return built.computeIfAbsent(op, k -> Script.of(op, facts, subjects));
    }

    Script of(Workload w) {
      return built.computeIfAbsent(w, k -> Script.of(w, facts, seed));
    }
  }

  private List<Measurement> measureTree(TreePattern pattern, TreeSource shape, int size, Tree tree,
      Scripts scripts) {
    String where = Names.of(pattern) + " " + shape.label() + " " + size;
    // A file's name may hold what a collection name cannot ($, NUL, any length): "file".
    MongoCollection<Document> collection = server.collection(
        "tree_" + Names.of(pattern).replace('-', '_') + "_"
            + (shape instanceof Shape s ? Names.of(s) : "file") + "_" + size);
    collection.drop();
    TreeOptions options = TreeOptions.defaults().withIsolatedReads(settings.isolatedReads());
    if (settings.transactions()) {
      options = options.withTransactions(server.client());
    }
    TreeStore store = pattern.open(collection, options);
    Cell cellContext = new Cell(pattern, shape, size, tree, store, collection);
    // The same collection read with the other isolation, timed beside every read: both ratios
    // to the hand-written query come from one run.
    cellContext.other = pattern.open(collection,
        options.withIsolatedReads(!settings.isolatedReads()));
    List<Measurement> out = new ArrayList<>();
    if (settings.ops().contains(Operation.LOAD)) {
      out.add(measureLoad(cellContext));
    }
    try {
      if (cellContext.reloadNanos == 0) { // not loaded by a successful load measurement
        long t0 = System.nanoTime();
        reload(cellContext);
        cellContext.reloadNanos = System.nanoTime() - t0;
      }
      if (cellContext.storage == null) {
        cellContext.storage = server.storage(collection);
      }
      cellContext.baseline = new HandWritten(pattern, collection,
          HandWritten.graphLookupWorks(collection));
    } catch (RuntimeException e) {
      // Without a loaded tree nothing can be measured: one failed row per measurement.
      for (Operation op : settings.ops()) {
        if (op != Operation.LOAD) {
          out.add(failed(cellContext, Measurement.OPERATION, Names.of(op), e));
        }
      }
      for (Workload w : settings.workloads()) {
        out.add(failed(cellContext, Measurement.WORKLOAD, w.name(), e));
      }
      collection.drop();
      return out;
    }
    for (Operation op : settings.ops()) {
      if (op != Operation.LOAD) {
        out.add(measure(cellContext, Measurement.OPERATION, Names.of(op), () -> scripts.of(op)));
      }
    }
    for (Workload w : settings.workloads()) {
      out.add(measure(cellContext, Measurement.WORKLOAD, w.name(), () -> scripts.of(w)));
    }
    try {
      if (!store.snapshot().equals(tree)) {
        warn(where + ": after the measurements the stored tree differs from the one loaded"
            + " (an undo went wrong or the store lost an update)");
      }
    } catch (RuntimeException e) {
      warn(where + ": snapshot after the measurements failed: " + e);
    }
    collection.drop();
    return out;
  }

  /** The per-tree context of the measurements. */
  private static final class Cell {
    final TreePattern pattern;
    final TreeSource shape;
    final int size;
    final Tree tree;
    final TreeStore store;
    /** A store of the same collection with the other read isolation: reads only. */
    TreeStore other;
    final MongoCollection<Document> collection;
    Server.Storage storage;
    HandWritten baseline;
    /** How long reloading the tree takes: an undo slower than this is replaced by a reload. */
    long reloadNanos;

    Cell(TreePattern pattern, TreeSource shape, int size, Tree tree, TreeStore store,
        MongoCollection<Document> collection) {
      this.pattern = pattern;
      this.shape = shape;
      this.size = size;
      this.tree = tree;
      this.store = store;
      this.collection = collection;
    }
  }

  private void reload(Cell c) {
    c.collection.drop();
    c.store.load(c.tree);
    c.store.ensureIndexes();
  }

  private Measurement measureLoad(Cell c) {
    String name = Names.of(Operation.LOAD);
    long cellStart = begin(c, name);
    try {
      for (int i = 0; i < settings.warmup(); i++) {
        reload(c);
      }
      c.collection.drop();
      meter.arm(false);
      c.store.load(c.tree);
      c.store.ensureIndexes();
      Counts counts = meter.disarm();
      // The baseline: the same node documents, as the store wrote them, by insertMany (the
      // driver splits it into 48 MB messages), then the same indexes; timed in the same rounds.
      List<Document> written = c.collection.find(Filters.type("_id", BsonType.STRING))
          .into(new ArrayList<>());
      List<Long> samples = new ArrayList<>();
      List<Long> raw = new ArrayList<>();
      while (samples.size() < settings.repeat()) {
        c.collection.drop();
        long t0 = System.nanoTime();
        c.collection.insertMany(written, new InsertManyOptions().ordered(false));
        c.store.ensureIndexes();
        raw.add(System.nanoTime() - t0);
        c.collection.drop();
        t0 = System.nanoTime();
        c.store.load(c.tree);
        c.store.ensureIndexes();
        samples.add(System.nanoTime() - t0);
        if (overBudget(cellStart)) {
          break;
        }
      }
      c.reloadNanos = Math.round(Stats.median(samples));
      c.storage = server.storage(c.collection);
      Measurement m = row(c, Measurement.OPERATION, name, "whole tree", c.size, c.size, 1, 0,
          samples, counts, null, LOAD_BASELINE, null, raw, List.of(), "");
      end(m);
      return m;
    } catch (RuntimeException e) {
      return failed(c, Measurement.OPERATION, name, e);
    }
  }

  /** The baseline of a load, as the report names it. */
  static final String LOAD_BASELINE = "insertMany of the same documents, then the same indexes";

  private interface ScriptSource {
    Script get();
  }

  private Measurement measure(Cell c, String kind, String name, ScriptSource source) {
    long cellStart = begin(c, name);
    try {
      Script script = source.get();
      Script.Read read = script.read();
      boolean reload = script.needsReload();
      for (int i = 0; i < Math.max(1, settings.warmup()); i++) {
        script.run(c.store);
        long t0 = System.nanoTime();
        restore(c, script, reload);
        if (script.mutates() && System.nanoTime() - t0 > c.reloadNanos) {
          reload = true; // undoing costs more than reloading: reload from now on
        }
        if (read != null) {
          c.baseline.run(read);
          script.run(c.other);
        }
        if (overBudget(cellStart)) {
          break;
        }
      }
      meter.arm(server.explainSupported());
      long result = script.run(c.store);
      Counts counts = meter.disarm();
      List<BsonDocument> commands = meter.commands();
      restore(c, script, reload);
      Explainer.Explained explained = server.explainSupported()
          ? Explainer.explain(server.database(), commands) : null;

      Counts baselineCounts = null;
      String note = "";
      if (read != null) {
        meter.arm(false);
        int found = c.baseline.run(read).size();
        baselineCounts = meter.disarm();
        if (found != result) {
          note = "baseline found " + found + " ids, the store " + result;
        }
      }
      List<Long> samples = new ArrayList<>();
      List<Long> baselineSamples = new ArrayList<>();
      List<Long> otherSamples = new ArrayList<>();
      int repeat = warmingUp ? Math.min(2, settings.repeat()) : settings.repeat();
      while (samples.size() < repeat) {
        // A read is timed beside its hand-written query and the other isolation's store, in an
        // order that alternates so that neither profits from coming second.
        boolean storeFirst = samples.size() % 2 == 0;
        if (read != null && !storeFirst) {
          timeBaselineAndOther(c, script, read, baselineSamples, otherSamples);
        }
        long t0 = System.nanoTime();
        script.run(c.store);
        samples.add(System.nanoTime() - t0);
        restore(c, script, reload);
        if (read != null && storeFirst) {
          timeBaselineAndOther(c, script, read, baselineSamples, otherSamples);
        }
        if (overBudget(cellStart)) {
          break;
        }
      }
      Measurement m = row(c, kind, name, script.subject(), script.subjectSize(), result,
          script.length(), script.reads(), samples, counts, explained,
          read == null ? null : c.baseline.describe(read), baselineCounts, baselineSamples,
          otherSamples, note);
      end(m);
      return m;
    } catch (RuntimeException e) {
      try {
        reload(c);
      } catch (RuntimeException again) {
        warn(where(c) + ": reload after a failure failed too: " + again);
      }
      return failed(c, kind, name, e);
    }
  }

  private static void timeBaselineAndOther(Cell c, Script script, Script.Read read,
      List<Long> baselineSamples, List<Long> otherSamples) {
    long t0 = System.nanoTime();
    c.baseline.run(read);
    baselineSamples.add(System.nanoTime() - t0);
    t0 = System.nanoTime();
    script.run(c.other);
    otherSamples.add(System.nanoTime() - t0);
  }

  /** Each round's {@code samples} per operation over the baseline's of the same round. */
  private static List<Double> ratios(List<Long> samples, List<Long> baselineSamples,
      double perOp) {
    List<Double> out = new ArrayList<>();
    for (int i = 0; i < Math.min(samples.size(), baselineSamples.size()); i++) {
      if (baselineSamples.get(i) > 0) {
        out.add(samples.get(i) / perOp / baselineSamples.get(i));
      }
    }
    return out;
  }

  private void restore(Cell c, Script script, boolean reload) {
    if (!script.mutates()) {
      return;
    }
    if (reload) {
      reload(c);
    } else {
      script.undo(c.store);
    }
  }

  private boolean overBudget(long cellStart) {
    return System.nanoTime() - cellStart > settings.cellSeconds() * 1e9;
  }

  private Measurement row(Cell c, String kind, String name, String subject, long subjectSize,
      long result, int steps, int reads, List<Long> samples, Counts counts,
      Explainer.Explained explained, String baselineQuery, Counts baselineCounts,
      List<Long> baselineSamples, List<Long> otherSamples, String note) {
    double perOp = steps;
    double min = Stats.min(samples) / 1e3 / perOp;
    double median = Stats.median(samples) / 1e3 / perOp;
    double p95 = Stats.p95(samples) / 1e3 / perOp;
    Double baselineMedian = baselineSamples.isEmpty() ? null
        : Stats.median(baselineSamples) / 1e3;
    List<Double> overheadRatios = ratios(samples, baselineSamples, perOp);
    Double overhead = overheadRatios.isEmpty() ? null : Measurement.median(overheadRatios);
    return new Measurement(
        new Measurement.Key(c.pattern, c.shape, c.size, kind, name),
        new Measurement.Work(subject, subjectSize, result, steps, reads),
        new Measurement.Latency(samples.size(), min, median, p95,
            samples.stream().map(t -> t / 1e3 / perOp).toList()),
        new Measurement.Traffic(counts.roundTrips() / perOp, counts.docsReturned() / perOp,
            counts.docsWritten() / perOp, counts.bytesSent() / perOp,
            counts.bytesReceived() / perOp, counts.lockRoundTrips() / perOp,
            counts.lockDocsWritten() / perOp),
        explained == null ? Measurement.Explain.NONE : new Measurement.Explain(
            explained.docsExamined() / perOp, explained.keysExamined() / perOp),
        new Measurement.Baseline(baselineQuery, baselineMedian,
            baselineCounts == null ? null : (double) baselineCounts.roundTrips(), overhead,
            overheadRatios, ratios(otherSamples, baselineSamples, perOp)),
        Measurement.Stored.of(c.storage), note);
  }

  private Measurement failed(Cell c, String kind, String name, RuntimeException e) {
    String message = (warmingUp ? "warm-up: " : "") + where(c) + " " + name + " failed: " + e;
    progress.println((warmingUp ? "FAILED (warm-up) " + where(c) + " " + name + ": " : "FAILED: ")
        + e);
    warnings.add(message);
    double nan = Double.NaN;
    return new Measurement(new Measurement.Key(c.pattern, c.shape, c.size, kind, name),
        new Measurement.Work("", 0, 0, 0, 0), new Measurement.Latency(0, nan, nan, nan, List.of()),
        new Measurement.Traffic(nan, nan, nan, nan, nan, nan, nan), Measurement.Explain.NONE,
        Measurement.Baseline.NONE, Measurement.Stored.of(c.storage), "failed: " + e);
  }

  private static String where(Cell c) {
    return Names.of(c.pattern) + " " + c.shape.label() + " " + c.size;
  }

  private void warn(String message) {
    if (warmingUp) {
      message = "warm-up: " + message;
    }
    warnings.add(message);
    progress.println("WARNING: " + message);
  }

  /** Prints the progress line's start and returns the cell's start time. */
  private long begin(Cell c, String name) {
    if (warmingUp) {
      return System.nanoTime();
    }
    cell++;
    progress.printf(Locale.ROOT, "[%6.1fs %4d/%d] %-18s %-8s %9s  %-19s ",
        (System.nanoTime() - start) / 1e9, cell, cells, Names.of(c.pattern), c.shape.label(),
        Format.count(c.size), name);
    progress.flush();
    return System.nanoTime();
  }

  /** Ends the progress line with the headline figures. */
  private void end(Measurement m) {
    if (warmingUp) {
      return;
    }
    progress.println(Format.micros(m.latency().medianMicros()) + "  "
        + Format.number(m.traffic().roundTrips())
        + " rt  " + Format.number(m.traffic().docsWritten()) + " written");
  }
}
