package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    Analysis.Ranked best = new Analysis.Ranked(TreePattern.MATERIALIZED_PATHS, 300, 1, 1.5, 0.2,
        10, "");
    Analysis.Ranked nested = new Analysis.Ranked(TreePattern.NESTED_SETS, 3_000, 10, 1.8, 500,
        12, "");
    assertEquals("nested-sets: 500 documents written per op at 10 000 nodes, vs 0.2 for"
        + " materialized-paths; 1.8 round trips", Analysis.reason(nested, best, false, 10_000));
    Analysis.Ranked walker = new Analysis.Ranked(TreePattern.PARENT_REFERENCES, 600, 2, 9, 0.2,
        10, "");
    assertEquals("materialized-paths: 1.5 round trips per op at 10 000 nodes, vs 9 for the"
        + " runner-up parent-references", Analysis.reason(best, walker, true, 10_000));
    Analysis.Ranked close = new Analysis.Ranked(TreePattern.ARRAY_OF_ANCESTORS, 400, 1.3, 1.4,
        0.2, 11, "");
    assertTrue(Analysis.reason(close, best, false, 1_000).endsWith("loses on time per query"));
  }

  @Test
  void marginsReadAsTiesPercentagesOrFactors() {
    assertEquals("best", ranked(1.0).margin());
    assertEquals("+5% (tie)", ranked(1.05).margin());
    assertEquals("+73%", ranked(1.73).margin());
    assertEquals("3.40x", ranked(3.4).margin());
  }

  private static Analysis.Ranked ranked(double vsBest) {
    return new Analysis.Ranked(TreePattern.NESTED_SETS, 1, vsBest, 0, 0, 0, "");
  }
}
