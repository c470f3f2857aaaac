package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.cli.Arbor;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.TreePattern;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@link ScaleBench} ({@code arbor scale}) end to end at tiny sizes (a client JVM per pattern,
 * the embedded server in a JVM of its own): the structure of its output and the counts that do not
 * depend on the machine, never a timing.
 */
class ScaleBenchTest {
  static final List<Integer> SIZES = List.of(60, 300);

  @Test
  void theGeneratedTreeIsAPreorderOfDistinctIdsWithBoundedFanOutAndLogDepth() {
    int n = 5_000;
    Set<String> ids = new HashSet<>();
    int maxDepth = 0;
    List<Node> all = new ArrayList<>();
    for (Iterator<Node> it = ScaleTree.generate(n); it.hasNext(); ) {
      Node e = it.next();
      assertTrue(ids.add(e.id()), e.id());
      assertEquals(ScaleTree.depth(Long.parseLong(e.id().substring(1))), e.depth());
      maxDepth = Math.max(maxDepth, e.depth());
      all.add(e);
    }
    assertEquals(n, ids.size());
    assertEquals(5, maxDepth); // log8(5 000) = 4.1
    // In preorder: the collected tree gives the same entries back, in the same order.
    Tree.Builder b = Tree.builder();
    for (Node e : all) {
      b.add(e.id(), e.parentId(), e.attributes());
    }
    Tree tree = b.build();
    assertEquals(all, tree.entries());
    assertEquals(ScaleTree.FAN_OUT, tree.children(ScaleTree.id(ScaleTree.childrenTarget(n)))
        .size());
    assertEquals(ScaleTree.subtreeSize(0, n), n);
    // node 1: itself, 8 children, 64, 512, and 319 of the 5th level (n4681 to n4999)
    assertEquals(1 + 8 + 64 + 512 + 319, ScaleTree.subtreeSize(1, 5_000));
  }

  @Test
  void runsEveryPatternAtEverySizeWithMachineIndependentCounts() throws Exception {
    ScaleBench.Settings s = ScaleBench.Settings.defaults(List.of(Arbor.class.getName(), "scale"))
        .withSizes(SIZES).withRepeat(2)
        .withClasspath(System.getProperty("surefire.test.class.path",
            System.getProperty("java.class.path")));
    StringWriter bytes = new StringWriter();
    ScaleBench.Results r;
    try (PrintWriter out = new PrintWriter(bytes, true)) {
      r = ScaleLauncher.run(s, out);
    }
    String progress = bytes.toString();
    assertEquals(List.of(), List.copyOf(r.failures.values()), progress);
    for (TreePattern p : TreePattern.values()) {
      for (int n : SIZES) {
        for (String op : ScaleBench.OPS) {
          ScaleBench.Figure f = r.figure(p, n, op);
          assertNotNull(f, p + " " + op + " at " + n + ":\n" + progress);
          assertNull(f.skipped(), f.toString());
          assertTrue(f.millis() > 0 && f.roundTrips() > 0, f.toString());
          assertTrue(progress.contains(Names.of(p) + " " + String.format("%,d", n) + ": "
              + op), progress);
        }
        assertEquals(n, r.figure(p, n, "firstLoad").count());
        assertEquals(n, r.figure(p, n, "load").count());
        // every node and the lock document, copied raw
        assertTrue(r.figure(p, n, "insertMany").count() > n, r.figure(p, n, "insertMany")
            .toString());
        assertEquals(n, r.figure(p, n, "entries").count());
        assertEquals(ScaleTree.FAN_OUT, r.figure(p, n, "children").count());
        assertEquals(ScaleTree.depth(n - 1), r.figure(p, n, "ancestors").count());
        assertEquals(ScaleTree.subtreeSize(ScaleTree.descendantsTarget(n), n) - 1,
            r.figure(p, n, "descendants").count());
        assertEquals(1, r.figure(p, n, "insert").count());
        assertEquals(1, r.figure(p, n, "move").count());
        assertEquals(1, r.figure(p, n, "delete").count());
        long heap = r.heap.get(p).get(n);
        assertTrue(heap > 0 && heap < 256L << 20, "peak heap " + heap);
        long live = r.live.get(p).get(n);
        assertTrue(live > 0 && live <= heap, "live heap " + live + ", peak " + heap);
      }
      // Reads whose round trips the pattern keeps flat: the same count at both sizes.
      for (String op : List.of("children", "descendants", "insert", "move", "delete")) {
        assertEquals(r.figure(p, SIZES.get(0), op).roundTrips(),
            r.figure(p, SIZES.get(1), op).roundTrips(), p + " " + op);
      }
      if (p == TreePattern.ARRAY_OF_ANCESTORS || p == TreePattern.MATERIALIZED_PATHS
          || p == TreePattern.NESTED_SETS) {
        assertEquals(0.0, r.exponent(p, "ancestors", true), p.toString());
        assertEquals(r.figure(p, SIZES.get(0), "ancestors").roundTrips(),
            r.figure(p, SIZES.get(1), "ancestors").roundTrips(), p.toString());
      }
      assertTrue(r.patternMillis.get(p) > 0);
    }
    assertTrue(r.totalMillis > 0);
    // --repeat 2: two pairs of raw inserts and loads, side by side, the ratio a median of pairs
    for (TreePattern p : TreePattern.values()) {
      for (int n : SIZES) {
        double ratio = r.loadRatio(p, n);
        assertTrue(ratio > 0 && ratio == r.ratios.get(p).get(n), p + " " + n + ": " + ratio);
      }
    }
    // --repeat 2: two pairs of raw inserts and loads, alternating, each reported as a median
    for (String op : List.of("load", "insertMany")) {
      assertEquals(TreePattern.values().length * SIZES.size(), progress.lines()
          .filter(l -> l.matches(".*: " + op + " +[0-9.]+ ms \\(median of [0-9]+, [0-9]+ ms\\).*"))
          .count(), progress);
    }

    String md = ScaleReport.markdown(s, r);
    assertTrue(md.startsWith("arbor scale: sizes [60, 300], client -Xmx256m, repeat 2;"
        + " total run time "), md);
    assertTrue(md.contains("| pattern | load / insertMany at 60 / 300 | client heap at 60: peak"
        + " / live | at 300: peak / live | load time at 300 | run time |"), md);
    for (TreePattern p : TreePattern.values()) {
      assertTrue(md.contains("| " + Names.of(p) + " | "), md);
    }
    assertTrue(md.contains("Growth exponent of time per operation from 60 to 300"), md);
    assertTrue(md.contains("Growth exponent of round trips per operation from 60 to 300"), md);
    assertTrue(md.contains("| nested-sets | 300 | "), md);
    assertFalse(md.contains("skipped") || md.contains("Failed"), md);
  }

