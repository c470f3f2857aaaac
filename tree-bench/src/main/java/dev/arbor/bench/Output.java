package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** Writes a run's files ({@code results.json}, {@code results.csv}, reports) and its summary. */
final class Output {
  static final String JSON = "results.json";
  static final String CSV = "results.csv";
  static final String MARKDOWN = "report.md";
  static final String HTML = "report.html";

  /** The CSV columns, in order: the run's parameters, then the measurement's figures. */
  static final List<String> CSV_COLUMNS = List.of("started", "server", "server_version",
      "embedded", "seed", "repeat", "warmup", "cell_seconds", "isolated_reads", "transactions",
      "pattern", "shape", "size",
      "kind", "name", "subject", "subject_size", "result_size", "steps", "reads", "samples",
      "min_us",
      "median_us",
      "p95_us", "round_trips", "docs_returned", "docs_written", "bytes_sent", "bytes_received",
      "lock_round_trips", "lock_docs_written",
      "docs_examined", "keys_examined", "examined_per_returned", "baseline_query",
      "baseline_median_us", "baseline_round_trips", "overhead", "overhead_other_isolation",
      "avg_doc_bytes", "data_bytes",
      "index_bytes", "note");

  private Output() {}

  /**
   * Makes sure the files can be written into {@code dir}, creating it if needed: before a run, so
   * that a bad {@code --out} is reported before anything is measured.
   *
   * @throws IOException saying why, naming the directory
   */
  static void prepare(Path dir) throws IOException {
    try {
      Files.createDirectories(dir);
      Path probe = Files.createTempFile(dir, ".arbor-bench-", ".tmp");
      Files.delete(probe);
    } catch (FileAlreadyExistsException e) {
      throw new IOException("cannot write to --out " + dir + ": a file is in the way of the"
          + " directory", e);
    } catch (AccessDeniedException e) {
      throw new IOException("cannot write to --out " + dir + ": permission denied", e);
    } catch (IOException e) {
      throw new IOException("cannot write to --out " + dir + ": " + (e instanceof
          FileSystemException f && f.getReason() != null ? f.getReason() : e.getMessage()), e);
    }
  }

  /**
   * Writes the four files into {@code dir}, creating it if needed.
   *
   * @throws IOException naming the file that could not be written
   */
  static void write(Path dir, Report report, Results results) throws IOException {
    prepare(dir);
    writeFile(dir.resolve(JSON), json(results, report));
    writeFile(dir.resolve(CSV), csv(results));
    writeFile(dir.resolve(MARKDOWN), report.markdown());
    writeFile(dir.resolve(HTML), report.html());
  }

