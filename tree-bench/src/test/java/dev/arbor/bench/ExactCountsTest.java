package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.TreePattern;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The counts that are exact by design, measured by the runner on the embedded server: they hold on
 * any server, so they are asserted; timings never are.
 */
class ExactCountsTest {
  private static final int SMALL = 100;
  private static final int LARGE = 1_000;

  private static Server server;
  private static Results results;

  @BeforeAll
  static void measure() {
    server = Server.start(BenchEndToEndTest.testServerUri());
    Settings settings = new Settings(null, List.of(TreePattern.values()),
        List.of(Shape.WIDE, Shape.BALANCED), List.of(SMALL, LARGE),
        List.of(Operation.ANCESTORS, Operation.CHILDREN, Operation.MOVE_LEAF,
            Operation.MOVE_SUBTREE, Operation.DELETE_SUBTREE, Operation.INSERT_LEAF),
        List.of(), 1, 0, 42, Path.of("unused"), 30, true, false, Settings.RankBy.AUTO);
    results = new Runner(settings, server, new PrintWriter(new StringWriter())).run();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Measurement get(TreePattern p, Shape shape, int size, Operation op) {
    Measurement m = results.find(p, shape, size, Names.of(op));
    assertNotNull(m, () -> "no measurement of " + p + " " + shape + " " + size + " " + op);
    assertTrue(m.note().isEmpty(), () -> m.toString());
    return m;
  }

  @Test
  void everyMeasurementSucceeded() {
    assertTrue(results.warnings().isEmpty(), results.warnings().toString());
    assertEquals(5 * 2 * 2 * 6, results.measurements().size());
    for (Measurement m : results.measurements()) {
      assertTrue(m.traffic().lockRoundTrips() <= m.traffic().roundTrips()
          && m.traffic().lockDocsWritten() <= m.traffic().docsWritten(),
          m::toString);
    }
  }

  @Test
  void ancestorsArePointReadsOnPathsAndArrays() {
    for (int size : List.of(SMALL, LARGE)) {
      for (Shape shape : List.of(Shape.WIDE, Shape.BALANCED)) {
        assertEquals(1, ownRoundTrips(TreePattern.MATERIALIZED_PATHS, shape, size,
            Operation.ANCESTORS));
        assertEquals(1, ownRoundTrips(TreePattern.ARRAY_OF_ANCESTORS, shape, size,
            Operation.ANCESTORS));
        assertEquals(2, ownRoundTrips(TreePattern.NESTED_SETS, shape, size,
            Operation.ANCESTORS));
      }
    }
  }

  @Test
  void isolatedReadsCheckTheLockOnceAndWriteNothing() {
    for (TreePattern p : TreePattern.values()) {
      for (Operation read : List.of(Operation.ANCESTORS, Operation.CHILDREN)) {
        Measurement m = get(p, Shape.BALANCED, LARGE, read);
        // A read by _id alone reads the lock document in the same query; any other read checks
        // it once after its queries (the quiet version seen before is the store's last one).
        boolean folded = read == Operation.ANCESTORS && (p == TreePattern.ARRAY_OF_ANCESTORS
            || p == TreePattern.MATERIALIZED_PATHS)
            || read == Operation.CHILDREN && p == TreePattern.CHILD_REFERENCES;
        assertEquals(folded ? 0 : 1, m.traffic().lockRoundTrips(), p + " " + read);
        assertEquals(0, m.traffic().lockDocsWritten(), p + " " + read);
        assertEquals(0, m.traffic().docsWritten(), p + " " + read);
      }
    }
    assertEquals(1, get(TreePattern.ARRAY_OF_ANCESTORS, Shape.BALANCED, LARGE,
        Operation.ANCESTORS).traffic().roundTrips(),
        "an ancestors read on the array of ancestors, in all");
  }

  /** The round trips of the pattern's own queries, without the lock protocol's. */
  private static double ownRoundTrips(TreePattern p, Shape shape, int size, Operation op) {
    Measurement m = get(p, shape, size, op);
    return m.traffic().roundTrips() - m.traffic().lockRoundTrips();
  }

  @Test
  void aMoveCostsTheSameRoundTripsAtAHundredAndAThousandNodes() {
    // On the wide shape the move targets sit at the same depth at both sizes, so even the
    // patterns whose cycle check walks up from the target must not grow.
    for (TreePattern p : TreePattern.values()) {
      for (Operation move : List.of(Operation.MOVE_LEAF, Operation.MOVE_SUBTREE)) {
        double small = get(p, Shape.WIDE, SMALL, move).traffic().roundTrips();
        double large = get(p, Shape.WIDE, LARGE, move).traffic().roundTrips();
        assertEquals(small, large, p + " " + move + ": round trips at " + SMALL + " vs " + LARGE);
        assertTrue(get(p, Shape.WIDE, LARGE, move).traffic().lockDocsWritten() >= 2,
            p + " takes and frees the lock for a move");
      }
    }
  }

  @Test
  void aReadReturnsWhatTheBaselineFindsAndEveryReadIsCounted() {
    for (TreePattern p : TreePattern.values()) {
      Measurement children = get(p, Shape.BALANCED, LARGE, Operation.CHILDREN);
      assertEquals(Shape.FAN_OUT, children.work().resultSize(), p.toString());
      assertNotNull(children.baseline().medianMicros(), p.toString());
      assertTrue(children.traffic().docsReturned() >= (p == TreePattern.CHILD_REFERENCES ? 1
          : Shape.FAN_OUT), p + " children returned " + children.traffic().docsReturned());
    }
  }

  @Test
  void writesTouchWhatEachPatternSays() {
    for (int size : List.of(SMALL, LARGE)) {
      // A move rewrites one node document with parent references whatever the subtree.
      assertEquals(1, nodesWritten(TreePattern.PARENT_REFERENCES, Shape.BALANCED, size,
          Operation.MOVE_SUBTREE));
      // A subtree delete removes exactly the subtree on the array of ancestors.
      Measurement delete = get(TreePattern.ARRAY_OF_ANCESTORS, Shape.BALANCED, size,
          Operation.DELETE_SUBTREE);
      assertEquals(delete.work().subjectSize(),
          delete.traffic().docsWritten() - delete.traffic().lockDocsWritten());
      assertEquals(delete.work().subjectSize(), delete.work().resultSize());
      // An insert writes one node document, except with nested sets.
      assertEquals(1, nodesWritten(TreePattern.MATERIALIZED_PATHS, Shape.BALANCED, size,
          Operation.INSERT_LEAF));
    }
    // Nested sets renumber the nodes to the right of an insert: the count grows with the tree.
    assertTrue(nodesWritten(TreePattern.NESTED_SETS, Shape.BALANCED, LARGE, Operation.INSERT_LEAF)
        > 5 * nodesWritten(TreePattern.NESTED_SETS, Shape.BALANCED, SMALL, Operation.INSERT_LEAF));
  }

  /** The node documents an operation wrote, without the lock and journal documents. */
  private static double nodesWritten(TreePattern p, Shape shape, int size, Operation op) {
    Measurement m = get(p, shape, size, op);
    return m.traffic().docsWritten() - m.traffic().lockDocsWritten();
  }
}
