package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.TreePattern;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ScopeBench} ({@code arbor scope}) runs both configurations and counts what its writers
 * did.
 */
class ScopeBenchTest {
  @Test
  void measuresTheBaselineOneTreeAndATreePerWriter() throws Exception {
    List<ScopeBench.Figures> told = new java.util.ArrayList<>();
    List<ScopeBench.Figures> figures = ScopeBench.run(List.of(TreePattern.PARENT_REFERENCES),
        0.2, 0.5, 2, 30, null, told::add);
    assertEquals(4, figures.size());
    assertEquals(figures, told); // each as it ended
    for (ScopeBench.Figures f : figures) {
      assertTrue(f.seconds() >= 0.5 && f.seconds() < 0.7 + 2, f.toString()); // measured only
    }
    assertEquals(List.of(ScopeBench.Layout.values()), figures.stream()
        .map(ScopeBench.Figures::layout).toList());
    assertEquals(List.of(1, 1, 1, 2), figures.stream().map(ScopeBench.Figures::trees).toList());
    assertEquals(List.of(1, 2, 2, 2), figures.stream().map(ScopeBench.Figures::writers)
        .toList());
    for (ScopeBench.Figures f : figures) {
      assertTrue(f.changes() > 0 && f.changes() % 3 == 0, f.toString());
      assertEquals(0, f.failures(), f.toString());
      assertTrue(f.treesIntact(), f.toString());
      assertTrue(f.toString().contains("changes/s"), f.toString());
    }
    assertTrue(ScopeBench.disjointOverSeparate(figures, TreePattern.PARENT_REFERENCES) > 0);
  }

  @Test
  void theHelpNamesEveryOptionAndAnUnknownPatternIsOneLine() {
    ScaleBenchTest.Cli help = ScaleBenchTest.Cli.run("scope", "--help");
    assertEquals(0, help.exit(), help.err());
    for (String option : List.of("--patterns", "--seconds", "--warmup", "--writers", "--nodes",
        "--uri")) {
      assertTrue(help.out().contains(option + "="), option + " in\n" + help.out());
    }
    ScaleBenchTest.Cli bad = ScaleBenchTest.Cli.run("scope", "--patterns", "trees");
    assertEquals(2, bad.exit(), bad.err());
    assertTrue(bad.err().strip().startsWith("arbor scope: unknown pattern 'trees' (valid: "),
        bad.err());
    assertEquals(1, bad.err().strip().lines().count(), bad.err());
    ScaleBenchTest.Cli negative = ScaleBenchTest.Cli.run("scope", "--warmup", "-1");
    assertEquals(2, negative.exit(), negative.err());
    assertEquals("arbor scope: --writers and --nodes must be at least 1, --seconds positive and"
        + " --warmup at least 0", negative.err().strip());
  }

  /**
   * A short run on the embedded server prints each configuration and the ratio on stdout, and
   * says on stderr what bounds its figures there.
   */
  @Test
  void aRunOnTheEmbeddedServerSaysWhatBoundsItsFigures() {
    ScaleBenchTest.Cli r = ScaleBenchTest.Cli.run("scope", "--patterns", "parent-references",
        "--seconds", "0.2", "--warmup", "0", "--writers", "2", "--nodes", "5", "--uri", "");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("parent-references  disjoint subtrees / separate trees: "),
        r.out());
    assertEquals(4, r.out().lines().filter(l -> l.contains("changes/s")).count(), r.out());
    assertEquals(ScopeCommand.EMBEDDED_NOTE, r.err().strip());
  }

  @Test
  void aServerThatCannotBeReachedIsOneLineAndExitStatusOne() {
    for (String command : List.of("scope", "scale")) {
      ScaleBenchTest.Cli r = ScaleBenchTest.Cli.run(command, "--uri",
          "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300");
      assertEquals(1, r.exit(), r.err());
      assertEquals("arbor " + command + ": cannot reach MongoDB at 127.0.0.1:1: no server"
          + " answered within 0.3 s", r.err().strip());
    }
  }
}
