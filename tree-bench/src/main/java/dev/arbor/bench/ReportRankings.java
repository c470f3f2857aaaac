package dev.arbor.bench;

import dev.arbor.bench.Report.Block;
import dev.arbor.bench.Report.Bullets;
import dev.arbor.bench.Report.Chart;
import dev.arbor.bench.Report.Heading;
import dev.arbor.bench.Report.TableBlock;
import dev.arbor.bench.Report.Text;
import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rankings of a run's {@link Report}: each workload's ranking as a table, its ranks,
 * intervals, realised mix and reasons, the one-line decision per workload, the note on which
 * figure decides, and the report's opening "Decision" section with its charts.
 */
final class ReportRankings {
  private final Analysis analysis;
  private final Results results;
  private final List<Analysis.Recommendation> recommendations;
  private final ReportTables tables;

  /** The rankings of {@code recommendations}, the report's (computed once, by the report). */
  ReportRankings(Analysis analysis, List<Analysis.Recommendation> recommendations,
      ReportTables tables) {
    this.analysis = analysis;
    this.results = analysis.results();
    this.recommendations = recommendations;
    this.tables = tables;
  }

  /**
   * A recommendation's ranking as a table: the rank ({@code =2} when shared), then the figures
   * that decide it, then the others.
   */
  static Table ranking(Analysis.Recommendation r) {
    boolean time = r.rankBy() == Settings.RankBy.TIME;
    List<String> header = new ArrayList<>(List.of("rank", "pattern"));
    List<String> counts = List.of("round trips/op", "written/op");
    String ms = "ms/op (95% interval)";
    if (time) {
      header.add(ms);
      header.addAll(counts);
    } else {
      header.addAll(counts);
      header.add(ms);
    }
    header.add("returned/op");
    Table t = new Table(header, 2);
    for (Analysis.Ranked x : r.ranking()) {
      List<String> row = new ArrayList<>(List.of(rank(r, x), Names.of(x.pattern())));
      String latency = interval(x);
      List<String> figures = List.of(Format.number(x.roundTrips()),
          Format.number(x.docsWritten()));
      if (time) {
        row.add(latency);
        row.addAll(figures);
      } else {
        row.addAll(figures);
        row.add(latency);
      }
      row.add(Format.number(x.docsReturned()));
      t.add(row);
    }
    return t;
  }

  /** A rank, {@code =2} when another pattern shares it, {@code -} for a failed pattern. */
  static String rank(Analysis.Recommendation r, Analysis.Ranked x) {
    if (Double.isNaN(x.micros())) {
      return "-";
    }
    return (r.tied(x) ? "=" : "") + x.rank();
  }

  /** Milliseconds with their interval: {@code 0.824 (0.801-0.850)}. */
  static String interval(Analysis.Ranked x) {
    if (Double.isNaN(x.micros())) {
      return "failed";
    }
    return Format.millis(x.micros()) + " (" + Format.millis(x.microsLow()) + "-"
        + Format.millis(x.microsHigh()) + ")";
  }

  static String recommendationTitle(Analysis.Recommendation r) {
    return r.workload().name() + ": " + r.workload().description() + ", "
        + Format.count(r.size()) + " nodes";
  }

  /** The realised share of reads: {@code realised 95/5 in every measurement}. */
  static String realised(Analysis.Recommendation r) {
    if (r.steps() == 0) {
      return "not measured";
    }
    double percent = 100.0 * r.reads() / r.steps();
    String share = percent == Math.rint(percent) ? String.format(Locale.ROOT, "%.0f/%.0f",
        percent, 100 - percent) : String.format(Locale.ROOT, "%.1f/%.1f", percent, 100 - percent);
    return "realised " + share + (r.exact() ? " in every measurement"
        : " over all measurements (results.csv: reads, steps)");
  }

  /** One line: the workload, its realised mix, and the patterns that rank first. */
  static String decision(Analysis.Recommendation r) {
    List<String> best = r.best().stream().map(Names::of).toList();
    String who = best.isEmpty() ? "no pattern completed it"
        : best.size() == 1 ? best.get(0)
        : String.join(", ", best.subList(0, best.size() - 1)) + " and " + best.get(best.size() - 1)
            + " (tied)";
    return r.workload().label() + " (" + realised(r) + "): " + who;
  }

  static List<String> reasons(Analysis.Recommendation r) {
    List<String> out = new ArrayList<>();
    for (Analysis.Ranked x : r.ranking()) {
      out.add(x.reason());
    }
    return out;
  }