  private static void writeFile(Path file, String content) throws IOException {
    try {
      Files.writeString(file, content, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IOException("cannot write " + file + ": " + e, e);
    }
  }

  // ------------------------------------------------------------------------------------ CSV

  static String csv(Results r) {
    StringBuilder sb = new StringBuilder(String.join(",", CSV_COLUMNS)).append('\n');
    Settings s = r.settings();
    for (Measurement m : r.measurements()) {
      Measurement.Key k = m.key();
      Measurement.Work w = m.work();
      Measurement.Latency l = m.latency();
      Measurement.Traffic t = m.traffic();
      Measurement.Baseline b = m.baseline();
      Measurement.Stored st = m.stored();
      List<Object> cells = List.of(r.started().toString(), r.server(), r.serverVersion(),
          r.embedded(), s.seed(), s.repeat(), s.warmup(), s.cellSeconds(), s.isolatedReads(),
          s.transactions(), Names.of(k.pattern()), k.shape().label(), k.size(), k.kind(),
          k.name(), w.subject(), w.subjectSize(), w.resultSize(), w.steps(), w.reads(),
          l.samples(), l.minMicros(), l.medianMicros(), l.p95Micros(),
          t.roundTrips(), t.docsReturned(), t.docsWritten(), t.bytesSent(), t.bytesReceived(),
          t.lockRoundTrips(), t.lockDocsWritten(),
          nullable(m.explain().docsExamined()), nullable(m.explain().keysExamined()),
          nullable(m.examinedPerReturned()), nullable(b.query()), nullable(b.medianMicros()),
          nullable(b.roundTrips()), nullable(b.overhead()), nullable(b.otherOverhead()),
          nullable(st.avgDocBytes()), nullable(st.dataBytes()), nullable(st.indexBytes()),
          m.note());
      List<String> out = new ArrayList<>();
      for (Object c : cells) {
        out.add(csvCell(c));
      }
      sb.append(String.join(",", out)).append('\n');
    }
    return sb.toString();
  }

  private static Object nullable(Object o) {
    return o == null ? "" : o;
  }

  private static String csvCell(Object o) {
    String s;
    if (o instanceof Double d) {
      s = Double.isNaN(d) ? "" : d == Math.rint(d) && Math.abs(d) < 1e15
          ? Long.toString(d.longValue()) : String.format(Locale.ROOT, "%.4f", d);
    } else {
      s = String.valueOf(o);
    }
    if (s.contains(",") || s.contains("\"") || s.contains("\n")) {
      return "\"" + s.replace("\"", "\"\"") + "\"";
    }
    return s;
  }

  // ----------------------------------------------------------------------------------- JSON

  static String json(Results r, Report report) {
    Settings s = r.settings();
    Document run = new Document("started", r.started().toString())
        .append("elapsedSeconds", r.elapsedSeconds())
        .append("server", r.server())
        .append("serverVersion", r.serverVersion())
        .append("embedded", r.embedded())
        .append("explain", r.explain())
        .append("patterns", r.measured().stream().map(Names::of).toList())
        .append("shapes", s.shapes().stream().map(TreeSource::label).toList())
        .append("sizes", s.sizes())
        .append("tree", s.treeFile() == null ? null : tree(s.treeFile()))
        .append("ops", s.ops().stream().map(Names::of).toList())
        .append("repeat", s.repeat())
        .append("warmup", s.warmup())
        .append("seed", s.seed())
        .append("cellSeconds", s.cellSeconds())
        .append("isolatedReads", s.isolatedReads())
        .append("transactions", s.transactions())
        .append("workloads", s.workloads().stream().map(w -> new Document("name", w.name())
            .append("description", w.description()).append("readPercent", w.readPercent())
            .append("steps", w.steps())).toList())
        .append("java", System.getProperty("java.version"))
        .append("processors", Runtime.getRuntime().availableProcessors());
    List<Document> skipped = new ArrayList<>();
    for (Map.Entry<TreePattern, String> e : r.skipped().entrySet()) {
      skipped.add(new Document("pattern", Names.of(e.getKey())).append("reason", e.getValue()));
    }
    List<Document> measurements = new ArrayList<>();
    for (Measurement m : r.measurements()) {
      measurements.add(new Document("pattern", Names.of(m.key().pattern()))
          .append("shape", m.key().shape().label())
          .append("size", m.key().size())
          .append("kind", m.key().kind())
          .append("name", m.key().name())
          .append("subject", m.work().subject())
          .append("subjectSize", m.work().subjectSize())
          .append("resultSize", m.work().resultSize())
          .append("steps", m.work().steps())
          .append("reads", m.work().reads())
          .append("samples", m.latency().samples())
          .append("minMicros", finite(m.latency().minMicros()))
          .append("medianMicros", finite(m.latency().medianMicros()))
          .append("p95Micros", finite(m.latency().p95Micros()))
          .append("roundTrips", finite(m.traffic().roundTrips()))
          .append("docsReturned", finite(m.traffic().docsReturned()))
          .append("docsWritten", finite(m.traffic().docsWritten()))
          .append("bytesSent", finite(m.traffic().bytesSent()))
          .append("bytesReceived", finite(m.traffic().bytesReceived()))
          .append("lockRoundTrips", finite(m.traffic().lockRoundTrips()))
          .append("lockDocsWritten", finite(m.traffic().lockDocsWritten()))
          .append("docsExamined", m.explain().docsExamined())
          .append("keysExamined", m.explain().keysExamined())
          .append("examinedPerReturned", m.examinedPerReturned())
          .append("baselineQuery", m.baseline().query())
          .append("baselineMedianMicros", m.baseline().medianMicros())
          .append("baselineRoundTrips", m.baseline().roundTrips())
          .append("overhead", m.baseline().overhead())
          .append("overheadOtherIsolation", m.baseline().otherOverhead())
          .append("overheadRatios", rounded(m.baseline().overheadRatios()))
          .append("overheadRatiosOtherIsolation", rounded(m.baseline().otherOverheadRatios()))
          .append("avgDocBytes", m.stored().avgDocBytes())
          .append("dataBytes", m.stored().dataBytes())
          .append("indexBytes", m.stored().indexBytes())
          .append("note", m.note()));
    }
    List<Document> growth = new ArrayList<>();
    for (Analysis.Growth g : report.growth()) {
      growth.add(new Document("pattern", Names.of(g.pattern()))
          .append("shape", g.shape().label())
          .append("name", g.name())
          .append("latencyExponent", finite(g.latency()))
          .append("roundTripExponent", finite(g.roundTrips()))
          .append("documentExponent", finite(g.documents())));
    }
    List<Document> recommendations = new ArrayList<>();
    for (Analysis.Recommendation rec : report.recommendations()) {
      List<Document> ranking = new ArrayList<>();
      for (Analysis.Ranked x : rec.ranking()) {
        ranking.add(new Document("pattern", Names.of(x.pattern()))
            .append("rank", x.rank())
            .append("tied", rec.tied(x))
            .append("microsPerOp", finite(x.micros()))
            .append("microsPerOpLow", finite(x.microsLow()))
            .append("microsPerOpHigh", finite(x.microsHigh()))
            .append("vsBest", finite(x.vsBest()))
            .append("margin", x.margin())
            .append("roundTripsPerOp", finite(x.roundTrips()))
            .append("docsWrittenPerOp", finite(x.docsWritten()))
            .append("docsReturnedPerOp", finite(x.docsReturned()))
            .append("reason", x.reason()));
      }
      recommendations.add(new Document("workload", rec.workload().name())
          .append("description", rec.workload().description())
          .append("size", rec.size())
          .append("rankedBy", Names.of(rec.rankBy()))
          .append("readPercent", rec.workload().readPercent())
          .append("realisedReads", rec.reads())
          .append("realisedSteps", rec.steps())
          .append("realisedExactly", rec.exact())
          .append("decision", ReportRankings.decision(rec))
          .append("ranking", ranking));
    }
    Document root = new Document("run", run)
        .append("skipped", skipped)
        .append("warnings", r.warnings())
        .append("measurements", measurements)
        .append("growth", growth)
        .append("recommendations", recommendations);
    return root.toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(true)
        .build()) + "\n";
  }