  @Test
  void theGrowthExponentIsTheLeastSquaresSlopeOfLogs() {
    assertEquals(1.0, ScaleBench.slope(List.of(new double[] {1_000, 5},
        new double[] {10_000, 50}, new double[] {1_000_000, 5_000})), 1e-9);
    assertEquals(0.0, ScaleBench.slope(List.of(new double[] {1_000, 3},
        new double[] {1_000_000, 3})), 1e-9);
    assertEquals(2.0, ScaleBench.slope(List.of(new double[] {10, 1},
        new double[] {100, 100})), 1e-9);
    assertTrue(Double.isNaN(ScaleBench.slope(List.of(new double[] {10, 1}))));
  }

  @Test
  void theHelpNamesEveryOptionAndAnUnknownValueIsOneLine() {
    Cli help = Cli.run("scale", "--help");
    assertEquals(0, help.exit(), help.err());
    for (String option : List.of("--patterns", "--sizes", "--ops", "--repeat", "--client-heap",
        "--limit-seconds", "--uri", "--markdown")) {
      assertTrue(help.out().contains(option + "="), option + " in\n" + help.out());
    }
    assertFalse(help.out().contains("Commands:"), "the client subcommand is hidden");
    Cli bad = Cli.run("scale", "--ops", "children,teleport");
    assertEquals(2, bad.exit(), bad.err());
    assertEquals("arbor scale: unknown operation 'teleport' (valid: load, insertMany, entries,"
        + " children, ancestors, descendants, insert, move, delete; the load always runs)",
        bad.err().strip());
  }

  @Test
  void optionsAreParsed() {
    ScaleCommand command = new ScaleCommand();
    new CommandLine(command).parseArgs("--patterns", "nested-sets,materialized-paths",
        "--sizes", "1k,2M", "--repeat", "4", "--client-heap", "128m", "--ops", "delete,children");
    ScaleBench.Settings s = command.settings();
    assertEquals(List.of(TreePattern.MATERIALIZED_PATHS, TreePattern.NESTED_SETS),
        s.patterns());
    assertEquals(List.of(1_000, 2_000_000), s.sizes());
    assertEquals(4, s.repeat());
    assertEquals("128m", s.clientHeap());
    assertEquals(List.of("load", "children", "insert", "move", "delete"), s.ops()); // a leaf's life
    assertFalse(s.inProcessServer()); // the server in a JVM of its own by default
    assertEquals("10g", s.serverHeap());
    ScaleCommand inProcess = new ScaleCommand();
    new CommandLine(inProcess).parseArgs("--in-process-server", "--server-heap", "4g");
    assertTrue(inProcess.settings().inProcessServer());
    assertEquals("4g", inProcess.settings().serverHeap());
    ScaleCommand bad = new ScaleCommand();
    new CommandLine(bad).parseArgs("--server-heap", "lots");
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, bad::settings);
    assertEquals("--server-heap must be a size as -Xmx takes it (256m, 10g), got 'lots'",
        e.getMessage());
  }

  /** {@code arbor args} in this JVM: its exit code, stdout and stderr. */
  record Cli(int exit, String out, String err) {
    static Cli run(String... args) {
      java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      int exit = Arbor.commandLine(new java.io.ByteArrayInputStream(new byte[0]), out, err)
          .execute(args);
      return new Cli(exit, out.toString(StandardCharsets.UTF_8),
          err.toString(StandardCharsets.UTF_8));
    }
  }
}