  /** Which figure decides the ranking, and why that one. */
  String rankingNote() {
    Settings.RankBy by = analysis.rankBy();
    String at = Format.count(results.largestSize()) + " nodes";
    if (by == Settings.RankBy.COUNTS) {
      return "Ranked by round trips and documents written per operation at " + at + " (means"
          + " over the shapes): they are what a pattern costs on any server"
          + (results.embedded() ? ", while the embedded server's latencies mostly count the"
              + " documents it scans (its indexes serve equalities and ranges only)" : "")
                  + ". A pattern ranks below"
          + " another when that one needs clearly fewer of one of the two (by more than 10% and"
          + " more than half a round trip or document per operation) and not more of the other;"
          + " a rank is 1 + the number of patterns above, so patterns that trade one for the"
          + " other share it (=). Latency is shown with its 95% interval for reference;"
          + " --rank-by time ranks by it.";
    }
    return "Ranked by median latency per operation at " + at + " (geometric mean over the"
        + " shapes) on " + results.server() + ". Each has a 95% bootstrap interval from the"
        + " timed runs of its measurements (up to " + results.settings().repeat() + " each,"
        + " --repeat): a pattern ranks below another only when their intervals do not overlap,"
        + " and a rank is 1 + the number of patterns above, so overlapping ones share it (=)."
        + " The intervals show the noise between runs in this process, not between machines."
        + (results.embedded() ? " On the embedded server latencies mostly count scanned"
            + " documents; --rank-by counts ranks by round trips and documents written." : "");
  }

  /**
   * The decision and its evidence, first: one line per workload, which figure decides and why,
   * the ranks with their figures, and charts of documents written, round trips and latency.
   */
  void decision(List<Block> b) {
    b.add(new Heading(2, "Decision"));
    if (recommendations.isEmpty()) {
      b.add(new Text("No workload was measured (--workload none and no --mix), so there is no"
          + " ranking; the tables below compare the single operations."));
      return;
    }
    b.add(new Bullets(recommendations.stream().map(ReportRankings::decision).toList()));
    b.add(new Text(rankingNote()));
    boolean time = analysis.rankBy() == Settings.RankBy.TIME;
    List<String> header = new ArrayList<>(List.of("pattern"));
    for (Analysis.Recommendation r : recommendations) {
      header.add(r.workload().label());
    }
    Table t = new Table(header);
    for (TreePattern p : results.measured()) {
      List<String> row = new ArrayList<>(List.of(Names.of(p)));
      for (Analysis.Recommendation r : recommendations) {
        Analysis.Ranked x = rankedIn(r, p);
        row.add(rank(r, x) + ": " + (time ? interval(x) + " ms"
            : Format.number(x.roundTrips()) + " rt, " + Format.number(x.docsWritten()) + " w"));
      }
      t.add(row);
    }
    b.add(new TableBlock(t));
    b.add(new Text(time ? "Cells: rank, then ms per operation with its 95% interval."
        : "Cells: rank, then round trips (rt) and documents written (w) per operation."));

    List<String> groups = recommendations.stream()
        .map(r -> r.workload().label()).toList();
    int g = groups.size();
    int n = results.measured().size();
    double[][] written = new double[g][n];
    double[][] trips = new double[g][n];
    double[][] millis = new double[g][n];
    double[][] low = new double[g][n];
    double[][] high = new double[g][n];
    String[][] tips = new String[g][n];
    for (int i = 0; i < g; i++) {
      Analysis.Recommendation r = recommendations.get(i);
      for (int j = 0; j < n; j++) {
        TreePattern p = results.measured().get(j);
        Analysis.Ranked x = rankedIn(r, p);
        written[i][j] = x.docsWritten();
        trips[i][j] = x.roundTrips();
        millis[i][j] = x.micros() / 1e3;
        low[i][j] = x.microsLow() / 1e3;
        high[i][j] = x.microsHigh() / 1e3;
        tips[i][j] = Names.of(p) + ", " + groups.get(i) + ": rank " + rank(r, x) + ", "
            + Format.number(x.roundTrips()) + " round trips, " + Format.number(x.docsWritten())
            + " written, " + interval(x) + " ms per op";
      }
    }
    List<String> series = results.measured().stream().map(Names::shortName).toList();
    b.add(new Chart(Charts.bars("Documents written per op", "documents",
        Charts.Axis.fitting(written), Charts.HALF_WIDTH, groups, series, tables.colours(), written,
        null, null, tips), null));
    b.add(new Chart(Charts.bars("Round trips per op", "round trips", Charts.Axis.LINEAR,
        Charts.HALF_WIDTH, groups, series, tables.colours(), trips, null, null, tips), null));
    b.add(new Chart(Charts.bars("Median latency per op, 95% interval", "ms", Charts.Axis.LOG,
        Charts.HALF_WIDTH, groups, series, tables.colours(), millis, low, high, tips), null));
  }

  private static Analysis.Ranked rankedIn(Analysis.Recommendation r, TreePattern p) {
    return r.ranking().stream().filter(y -> y.pattern() == p).findFirst().orElseThrow();
  }
}
