package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * What the reports derive from the measurements: figures across shapes, growth exponents across
 * sizes, and the ranking of patterns per workload.
 */
final class Analysis {
  /** Counts below this differ by noise only when compared as ratios; added to both sides. */
  private static final double COUNT_FLOOR = 0.1;
  /** Latencies closer than this ratio are reported as a tie. */
  static final double TIE = 1.10;

  private final Results results;

  Analysis(Results results) {
    this.results = results;
  }

  Results results() {
    return results;
  }

  // ------------------------------------------------------------------------ across shapes

  /** The measurements of one pattern, name and size, one per shape (failed ones included). */
  List<Measurement> acrossShapes(TreePattern pattern, String name, int size) {
    List<Measurement> out = new ArrayList<>();
    for (Shape shape : results.settings().shapes()) {
      Measurement m = results.find(pattern, shape, size, name);
      if (m != null) {
        out.add(m);
      }
    }
    return out;
  }

  /** The geometric mean over shapes of the median latency; NaN if any shape failed. */
  double latency(TreePattern pattern, String name, int size) {
    return geomean(acrossShapes(pattern, name, size), Measurement::medianMicros);
  }

  /** The arithmetic mean over shapes of a count; NaN if any shape failed. */
  double mean(TreePattern pattern, String name, int size, ToDoubleFunction<Measurement> f) {
    List<Measurement> ms = acrossShapes(pattern, name, size);
    if (ms.isEmpty()) {
      return Double.NaN;
    }
    double sum = 0;
    for (Measurement m : ms) {
      sum += f.applyAsDouble(m);
    }
    return sum / ms.size();
  }

  /** The smallest and largest value over shapes of a figure; NaNs if any shape failed. */
  double[] range(TreePattern pattern, String name, int size, ToDoubleFunction<Measurement> f) {
    double low = Double.POSITIVE_INFINITY;
    double high = Double.NEGATIVE_INFINITY;
    List<Measurement> ms = acrossShapes(pattern, name, size);
    for (Measurement m : ms) {
      double v = f.applyAsDouble(m);
      if (Double.isNaN(v)) {
        return new double[] {Double.NaN, Double.NaN};
      }
      low = Math.min(low, v);
      high = Math.max(high, v);
    }
    return ms.isEmpty() ? new double[] {Double.NaN, Double.NaN} : new double[] {low, high};
  }

  static double geomean(List<Measurement> ms, ToDoubleFunction<Measurement> f) {
    if (ms.isEmpty()) {
      return Double.NaN;
    }
    double logs = 0;
    for (Measurement m : ms) {
      double v = f.applyAsDouble(m);
      if (Double.isNaN(v)) {
        return Double.NaN;
      }
      logs += Math.log(Math.max(v, 1e-3));
    }
    return Math.exp(logs / ms.size());
  }

  // ------------------------------------------------------------------------------- growth

  /**
   * How one pattern's cost of one operation on one shape grows with the tree: the fitted exponent
   * b of {@code cost ~ N^b} across the measured sizes.
   *
   * @param pattern the pattern
   * @param shape the shape
   * @param name the operation or workload
   * @param latency exponent of the fastest latency (the sample least disturbed by other load)
   * @param roundTrips exponent of the round trips
   * @param documents exponent of the documents returned plus written
   */
  record Growth(TreePattern pattern, Shape shape, String name, double latency, double roundTrips,
      double documents) {}

  /** The growth of every pattern, shape and name; empty with fewer than two sizes. */
  List<Growth> growth() {
    List<Growth> out = new ArrayList<>();
    List<Integer> sizes = results.settings().sizes();
    if (sizes.size() < 2) {
      return out;
    }
    for (TreePattern p : results.measured()) {
      for (Shape shape : results.settings().shapes()) {
        for (String name : results.names()) {
          List<Measurement> points = new ArrayList<>();
          for (int size : sizes) {
            Measurement m = results.find(p, shape, size, name);
            if (m != null && !m.failed()) {
              points.add(m);
            }
          }
          if (points.size() < 2) {
            continue;
          }
          out.add(new Growth(p, shape, name, fit(points, Measurement::minMicros),
              fit(points, Measurement::roundTrips),
              fit(points, m -> m.docsReturned() + m.docsWritten())));
        }
      }
    }
    return out;
  }