  /** The file of {@code --tree} and its shape, for {@code run.tree}. */
  private static Document tree(TreeFile file) {
    TreeFacts.Profile p = file.profile();
    return new Document("file", file.path().toString())
        .append("nodes", p.nodes())
        .append("roots", p.roots())
        .append("leaves", p.leaves())
        .append("maxDepth", p.maxDepth())
        .append("meanDepth", p.meanDepth())
        .append("maxFanOut", p.maxFanOut())
        .append("meanFanOut", p.meanFanOut());
  }

  private static Double finite(double d) {
    return Double.isNaN(d) || Double.isInfinite(d) ? null : d;
  }

  // -------------------------------------------------------------------------------- console

  /** The comparison printed at the end of a run. */
  static void summary(PrintWriter out, Report report, Results r, Path dir) {
    int size = r.largestSize();
    String at = " at " + Format.count(size) + " nodes";
    out.println();
    out.println("== Arbor bench: " + report.runLine());
    if (report.treeLine() != null) {
      out.println(wrap(report.treeLine(), 100));
    }
    if (r.embedded()) {
      out.println();
      out.println(wrap(Report.EMBEDDED_NOTE, 100));
    }
    for (Map.Entry<TreePattern, String> e : r.skipped().entrySet()) {
      out.println("(" + Names.of(e.getKey()) + " skipped: " + e.getValue() + ")");
    }
    out.println();
    out.println("Round trips per operation" + at + " (a range spans the shapes)");
    out.print(report.tables().roundTrips(size).text());
    out.println("(including the stores' lock and journal protocol"
        + (r.settings().isolatedReads() ? ": a lock check per isolated read, none where it is"
            + " folded into a query by _id," : ",")
        + " more per change; report.md splits it out)");
    out.println();
    out.println("Documents written per operation" + at);
    out.print(report.tables().written(size).text());
    out.println();
    out.println("Median latency per operation in ms" + at + " (geometric mean over shapes)");
    out.print(report.tables().latency(size).text());
    for (Analysis.Recommendation rec : report.recommendations()) {
      out.println();
      out.println("Ranking for " + ReportRankings.recommendationTitle(rec) + ", "
          + ReportRankings.realised(rec) + ":");
      out.print(ReportRankings.ranking(rec).text());
      for (String reason : ReportRankings.reasons(rec)) {
        out.println("  - " + reason);
      }
    }
    if (!report.recommendations().isEmpty()) {
      out.println();
      out.println("Decision:");
      for (Analysis.Recommendation rec : report.recommendations()) {
        out.println("  " + ReportRankings.decision(rec));
      }
      out.println(wrap(report.rankings().rankingNote(), 100));
    }
    if (!r.warnings().isEmpty()) {
      out.println();
      out.println(r.warnings().size() + " warning(s):");
      for (String w : r.warnings()) {
        out.println("  - " + w);
      }
    }
    out.println();
    out.println("Wrote " + dir.resolve(HTML) + ", " + MARKDOWN + ", " + JSON + ", " + CSV);
  }

  static String wrap(String text, int width) {
    StringBuilder sb = new StringBuilder();
    int column = 0;
    for (String word : text.split(" ")) {
      if (column > 0 && column + 1 + word.length() > width) {
        sb.append('\n');
        column = 0;
      } else if (column > 0) {
        sb.append(' ');
        column++;
      }
      sb.append(word);
      column += word.length();
    }
    return sb.toString();
  }

  /** Each round's ratio, to four decimals: the spread behind a median. */
  private static List<Double> rounded(List<Double> ratios) {
    List<Double> out = new ArrayList<>(ratios.size());
    for (double r : ratios) {
      out.add(Math.round(r * 1e4) / 1e4);
    }
    return out;
  }
}
