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
    for (TreeSource shape : results.settings().shapes()) {
      Measurement m = results.find(pattern, shape, size, name);
      if (m != null) {
        out.add(m);
      }
    }
    return out;
  }

  /** The geometric mean over shapes of the median latency; NaN if any shape failed. */
  double latency(TreePattern pattern, String name, int size) {
    return geomean(acrossShapes(pattern, name, size), row -> row.latency().medianMicros());
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
  record Growth(TreePattern pattern, TreeSource shape, String name, double latency,
      double roundTrips,
      double documents) {}

  /** The growth of every pattern, shape and name; empty with fewer than two sizes. */
  List<Growth> growth() {
    List<Growth> out = new ArrayList<>();
    List<Integer> sizes = results.settings().sizes();
    if (sizes.size() < 2) {
      return out;
    }
    for (TreePattern p : results.measured()) {
      for (TreeSource shape : results.settings().shapes()) {
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
          out.add(new Growth(p, shape, name, fit(points, row -> row.latency().minMicros()),
              fit(points, row -> row.traffic().roundTrips()),
              fit(points, m -> m.traffic().docsReturned() + m.traffic().docsWritten())));
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
      x[i] = points.get(i).key().size();
      y[i] = f.applyAsDouble(points.get(i));
      constant &= y[i] == y[0];
    }
    if (constant && y[0] >= 0) {
      return 0; // including "always 0 documents written"
    }
    return Stats.exponent(x, y);
  }

  // ------------------------------------------------------------------------ recommendations

  /** Counts that differ by less than this ratio are the same when ranking by counts. */
  static final double COUNT_TIE = 1.10;
  /** Counts that differ by less than this, per operation, are the same when ranking by counts. */
  static final double COUNT_MARGIN = 0.5;

  /**
   * One pattern's place in a workload's ranking.
   *
   * @param pattern the pattern
   * @param rank 1 + the number of patterns that rank above it: patterns with the same rank tie
   * @param micros median latency per operation, geometric mean over shapes
   * @param microsLow the low end of the 95% bootstrap interval of {@code micros}
   * @param microsHigh its high end
   * @param vsBest {@code micros} over the fastest pattern's
   * @param roundTrips round trips per operation, mean over shapes
   * @param docsWritten documents written per operation, mean over shapes
   * @param docsReturned documents returned per operation, mean over shapes
   * @param reason one line from the numbers saying why it ranks there
   */
  record Ranked(TreePattern pattern, int rank, double micros, double microsLow,
      double microsHigh, double vsBest, double roundTrips, double docsWritten,
      double docsReturned, String reason) {

    /** The latency over the fastest pattern's: {@code best}, {@code +8%}, {@code 2.9x}. */
    String margin() {
      if (Double.isNaN(vsBest)) {
        return "failed";
      }
      if (vsBest == 1.0) {
        return "best";
      }
      if (vsBest < 2) {
        return String.format(Locale.ROOT, "+%.0f%%", (vsBest - 1) * 100);
      }
      return Format.ratio(vsBest) + "x";
    }

    Ranked withReason(int rank, double vsBest, String reason) {
      return new Ranked(pattern, rank, micros, microsLow, microsHigh, vsBest, roundTrips,
          docsWritten, docsReturned, reason);
    }
  }

  /**
   * The ranking of the patterns for one workload at the largest size.
   *
   * @param workload the workload
   * @param size the tree size ranked at
   * @param rankBy what decided the ranking ({@code TIME} or {@code COUNTS})
   * @param reads the operations of the workload's sequences that read, summed over the shapes
   * @param steps all operations of those sequences: reads / steps is the realised share
   * @param exact whether every measurement of the workload, at every size, realised its share
   * @param ranking best first; patterns of the same rank tie
   */
  record Recommendation(Workload workload, int size, Settings.RankBy rankBy, long reads,
      long steps, boolean exact, List<Ranked> ranking) {

    /** The patterns of rank 1. */
    List<TreePattern> best() {
      return ranking.stream().filter(r -> r.rank() == 1 && !Double.isNaN(r.micros()))
          .map(Ranked::pattern).toList();
    }

    /** Whether {@code r} shares its rank with another pattern. */
    boolean tied(Ranked r) {
      return ranking.stream().filter(x -> x.rank() == r.rank()).count() > 1;
    }
  }

  /** What ranks the patterns in this run. */
  Settings.RankBy rankBy() {
    return results.settings().rankBy().on(results.embedded());
  }

  /** One recommendation per measured workload. */
  List<Recommendation> recommendations() {
    List<Recommendation> out = new ArrayList<>();
    int size = results.largestSize();
    Settings.RankBy by = rankBy();
    for (Workload w : results.settings().workloads()) {
      String name = w.name();
      long reads = 0;
      long steps = 0;
      List<Ranked> ranked = new ArrayList<>();
      for (TreePattern p : results.measured()) {
        List<Measurement> ms = acrossShapes(p, name, size);
        List<List<Double>> samples = new ArrayList<>();
        for (Measurement m : ms) {
          reads += m.work().reads();
          steps += m.work().steps();
          if (!m.failed()) {
            samples.add(m.latency().samplesMicros());
          }
        }
        double micros = latency(p, name, size);
        double[] ci = Double.isNaN(micros) ? new double[] {Double.NaN, Double.NaN}
            : Stats.bootstrapInterval(samples, results.settings().seed() * 31 + p.ordinal(),
                Measurement.BOOTSTRAP_ROUNDS);
        // A percentile interval may miss a skewed point estimate: it always holds it here.
        ranked.add(new Ranked(p, 0, micros, Math.min(ci[0], micros), Math.max(ci[1], micros),
            Double.NaN,
            mean(p, name, size, row -> row.traffic().roundTrips()),
            mean(p, name, size, row -> row.traffic().docsWritten()),
            mean(p, name, size, row -> row.traffic().docsReturned()), ""));
      }
      if (ranked.isEmpty()) {
        continue;
      }
      int[] ranks = new int[ranked.size()];
      for (int i = 0; i < ranked.size(); i++) {
        ranks[i] = 1;
        for (Ranked other : ranked) {
          if (above(other, ranked.get(i), by)) {
            ranks[i]++;
          }
        }
        ranked.set(i, ranked.get(i).withReason(ranks[i], Double.NaN, ""));
      }
      ranked.sort(Comparator.comparingInt(Ranked::rank).thenComparingDouble(
          (Ranked r) -> Double.isNaN(r.micros()) ? Double.MAX_VALUE
              : by == Settings.RankBy.TIME ? r.micros() : r.roundTrips() + r.docsWritten()));
      double fastest = ranked.stream().mapToDouble(Ranked::micros).filter(v -> !Double.isNaN(v))
          .min().orElse(Double.NaN);
      List<Ranked> withReasons = new ArrayList<>();
      for (int i = 0; i < ranked.size(); i++) {
        Ranked r = ranked.get(i);
        Ranked reference = i == 0 ? (ranked.size() > 1 ? ranked.get(1) : null) : ranked.get(0);
        withReasons.add(r.withReason(r.rank(), r.micros() / fastest,
            reason(r, reference, i == 0, size, by)));
      }
      boolean exact = results.measurements().stream()
          .filter(m -> m.key().name().equals(name) && !m.failed())
          .allMatch(m -> 100L * m.work().reads() == (long) w.readPercent() * m.work().steps());
      out.add(new Recommendation(w, size, by, reads, steps, exact, withReasons));
    }
    return out;
  }

  /**
   * Whether {@code a} ranks above {@code b}: by time, when its whole interval lies below b's; by
   * counts, when it needs clearly fewer round trips or documents written ({@link #fewer}) and not
   * clearly more of the other. A failed pattern ranks below every other.
   */
  static boolean above(Ranked a, Ranked b, Settings.RankBy by) {
    if (Double.isNaN(a.micros()) || Double.isNaN(b.micros())) {
      return !Double.isNaN(a.micros()) && Double.isNaN(b.micros());
    }
    if (by == Settings.RankBy.TIME) {
      return a.microsHigh() < b.microsLow();
    }
    boolean fewerTrips = fewer(a.roundTrips(), b.roundTrips());
    boolean fewerWritten = fewer(a.docsWritten(), b.docsWritten());
    return (fewerTrips || fewerWritten) && !fewer(b.roundTrips(), a.roundTrips())
        && !fewer(b.docsWritten(), a.docsWritten());
  }

  /**
   * Whether count {@code x} is clearly below {@code y}: by more than {@link #COUNT_TIE} and by
   * more than {@link #COUNT_MARGIN} per operation (so that 0.2 and 0.3 documents written, or 1.6
   * and 1.8, are the same).
   */
  static boolean fewer(double x, double y) {
    return x * COUNT_TIE < y && y - x > COUNT_MARGIN;
  }

  /** The counters a reason may cite, with their wording. */
  private static final String[] COUNTERS = {"round trips", "documents written",
      "documents returned"};

  private static double[] counters(Ranked r) {
    return new double[] {r.roundTrips(), r.docsWritten(), r.docsReturned()};
  }

  /**
   * The reason line: for the first pattern, the count in which it beats the runner-up most; for
   * the others, the count in which they lose most to the first; for a pattern tied with the
   * first, the counts of both. A count is cited when it differs clearly ({@link #fewer});
   * otherwise the line says the counts are close.
   */
  static String reason(Ranked r, Ranked reference, boolean best, int size,
      Settings.RankBy by) {
    String name = Names.of(r.pattern());
    String at = " per op at " + Format.count(size) + " nodes";
    if (Double.isNaN(r.micros())) {
      return name + ": failed on at least one shape (see the warnings)";
    }
    if (reference == null) {
      return name + ": the only pattern measured";
    }
    String other = Names.of(reference.pattern());
    String counts = " (" + Format.number(r.roundTrips()) + " vs "
        + Format.number(reference.roundTrips()) + " round trips, "
        + Format.number(r.docsWritten()) + " vs " + Format.number(reference.docsWritten())
        + " documents written" + at + ")";
    double[] mine = counters(r);
    double[] theirs = counters(reference);
    int pick = -1;
    double strongest = 1;
    for (int k = 0; k < mine.length; k++) {
      double ratio = best ? (theirs[k] + COUNT_FLOOR) / (mine[k] + COUNT_FLOOR)
          : (mine[k] + COUNT_FLOOR) / (theirs[k] + COUNT_FLOOR);
      boolean clear = best ? fewer(mine[k], theirs[k]) : fewer(theirs[k], mine[k]);
      if (clear && ratio > strongest) {
        strongest = ratio;
        pick = k;
      }
    }
    if (r.rank() == reference.rank() && by == Settings.RankBy.TIME) {
      return name + ": tied with " + other + " on time (their intervals overlap)" + counts;
    }
    if (r.rank() == reference.rank() && pick >= 0) {
      return name + ": tied with " + other + ", trading one count for the other" + counts;
    }
    if (pick < 0) {
      return name + ": counts close to " + other + counts
          + (by == Settings.RankBy.TIME ? ": the difference is time per query" : "");
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