  /** The median over shapes of a growth exponent of one pattern and name; NaN if none fitted. */
  static double medianExponent(List<Growth> growth, TreePattern pattern, String name,
      ToDoubleFunction<Growth> f) {
    double[] values = growth.stream()
        .filter(g -> g.pattern() == pattern && g.name().equals(name))
        .mapToDouble(f).filter(v -> !Double.isNaN(v)).sorted().toArray();
    if (values.length == 0) {
      return Double.NaN;
    }
    int n = values.length;
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  private static double fit(List<Measurement> points, ToDoubleFunction<Measurement> f) {
    double[] x = new double[points.size()];
    double[] y = new double[points.size()];
    boolean constant = true;
    for (int i = 0; i < x.length; i++) {
      x[i] = points.get(i).size();
      y[i] = f.applyAsDouble(points.get(i));
      constant &= y[i] == y[0];
    }
    if (constant && y[0] >= 0) {
      return 0; // including "always 0 documents written"
    }
    return Stats.exponent(x, y);
  }

  // ------------------------------------------------------------------------ recommendations

  /**
   * One pattern's place in a workload's ranking.
   *
   * @param pattern the pattern
   * @param micros its cost: median latency per operation, geometric mean over shapes
   * @param vsBest its cost over the best pattern's
   * @param roundTrips round trips per operation, mean over shapes
   * @param docsWritten documents written per operation, mean over shapes
   * @param docsReturned documents returned per operation, mean over shapes
   * @param reason one line from the numbers saying why it ranks there
   */
  record Ranked(TreePattern pattern, double micros, double vsBest, double roundTrips,
      double docsWritten, double docsReturned, String reason) {

    /** The margin to the best: {@code best}, {@code +8%}, {@code 2.9x}, {@code tie}. */
    String margin() {
      if (Double.isNaN(vsBest)) {
        return "failed";
      }
      if (vsBest == 1.0) {
        return "best";
      }
      if (vsBest < TIE) {
        return String.format(Locale.ROOT, "+%.0f%% (tie)", (vsBest - 1) * 100);
      }
      if (vsBest < 2) {
        return String.format(Locale.ROOT, "+%.0f%%", (vsBest - 1) * 100);
      }
      return Format.ratio(vsBest) + "x";
    }
  }

  /**
   * The ranking of the patterns for one workload at the largest size.
   *
   * @param workload the workload
   * @param size the tree size ranked at
   * @param ranking best first
   */
  record Recommendation(Workload workload, int size, List<Ranked> ranking) {}

  /** One recommendation per measured workload. */
  List<Recommendation> recommendations() {
    List<Recommendation> out = new ArrayList<>();
    int size = results.largestSize();
    for (Workload w : results.settings().workloads()) {
      String name = w.name();
      List<Ranked> ranked = new ArrayList<>();
      for (TreePattern p : results.measured()) {
        ranked.add(new Ranked(p, latency(p, name, size), Double.NaN,
            mean(p, name, size, Measurement::roundTrips),
            mean(p, name, size, Measurement::docsWritten),
            mean(p, name, size, Measurement::docsReturned), ""));
      }
      ranked.sort(Comparator.comparingDouble(
          (Ranked r) -> Double.isNaN(r.micros()) ? Double.MAX_VALUE : r.micros()));
      if (ranked.isEmpty()) {
        continue;
      }
      double best = ranked.get(0).micros();
      List<Ranked> withReasons = new ArrayList<>();
      for (int i = 0; i < ranked.size(); i++) {
        Ranked r = ranked.get(i);
        Ranked reference = i == 0 ? (ranked.size() > 1 ? ranked.get(1) : null) : ranked.get(0);
        withReasons.add(new Ranked(r.pattern(), r.micros(), r.micros() / best, r.roundTrips(),
            r.docsWritten(), r.docsReturned(), reason(r, reference, i == 0, size)));
      }
      out.add(new Recommendation(w, size, withReasons));
    }
    return out;
  }

  /** The counters a reason may cite, with their wording. */
  private static final String[] COUNTERS = {"round trips", "documents written",
      "documents returned"};

  private static double[] counters(Ranked r) {
    return new double[] {r.roundTrips(), r.docsWritten(), r.docsReturned()};
  }

  /**
   * The reason line: for the best pattern, the count in which it beats the runner-up most; for the
   * others, the count in which they lose most to the best. When no count differs by 20%, says so:
   * the difference is then time per query.
   */
  static String reason(Ranked r, Ranked reference, boolean best, int size) {
    String name = Names.of(r.pattern());
    String at = " per op at " + Format.count(size) + " nodes";
    if (Double.isNaN(r.micros())) {
      return name + ": failed on at least one shape (see the warnings)";
    }
    if (reference == null) {
      return name + ": the only pattern measured";
    }
    double[] mine = counters(r);
    double[] theirs = counters(reference);
    int pick = -1;
    double strongest = 1.2; // a count must differ by 20% to be cited
    for (int k = 0; k < mine.length; k++) {
      double ratio = best ? (theirs[k] + COUNT_FLOOR) / (mine[k] + COUNT_FLOOR)
          : (mine[k] + COUNT_FLOOR) / (theirs[k] + COUNT_FLOOR);
      if (ratio > strongest) {
        strongest = ratio;
        pick = k;
      }
    }
    String other = Names.of(reference.pattern());
    if (pick < 0) {
      String counts = " (" + Format.number(r.roundTrips()) + " vs "
          + Format.number(reference.roundTrips()) + " round trips, "
          + Format.number(r.docsWritten()) + " vs " + Format.number(reference.docsWritten())
          + " documents written" + at + ")";
      return best
          ? name + ": counts close to " + other + counts + "; wins on time per query"
          : name + ": counts close to " + other + counts + "; loses on time per query";
    }
    String figure = Format.number(mine[pick]) + " " + COUNTERS[pick] + at + ", vs "
        + Format.number(theirs[pick]) + " for " + (best ? "the runner-up " : "") + other;
    String context = pick == 0 ? "" : "; " + Format.number(r.roundTrips()) + " round trips";
    return name + ": " + figure + context;
  }

  /** The figures behind a bar or a line: every finite value of an array. */
  static double[] finite(double[] values) {
    return Arrays.stream(values).filter(v -> !Double.isNaN(v) && !Double.isInfinite(v))
        .toArray();
  }
}
