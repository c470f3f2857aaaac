package dev.arbor.bench;

import static dev.arbor.bench.ReportRankings.ranking;
import static dev.arbor.bench.ReportRankings.realised;
import static dev.arbor.bench.ReportRankings.reasons;
import static dev.arbor.bench.ReportRankings.recommendationTitle;

import dev.arbor.mongo.TreePattern;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The human-readable report of a run, as a list of blocks that {@link Html} and {@link #markdown}
 * render; the console summary takes its tables from here too.
 */
final class Report {
  /** A part of the report. */
  sealed interface Block permits Heading, Text, Bullets, TableBlock, Chart, Code {}

  /** A heading; level 1 is the title. */
  record Heading(int level, String text) implements Block {}

  /** A paragraph; a note is highlighted. */
  record Text(String text, boolean note) implements Block {
    Text(String text) {
      this(text, false);
    }
  }

  /** A bulleted list. */
  record Bullets(List<String> items) implements Block {}

  /** A table. */
  record TableBlock(Table table) implements Block {}

  /**
   * An SVG chart, shown in HTML; Markdown shows its table instead, if it has one.
   *
   * @param table the figures of the chart (of a row of charts) as a table, or null
   */
  record Chart(String svg, Table table) implements Block {}

  /** Preformatted text. */
  record Code(String text) implements Block {}

  static final String EMBEDDED_NOTE = "The embedded server (mongo-java-server) has no explain,"
      + " and its secondary indexes serve only equalities and $in on strings, ObjectIds and"
      + " numbers, and string ranges on an index's first key: every other query scans the whole"
      + " collection, so on it most latencies grow with the tree and mostly count queries. Read"
      + " the round trips and documents first: they are what each pattern costs on any server."
      + " Run with --uri against a real MongoDB for latencies that mean something.";

  private final Analysis analysis;
  private final Results results;
  private final List<Analysis.Growth> growth;
  private final List<Analysis.Recommendation> recommendations;
  private final ReportTables tables;
  private final ReportRankings rankings;

  Report(Analysis analysis) {
    this.analysis = analysis;
    this.results = analysis.results();
    this.growth = analysis.growth();
    this.recommendations = analysis.recommendations();
    this.tables = new ReportTables(analysis);
    this.rankings = new ReportRankings(analysis, recommendations, tables);
  }

  /** The tables by pattern, for the console summary too. */
  ReportTables tables() {
    return tables;
  }

  /** The rankings, for the console summary too. */
  ReportRankings rankings() {
    return rankings;
  }

  List<Analysis.Growth> growth() {
    return growth;
  }

  List<Analysis.Recommendation> recommendations() {
    return recommendations;
  }

  // ------------------------------------------------------------------------------ the parts

  /** One line saying what was run where. */
  String runLine() {
    Settings s = results.settings();
    List<String> sizes = new ArrayList<>();
    for (int size : s.sizes()) {
      sizes.add(Format.count(size));
    }
    TreeFile file = s.treeFile();
    String trees = file != null
        ? "tree " + file.label() + " (" + Format.count(file.size()) + " nodes)"
        : s.shapes().size() + " shapes x sizes " + String.join(", ", sizes);
    return results.measured().size() + " patterns x " + trees + "; seed " + s.seed() + ", "
        + s.warmup() + " warm-up + up to " + s.repeat() + " timed runs per measurement; "
            + results.server() + "; "
        + Format.duration(results.elapsedSeconds()) + ", started "
        + DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(
            results.started().atOffset(ZoneOffset.UTC).withNano(0)) + "Z";
  }

  /**
   * With {@code --tree}, one line naming the file and giving its shape: nodes, roots, leaves,
   * depth and fan-out; null for generated trees.
   */
  String treeLine() {
    TreeFile file = results.settings().treeFile();
    return file == null ? null : "Tree: " + file.path() + ", " + file.profile().describe()
        + ". Every pattern loads this tree and performs the same operations on the same nodes,"
        + " chosen from it with seed " + results.settings().seed() + ".";
  }

  // ------------------------------------------------------------------------------ the report

  List<Block> blocks() {
    List<Block> b = new ArrayList<>();
    int size = results.largestSize();
    String at = " (" + Format.count(size) + " nodes)";
    b.add(new Heading(1, "Arbor benchmark: which tree pattern for which workload"));
    b.add(new Text(runLine()));
    if (treeLine() != null) {
      b.add(new Text(treeLine()));
    }
    rankings.decision(b);
    if (results.embedded()) {
      b.add(new Text(EMBEDDED_NOTE, true));
    } else if (!results.explain()) {
      b.add(new Text("This server does not answer explain: documents examined are not"
          + " reported.", true));
    }
    if (!results.skipped().isEmpty()) {
      List<String> items = new ArrayList<>();
      for (Map.Entry<TreePattern, String> e : results.skipped().entrySet()) {
        items.add(Names.of(e.getKey()) + " skipped: " + e.getValue());
      }
      b.add(new Bullets(items));
    }

    if (!recommendations.isEmpty()) {
      b.add(new Heading(2, "Rankings per workload"));
      b.add(new Text("Each reason cites the count that separates the pattern from the first"
          + " (for the first: from the runner-up)."));
      for (Analysis.Recommendation r : recommendations) {
        b.add(new Heading(3, recommendationTitle(r)));
        b.add(new Text(realised(r) + "; " + r.workload().steps() + " operations per sequence."));
        b.add(new TableBlock(ranking(r)));
        b.add(new Bullets(reasons(r)));
      }
    }

    b.add(new Heading(2, "Round trips per operation" + at));
    b.add(new Text("Commands sent per operation, counted by a CommandListener; a range spans the"
        + " shapes (it grows with depth where a pattern walks the tree level by level)."));
    b.add(new TableBlock(tables.roundTrips(size)));
    b.add(new Heading(3, "Of which the lock and journal protocol"));
    b.add(new Text("Each store makes structural changes all-or-nothing with a lock document and a"
        + " journal in its collection, and" + (results.settings().isolatedReads()
            ? " checks the lock document after each read (isolated reads; in the read's own"
                + " query where that is by _id)."
            : " here reads without checking the lock (--isolated-reads false).")
        + " These are the round trips of that protocol, included above; the difference is the"
        + " pattern's own queries."));
    b.add(new Text("In brackets, the protocol's share of all round trips of the operation (means"
        + " over the shapes)."));
    b.add(new TableBlock(tables.byPattern(size, results.names(), (p, name, sz) -> {
      double[] r = analysis.range(p, name, sz, row -> row.traffic().lockRoundTrips());
      double all = analysis.mean(p, name, sz, row -> row.traffic().roundTrips());
      double lock = analysis.mean(p, name, sz, row -> row.traffic().lockRoundTrips());
      return Double.isNaN(r[0]) ? "-" : Format.range(r[0], r[1])
          + (all > 0 ? String.format(java.util.Locale.ROOT, " (%.0f%%)", 100 * lock / all) : "");
    })));
    b.add(new Heading(2, "Documents written per operation" + at));
    b.add(new Text("As the replies report them (inserted, modified, removed), lock and journal"
        + " documents included: see below."));
    b.add(new TableBlock(tables.written(size)));
    b.add(new Heading(3, "Of which lock and journal documents"));
    b.add(new TableBlock(tables.byPattern(size, results.names(),
        tables.rangeOf(row -> row.traffic().lockDocsWritten()))));
    b.add(new Heading(2, "Documents returned per operation" + at));
    b.add(new TableBlock(tables.returned(size)));
    b.add(new Heading(2, "Median latency per operation, ms" + at));
    b.add(new Text("Geometric mean over the shapes of each measurement's median."
        + (results.embedded() ? " On the embedded server, see the note above." : "")));
    b.add(new TableBlock(tables.latency(size)));

    overhead(b, size, at);
    loadBaseline(b, size, at);
    if (results.explain()) {
      b.add(new Heading(2, "Documents examined per document returned (explain)" + at));
      b.add(new TableBlock(tables.byPattern(size, results.names(), (p, name, sz) -> {
        double[] r = analysis.range(p, name, sz, m -> {
          Double v = m.examinedPerReturned();
          return v == null ? Double.NaN : v;
        });
        return Format.range(r[0], r[1]);
      })));
      b.add(new Heading(2, "Index keys examined per operation (explain)" + at));
      b.add(new TableBlock(tables.byPattern(size, results.names(),
          tables.rangeOf(m -> m.explain().keysExamined() == null
          ? Double.NaN : m.explain().keysExamined()))));
    }
    growth(b);
    storage(b);
    charts(b, size);
    details(b);
    if (!results.warnings().isEmpty()) {
      b.add(new Heading(2, "Warnings"));
      b.add(new Bullets(results.warnings()));
    }
    method(b);
    return b;
  }

  private void overhead(List<Block> b, int size, String at) {
    List<String> reads = new ArrayList<>();
    for (Operation op : results.settings().ops()) {
      if (op.baseline()) {
        reads.add(Names.of(op));
      }
    }
    if (reads.isEmpty()) {
      return;
    }
    boolean isolated = results.settings().isolatedReads();
    b.add(new Heading(2, "Library overhead" + at));
    b.add(new Text("Each read's time over the hand-written query from the manual that returns the"
        + " same ids, both timed back to back in every round (in alternating order), with and"
        + " without isolated reads in the same rounds: the median of the per-round ratios,"
        + " geometric mean over the shapes, and its 95% bootstrap interval. Above 1 the store"
        + " spends more (the check of the lock document that isolates a read, ordering results,"
        + " checking the node exists, decoding fields); below 1 it found a cheaper plan than the"
        + " manual's query."));
    b.add(new Heading(3, "Isolated reads (the default)"));
    b.add(new TableBlock(tables.byPattern(size, reads,
        tables.ratioCell(isolated ? row -> row.baseline().overheadRatios()
            : row -> row.baseline().otherOverheadRatios()))));
    b.add(new Heading(3, "Without isolation (TreeOptions.withIsolatedReads(false))"));
    b.add(new TableBlock(tables.byPattern(size, reads,
        tables.ratioCell(isolated ? row -> row.baseline().otherOverheadRatios()
            : row -> row.baseline().overheadRatios()))));
    b.add(new Text("Round trips of the store" + (isolated ? " (isolated)" : "")
        + " / of the hand-written query:"));
    b.add(new TableBlock(tables.byPattern(size, reads, (p, name, sz) -> {
      double[] store = analysis.range(p, name, sz, row -> row.traffic().roundTrips());
      double[] hand = analysis.range(p, name, sz,
          m -> m.baseline().roundTrips() == null ? Double.NaN : m.baseline().roundTrips());
      return Double.isNaN(hand[0]) ? "-"
          : Format.range(store[0], store[1]) + " / " + Format.range(hand[0], hand[1]);
    })));
    b.add(new Text("The hand-written queries:"));
    b.add(new TableBlock(tables.byPattern(size, reads, (p, name, sz) -> {
      for (Measurement m : analysis.acrossShapes(p, name, sz)) {
        if (m.baseline().query() != null) {
          return m.baseline().query();
        }
      }
      return "-";
    })));
  }

  private void loadBaseline(List<Block> b, int size, String at) {
    if (!results.settings().ops().contains(Operation.LOAD)) {
      return;
    }
    b.add(new Heading(2, "Load throughput against insertMany" + at));
    b.add(new Text("The store's load (lock, journal, fenced batches, then indexes) against "
        + Runner.LOAD_BASELINE + ", timed in the same rounds: the store's throughput as a share"
        + " of insertMany's (1 is as fast; the median of the per-round ratios, geometric mean over"
        + " the shapes, 95% bootstrap interval)."));
    b.add(new TableBlock(tables.byPattern(size, List.of(Names.of(Operation.LOAD)),
        tables.ratioCell(m -> m.baseline().overheadRatios().stream().map(r -> 1 / r).toList()))));
  }

  private void growth(List<Block> b) {
    List<Integer> sizes = results.settings().sizes();
    b.add(new Heading(2, "Growth with tree size"));
    if (results.settings().treeFile() != null) {
      b.add(new Text("One tree was measured (--tree), at its own size: nothing to fit. Generated"
          + " shapes at two or more --sizes show how each cost grows."));
      return;
    }
    if (sizes.size() < 2) {
      b.add(new Text("Only one size was measured; pass two or more to --sizes to fit how each"
          + " cost grows."));
      return;
    }
    b.add(new Text("The exponent b of cost ~ N^b fitted across sizes "
        + sizes.stream().map(Format::count).toList() + " (median over shapes): 0 does not grow,"
        + " 1 grows linearly with the tree. The latency exponent is fitted on each"
        + " measurement's fastest sample, the one least disturbed by other load on the machine;"
        + " with few sizes close together and sub-millisecond latencies it is noisy, the count"
        + " exponents are not."
        + (results.embedded() ? " Latency on the embedded server grows by about 1 for any query"
            + " that is not by _id (it scans); the round-trip and document exponents hold"
            + " everywhere." : "")));
    b.add(new Heading(3, "Latency exponent"));
    b.add(new TableBlock(tables.byPattern(0, results.names(), (p, name, sz) -> Format.exponent(
        Analysis.medianExponent(growth, p, name, Analysis.Growth::latency)))));
    b.add(new Heading(3, "Round-trip exponent"));
    b.add(new TableBlock(tables.byPattern(0, results.names(), (p, name, sz) -> Format.exponent(
        Analysis.medianExponent(growth, p, name, Analysis.Growth::roundTrips)))));
    b.add(new Heading(3, "Documents (returned + written) exponent"));
    b.add(new TableBlock(tables.byPattern(0, results.names(), (p, name, sz) -> Format.exponent(
        Analysis.medianExponent(growth, p, name, Analysis.Growth::documents)))));
    List<String> groups = sizes.stream().map(Format::count).toList();
    List<String> series = results.measured().stream().map(Names::shortName).toList();
    for (Workload w : results.settings().workloads()) {
      double[][] values = new double[sizes.size()][series.size()];
      String[][] tips = new String[sizes.size()][series.size()];
      for (int i = 0; i < sizes.size(); i++) {
        for (int j = 0; j < series.size(); j++) {
          TreePattern p = results.measured().get(j);
          values[i][j] = analysis.latency(p, w.name(), sizes.get(i)) / 1e3;
          tips[i][j] = Names.of(p) + " at " + groups.get(i) + " nodes: "
              + Format.millis(values[i][j] * 1e3) + " ms per op";
        }
      }
      b.add(new Chart(Charts.bars(w.label() + ": median latency by tree size",
          "ms", Charts.Axis.LOG, Charts.HALF_WIDTH, groups, series, tables.colours(), values, null,
          null, tips), null));
    }
  }

  private void storage(List<Block> b) {
    int size = results.largestSize();
    b.add(new Heading(2, "Storage (" + Format.count(size) + " nodes)"));
    List<String> header = new ArrayList<>(List.of("pattern"));
    for (TreeSource s : results.settings().shapes()) {
      header.add(s.label());
    }
    header.add("index bytes");
    Table t = new Table(header);
    for (TreePattern p : results.measured()) {
      List<String> row = new ArrayList<>(List.of(Names.of(p)));
      Long index = null;
      for (TreeSource s : results.settings().shapes()) {
        Measurement m = anyOf(p, s, size);
        row.add(m == null || m.stored().avgDocBytes() == null ? "-"
            : String.format(Locale.ROOT, "%.0f", m.stored().avgDocBytes()));
        if (m != null && m.stored().indexBytes() != null) {
          index = index == null ? m.stored().indexBytes()
              : Math.max(index, m.stored().indexBytes());
        }
      }
      row.add(index == null ? "n/a" : Format.count(index));
      t.add(row);
    }
    b.add(new Text("Average document size in bytes per shape (collStats after loading), and the"
        + " largest total index size over the shapes where the server reports it in bytes."));
    b.add(new TableBlock(t));
  }

  private Measurement anyOf(TreePattern p, TreeSource s, int size) {
    for (String name : results.names()) {
      Measurement m = results.find(p, s, size, name);
      if (m != null && m.stored().avgDocBytes() != null) {
        return m;
      }
    }
    return null;
  }

  private void charts(List<Block> b, int size) {
    b.add(new Heading(2, "Per operation, across patterns (" + Format.count(size) + " nodes)"));
    b.add(new Text("For each operation and workload: per shape and pattern, the median latency,"
        + " the round trips and the documents written per operation (in HTML, one chart each:"
        + " one group of bars per shape; hover for the figures)."));
    List<String> shapes = results.settings().shapes().stream().map(TreeSource::label).toList();
    List<String> patterns = results.measured().stream().map(Names::shortName).toList();
    for (String name : results.names()) {
      double[][] latency = new double[shapes.size()][patterns.size()];
      double[][] trips = new double[shapes.size()][patterns.size()];
      double[][] written = new double[shapes.size()][patterns.size()];
      String[][] tips = new String[shapes.size()][patterns.size()];
      List<String> header = new ArrayList<>(List.of("shape"));
      header.addAll(patterns);
      Table table = new Table(header);
      for (int g = 0; g < shapes.size(); g++) {
        List<String> row = new ArrayList<>(List.of(shapes.get(g)));
        for (int s = 0; s < patterns.size(); s++) {
          Measurement m = results.find(results.measured().get(s),
              results.settings().shapes().get(g), size, name);
          latency[g][s] = m == null ? Double.NaN : m.latency().medianMicros() / 1e3;
          trips[g][s] = m == null ? Double.NaN : m.traffic().roundTrips();
          written[g][s] = m == null ? Double.NaN : m.traffic().docsWritten();
          String figures = m == null || m.failed() ? "-"
              : Format.micros(m.latency().medianMicros()) + ", "
                  + Format.number(m.traffic().roundTrips()) + " rt, "
                  + Format.number(m.traffic().docsWritten()) + " w";
          tips[g][s] = patterns.get(s) + ", " + shapes.get(g) + ": " + figures
              + (m == null ? "" : ", " + Format.number(m.traffic().docsReturned()) + " returned");
          row.add(figures);
        }
        table.add(row);
      }
      b.add(new Heading(3, name));
      List<String> colours = tables.colours();
      b.add(new Chart(Charts.bars(name + ": median latency", "ms", Charts.Axis.LOG,
          Charts.HALF_WIDTH, shapes, patterns, colours, latency, null, null, tips), table));
      b.add(new Chart(Charts.bars(name + ": round trips", "round trips", Charts.Axis.LINEAR,
          Charts.HALF_WIDTH, shapes, patterns, colours, trips, null, null, tips), null));
      b.add(new Chart(Charts.bars(name + ": documents written", "documents",
          Charts.Axis.fitting(written), Charts.HALF_WIDTH, shapes, patterns, colours, written,
          null, null, tips), null));
    }
  }

  private void details(List<Block> b) {
    b.add(new Heading(2, "Every measurement"));
    b.add(new Text("Per shape and size: median latency, round trips, documents written (per"
        + " operation). results.csv has every figure."));
    for (int size : results.settings().sizes()) {
      for (TreeSource shape : results.settings().shapes()) {
        b.add(new Heading(3, shape.label() + " (" + shape.description() + "), "
            + Format.count(size) + " nodes"));
        b.add(new TableBlock(tables.byPattern(size, results.names(), (p, name, sz) -> {
          Measurement m = results.find(p, shape, sz, name);
          if (m == null || m.failed()) {
            return m == null ? "-" : "failed";
          }
          return Format.micros(m.latency().medianMicros()) + " / "
              + Format.number(m.traffic().roundTrips())
              + " rt / " + Format.number(m.traffic().docsWritten()) + " w";
        })));
        List<String> subjects = new ArrayList<>();
        for (String name : results.names()) {
          Measurement m = results.find(results.measured().get(0), shape, size, name);
          if (m != null && !m.work().subject().isEmpty()) {
            subjects.add(name + ": " + m.work().subject());
          }
        }
        if (!results.measured().isEmpty() && !subjects.isEmpty()) {
          b.add(new Bullets(subjects));
        }
      }
    }
  }

  private void method(List<Block> b) {
    b.add(new Heading(2, "Method"));
    b.add(new Bullets(List.of(
        (results.settings().treeFile() != null ? "The tree is read from "
            + results.settings().treeFile().path() + " (--tree); the subjects of the operations"
            + " are chosen from it with the seed" : "Trees are generated from the seed")
            + "; every pattern loads the same tree and performs the same operations on the same"
            + " nodes.",
        "Per measurement: max(1, warm-up) untimed invocations, then one counted invocation"
            + " (CommandListener on the benchmark's own client: round trips, documents in cursor"
            + " batches, documents written as the replies report them, BSON bytes), then up to"
            + " --repeat timed invocations, stopping early after --cell-seconds.",
        "Every invocation that changes the tree is undone afterwards, untimed and uncounted"
            + " (inverse operations; a deleted subtree over " + Script.REINSERT_LIMIT
            + " nodes by reloading the tree), so each starts from the same state; the final state"
            + " is checked against the tree loaded.",
        "Workloads run a fixed sequence of " + Workload.MIN_STEPS + " operations (more, up to"
            + " 100, where the ratio needs it: 33/67 takes 100), exactly the stated share of them"
            + " reads at positions drawn from the seed; the kind of each read and edit is drawn"
            + " from the workload's weights and its subject from the tree as it evolves; an edit"
            + " that cannot be made there (a move with nowhere to go) becomes an insert. Figures"
            + " are per operation.",
        "p95 is by nearest rank: with fewer than 20 samples it is the slowest sample.",
        "Explain, where the server has it, replays the counted invocation's commands (updates and"
            + " deletes statement by statement) with verbosity executionStats.")));
  }

  /** The report as Markdown. */
  String markdown() {
    StringBuilder sb = new StringBuilder();
    for (Block block : blocks()) {
      if (block instanceof Heading h) {
        sb.append("#".repeat(h.level())).append(' ').append(h.text()).append("\n\n");
      } else if (block instanceof Text t) {
        sb.append(t.note() ? "> " : "").append(t.text()).append("\n\n");
      } else if (block instanceof Bullets l) {
        for (String item : l.items()) {
          sb.append("- ").append(item).append('\n');
        }
        sb.append('\n');
      } else if (block instanceof TableBlock t) {
        sb.append(t.table().markdown()).append('\n');
      } else if (block instanceof Code c) {
        sb.append("```\n").append(c.text()).append("```\n\n");
      } else if (block instanceof Chart c && c.table() != null) {
        sb.append(c.table().markdown()).append('\n');
      }
    }
    return sb.toString();
  }

  /** The report as a self-contained HTML page. */
  String html() {
    return Html.render("Arbor benchmark", blocks());
  }
}
