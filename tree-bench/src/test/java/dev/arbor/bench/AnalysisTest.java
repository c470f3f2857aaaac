package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.TreePattern;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Order statistics, the growth fit and the wording of reasons. */
class AnalysisTest {

  @Test
  void medianAndNearestRankP95() {
    assertEquals(3, Stats.median(List.of(5L, 1L, 3L)));
    assertEquals(2.5, Stats.median(List.of(4L, 1L, 3L, 2L)));
    assertEquals(5, Stats.p95(List.of(5L, 1L, 3L)));
    List<Long> hundred = new java.util.ArrayList<>();
    for (long i = 1; i <= 100; i++) {
      hundred.add(i);
    }
    assertEquals(95, Stats.p95(hundred));
    assertTrue(Double.isNaN(Stats.median(List.of())));
  }

  @Test
  void exponentOfPowerLaws() {
    double[] x = {100, 1_000, 10_000};
    assertEquals(1.0, Stats.exponent(x, new double[] {3, 30, 300}), 1e-9);
    assertEquals(0.0, Stats.exponent(x, new double[] {7, 7, 7}), 1e-9);
    assertEquals(2.0, Stats.exponent(x, new double[] {1, 100, 10_000}), 1e-9);
    assertEquals(0.5, Stats.exponent(new double[] {100, 10_000}, new double[] {10, 100}), 1e-9);
    assertTrue(Double.isNaN(Stats.exponent(x, new double[] {0, 1, 2})));
    assertTrue(Double.isNaN(Stats.exponent(new double[] {100}, new double[] {1})));
  }

  @Test
  void aReasonCitesTheCountThatSeparatesThePatterns() {
    Analysis.Ranked best = ranked(TreePattern.MATERIALIZED_PATHS, 300, 1.5, 0.2);
    Analysis.Ranked nested = ranked(TreePattern.NESTED_SETS, 3_000, 1.8, 500).withReason(2, 1,
        "");
    assertEquals("nested-sets: 500 documents written per op at 10 000 nodes, vs 0.2 for"
        + " materialized-paths; 1.8 round trips",
            Analysis.reason(nested, best, false, 10_000, Settings.RankBy.COUNTS));
    Analysis.Ranked walker = ranked(TreePattern.PARENT_REFERENCES, 600, 9, 0.2).withReason(2, 1,
        "");
    assertEquals("materialized-paths: 1.5 round trips per op at 10 000 nodes, vs 9 for the"
        + " runner-up parent-references",
            Analysis.reason(best, walker, true, 10_000, Settings.RankBy.COUNTS));
    Analysis.Ranked close = ranked(TreePattern.ARRAY_OF_ANCESTORS, 400, 1.4, 0.2);
    assertEquals("array-of-ancestors: tied with materialized-paths on time (their intervals"
        + " overlap) (1.4 vs 1.5 round trips, 0.2 vs 0.2 documents written per op at 1 000 nodes)",
        Analysis.reason(close, best, false, 1_000, Settings.RankBy.TIME));
    Analysis.Ranked trading = ranked(TreePattern.PARENT_REFERENCES, 400, 15.4, 2.4);
    Analysis.Ranked paths = ranked(TreePattern.MATERIALIZED_PATHS, 400, 5.4, 4.4);
    assertEquals("parent-references: tied with materialized-paths, trading one count for the"
        + " other (15.4 vs 5.4 round trips, 2.4 vs 4.4 documents written per op at 1 000 nodes)",
        Analysis.reason(trading, paths, false, 1_000, Settings.RankBy.COUNTS));
    assertEquals("array-of-ancestors: counts close to materialized-paths (1.4 vs 1.5 round"
        + " trips, 0.2 vs 0.2 documents written per op at 1 000 nodes)",
        Analysis.reason(close, best, false, 1_000, Settings.RankBy.COUNTS));
  }

  @Test
  void byTimeAPatternRanksAboveAnotherOnlyWhenTheirIntervalsDoNotOverlap() {
    Analysis.Ranked fast = interval(TreePattern.MATERIALIZED_PATHS, 100, 90, 110);
    Analysis.Ranked overlapping = interval(TreePattern.ARRAY_OF_ANCESTORS, 120, 105, 140);
    Analysis.Ranked slow = interval(TreePattern.NESTED_SETS, 300, 250, 350);
    Analysis.Ranked failed = interval(TreePattern.CHILD_REFERENCES, Double.NaN, Double.NaN,
        Double.NaN);
    Settings.RankBy time = Settings.RankBy.TIME;
    assertFalse(Analysis.above(fast, overlapping, time));
    assertFalse(Analysis.above(overlapping, fast, time));
    assertTrue(Analysis.above(fast, slow, time));
    assertTrue(Analysis.above(overlapping, slow, time));
    assertFalse(Analysis.above(slow, fast, time));
    assertTrue(Analysis.above(slow, failed, time));
    assertFalse(Analysis.above(failed, slow, time));
  }

