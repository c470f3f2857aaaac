package dev.arbor.bench;

import java.util.Arrays;
import java.util.List;

/** Order statistics and the growth fit. */
final class Stats {
  private Stats() {}

  /** The median; the mean of the two middle values for an even count; NaN if empty. */
  static double median(List<Long> samples) {
    if (samples.isEmpty()) {
      return Double.NaN;
    }
    long[] s = sorted(samples);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
  }

  /** The smallest sample; NaN if empty. */
  static double min(List<Long> samples) {
    return samples.isEmpty() ? Double.NaN : sorted(samples)[0];
  }

  /**
   * The 95th percentile by nearest rank: the smallest sample with at least 95% of the samples at or
   * below it (with fewer than 20 samples, the largest); NaN if empty.
   */
  static double p95(List<Long> samples) {
    if (samples.isEmpty()) {
      return Double.NaN;
    }
    long[] s = sorted(samples);
    int rank = (int) Math.ceil(0.95 * s.length);
    return s[Math.max(0, rank - 1)];
  }

  private static long[] sorted(List<Long> samples) {
    long[] s = new long[samples.size()];
    for (int i = 0; i < s.length; i++) {
      s[i] = samples.get(i);
    }
    Arrays.sort(s);
    return s;
  }

  /**
   * A 95% percentile-bootstrap interval of the geometric mean, over groups, of each group's
   * median: the samples of each group are drawn again with replacement {@code rounds} times. With
   * one group, an interval of its median. Deterministic for a seed.
   *
   * @param groups the samples of each group (a shape's timed invocations), all non-empty
   * @return {low, high}; NaNs if there is no group
   */
  static double[] bootstrapInterval(List<List<Double>> groups, long seed, int rounds) {
    if (groups.isEmpty()) {
      return new double[] {Double.NaN, Double.NaN};
    }
    java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
    double[] estimates = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      double logs = 0;
      for (List<Double> g : groups) {
        double[] drawn = new double[g.size()];
        for (int i = 0; i < drawn.length; i++) {
          drawn[i] = g.get(random.nextInt(g.size()));
        }
        Arrays.sort(drawn);
        int n = drawn.length;
        double median = n % 2 == 1 ? drawn[n / 2] : (drawn[n / 2 - 1] + drawn[n / 2]) / 2;
        logs += Math.log(Math.max(median, 1e-3));
      }
      estimates[r] = Math.exp(logs / groups.size());
    }
    Arrays.sort(estimates);
    return new double[] {estimates[(int) Math.floor(0.025 * (rounds - 1))],
        estimates[(int) Math.ceil(0.975 * (rounds - 1))]};
  }

  /**
   * The exponent b of the least-squares fit {@code y = a x^b} (a line through {@code log x, log
   * y}): 0 is constant, 1 linear, 2 quadratic. NaN with fewer than two distinct x or any
   * non-positive value.
   */
  static double exponent(double[] x, double[] y) {
    int n = x.length;
    if (n < 2 || y.length != n) {
      return Double.NaN;
    }
    double sx = 0;
    double sy = 0;
    for (int i = 0; i < n; i++) {
      if (!(x[i] > 0) || !(y[i] > 0)) {
        return Double.NaN;
      }
      sx += Math.log(x[i]);
      sy += Math.log(y[i]);
    }
    double mx = sx / n;
    double my = sy / n;
    double sxx = 0;
    double sxy = 0;
    for (int i = 0; i < n; i++) {
      double dx = Math.log(x[i]) - mx;
      sxx += dx * dx;
      sxy += dx * (Math.log(y[i]) - my);
    }
    return sxx == 0 ? Double.NaN : sxy / sxx;
  }
}
