package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The tables of a run's {@link Report}: a figure per operation (rows) and pattern (columns) at
 * one size, their cells (ranges over the shapes, latencies, ratios to a baseline with their
 * interval), and the colour of each pattern in the charts. The console summary prints some of
 * them too.
 */
final class ReportTables {
  private final Analysis analysis;
  private final Results results;

  ReportTables(Analysis analysis) {
    this.analysis = analysis;
    this.results = analysis.results();
  }

  /** A table of a figure per name (rows) and pattern (columns) at one size, over shapes. */
  Table byPattern(int size, List<String> names, Cell cell) {
    List<String> header = new ArrayList<>();
    header.add("operation");
    for (TreePattern p : results.measured()) {
      header.add(Names.shortName(p));
    }
    Table t = new Table(header);
    for (String name : names) {
      List<String> row = new ArrayList<>();
      row.add(name);
      boolean any = false;
      for (TreePattern p : results.measured()) {
        String v = cell.value(p, name, size);
        any |= !v.equals("-");
        row.add(v);
      }
      if (any) {
        t.add(row);
      }
    }
    return t;
  }

  /** The text of one table cell. */
  interface Cell {
    String value(TreePattern pattern, String name, int size);
  }

  Cell rangeOf(ToDoubleFunction<Measurement> f) {
    return (p, name, size) -> {
      double[] r = analysis.range(p, name, size, f);
      return Format.range(r[0], r[1]);
    };
  }

  Cell latencyCell() {
    return (p, name, size) -> Format.millis(analysis.latency(p, name, size));
  }

  Table roundTrips(int size) {
    return byPattern(size, results.names(), rangeOf(row -> row.traffic().roundTrips()));
  }

  Table written(int size) {
    return byPattern(size, results.names(), rangeOf(row -> row.traffic().docsWritten()));
  }

  Table returned(int size) {
    return byPattern(size, results.names(), rangeOf(row -> row.traffic().docsReturned()));
  }

  Table latency(int size) {
    return byPattern(size, results.names(), latencyCell());
  }

  /**
   * A ratio to the hand-written query: the geometric mean over shapes of each shape's median
   * ratio, and the 95% bootstrap interval of that mean.
   */
  Cell ratioCell(java.util.function.Function<Measurement, List<Double>> ratios) {
    return (p, name, sz) -> {
      List<List<Double>> groups = new ArrayList<>();
      for (Measurement m : analysis.acrossShapes(p, name, sz)) {
        if (!ratios.apply(m).isEmpty()) {
          groups.add(ratios.apply(m));
        }
      }
      if (groups.isEmpty()) {
        return "-";
      }
      double logs = 0;
      for (List<Double> g : groups) {
        logs += Math.log(Math.max(Measurement.median(g), 1e-3));
      }
      double[] ci = Stats.bootstrapInterval(groups, results.settings().seed() * 17 + p.ordinal(),
          Measurement.BOOTSTRAP_ROUNDS);
      return Format.ratio(Math.exp(logs / groups.size())) + " (" + Format.ratio(ci[0]) + "-"
          + Format.ratio(ci[1]) + ")";
    };
  }

  /** Each measured pattern's colour: the same in every chart. */
  List<String> colours() {
    return results.measured().stream().map(p -> Charts.COLOURS[p.ordinal()]).toList();
  }
}