  @Test
  void byCountsAPatternRanksAboveAnotherWhenItNeedsLessOfOneAndNotMoreOfTheOther() {
    Settings.RankBy counts = Settings.RankBy.COUNTS;
    Analysis.Ranked paths = ranked(TreePattern.MATERIALIZED_PATHS, 1, 4.4, 1.5);
    Analysis.Ranked ancestors = ranked(TreePattern.ARRAY_OF_ANCESTORS, 1, 4.0, 1.6);
    Analysis.Ranked parents = ranked(TreePattern.PARENT_REFERENCES, 1, 8.3, 1.5);
    Analysis.Ranked nested = ranked(TreePattern.NESTED_SETS, 1, 4.6, 553);
    assertFalse(Analysis.above(paths, ancestors, counts), "within 10% on both: a tie");
    assertFalse(Analysis.above(ancestors, paths, counts));
    assertTrue(Analysis.above(paths, parents, counts), "fewer round trips, as many written");
    assertTrue(Analysis.above(paths, nested, counts), "as many round trips, fewer written");
    assertFalse(Analysis.above(parents, nested, counts), "a trade: neither is above");
    assertFalse(Analysis.above(nested, parents, counts));
  }

  @Test
  void bootstrapIntervalsHoldTheMedianAndAreReproducible() {
    List<Double> samples = List.of(10.0, 11.0, 12.0, 13.0, 30.0);
    double[] ci = Stats.bootstrapInterval(List.of(samples), 42, 2_000);
    assertTrue(ci[0] <= 12 && 12 <= ci[1], java.util.Arrays.toString(ci));
    assertTrue(ci[0] >= 10 - 1e-9 && ci[1] <= 30 + 1e-9, java.util.Arrays.toString(ci));
    assertEquals(java.util.Arrays.toString(ci), java.util.Arrays.toString(
        Stats.bootstrapInterval(List.of(samples), 42, 2_000)));
    double[] constant = Stats.bootstrapInterval(List.of(List.of(5.0, 5.0), List.of(20.0)), 1,
        500);
    assertEquals(10.0, constant[0], 1e-9, "geometric mean of the medians 5 and 20");
    assertEquals(10.0, constant[1], 1e-9);
  }

  @Test
  void aWorkloadsRankingSharesRanksAndSaysSoInTheReport() {
    // Paths and ancestors overlap in time; nested sets are clearly slower and write much more.
    Results results = results(Settings.RankBy.TIME, List.of(
        workload(TreePattern.MATERIALIZED_PATHS, List.of(100.0, 104.0, 98.0, 101.0, 99.0), 4, 1.5),
        workload(TreePattern.ARRAY_OF_ANCESTORS, List.of(103.0, 99.0, 106.0, 101.0, 102.0), 4,
            1.6),
        workload(TreePattern.NESTED_SETS, List.of(900.0, 950.0, 920.0, 910.0, 930.0), 4.6, 553)));
    Analysis.Recommendation r = new Analysis(results).recommendations().get(0);
    assertEquals(List.of(1, 1, 3), r.ranking().stream().map(Analysis.Ranked::rank).toList());
    assertEquals(List.of(TreePattern.MATERIALIZED_PATHS, TreePattern.ARRAY_OF_ANCESTORS),
        r.best());
    assertEquals("balanced 50/50 (realised 50/50 in every measurement): materialized-paths and"
        + " array-of-ancestors (tied)", ReportRankings.decision(r));
    String table = ReportRankings.ranking(r).text();
    assertTrue(table.contains("=1    materialized-paths"), table);
    assertTrue(table.contains("3     nested-sets"), table);

    Results byCounts = results(Settings.RankBy.AUTO, results.measurements()); // embedded: counts
    Analysis.Recommendation c = new Analysis(byCounts).recommendations().get(0);
    assertEquals(Settings.RankBy.COUNTS, c.rankBy());
    assertEquals(List.of(1, 1, 3), c.ranking().stream().map(Analysis.Ranked::rank).toList());
  }

  private static Results results(Settings.RankBy by, List<Measurement> measurements) {
    Settings settings = new Settings(null, List.of(TreePattern.MATERIALIZED_PATHS,
        TreePattern.ARRAY_OF_ANCESTORS, TreePattern.NESTED_SETS), List.of(Shape.RANDOM),
        List.of(1_000), List.of(), List.of(Workload.BALANCED), 5, 1, 42,
        java.nio.file.Path.of("unused"), 1, true, false, by);
    return new Results(settings, java.time.Instant.EPOCH, 1, "embedded", "5.0", true, false,
        settings.patterns(), java.util.Map.of(), measurements, List.of());
  }

  /** A balanced-workload row: 20 operations, 10 reads, with these per-operation figures. */
  private static Measurement workload(TreePattern p, List<Double> samples, double roundTrips,
      double written) {
    double median = Stats.median(samples.stream().map(Math::round).toList());
    return new Measurement(
        new Measurement.Key(p, Shape.RANDOM, 1_000, Measurement.WORKLOAD, "balanced"),
        new Measurement.Work("", 20, 0, 20, 10),
        new Measurement.Latency(samples.size(), median, median, median, samples),
        new Measurement.Traffic(roundTrips, 5, written, 0, 0, 0, 0), Measurement.Explain.NONE,
        Measurement.Baseline.NONE, Measurement.Stored.UNKNOWN, "");
  }

  private static Analysis.Ranked ranked(TreePattern p, double micros, double roundTrips,
      double written) {
    return new Analysis.Ranked(p, 1, micros, micros, micros, 1, roundTrips, written, 10, "");
  }

  private static Analysis.Ranked interval(TreePattern p, double micros, double low,
      double high) {
    return new Analysis.Ranked(p, 1, micros, low, high, 1, 1, 1, 1, "");
  }
}
