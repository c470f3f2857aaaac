package dev.arbor.bench;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.cli.Arbor;
import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import dev.arbor.mongo.TreePattern;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code arbor bench --tree FILE} end to end, through the {@code arbor} command line, on the
 * embedded server (or the suite's server): a 25-node forest of known shape, every pattern,
 * operation and workload, one timed run each. Checks that the reports name the file and give its
 * shape, that every pattern has a row for every operation and workload on that tree, and that
 * files which cannot be measured and options that exclude {@code --tree} are refused in one line.
 * Asserts no timing.
 */
class BenchTreeTest {
  /** The shape of {@link #forest()}, as the report gives it. */
  private static final String SHAPE = "25 nodes, 2 roots, 17 leaves; depth max 3, mean 1.68"
      + " (roots at 0); fan-out max 4, mean 2.88 children per inner node";

  @TempDir
  static Path dir;
  static Path file;
  static Path out;
  static Outcome run;

  /** One run of the command line. */
  record Outcome(int exit, String stdout, String stderr) {
    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
    }
  }

  /**
   * Two roots: {@code r0} with 4 children {@code a0..a3} of 4 leaves each (21 nodes, depth 2),
   * and the chain {@code r1 > c1 > c2 > c3} (depth 3). Depths sum to 36 + 6 = 42; the 8 inner
   * nodes have 23 children.
   */
  static Tree forest() {
    Tree.Builder b = Tree.builder().add("r0", null, Map.of("title", "Root 0"));
    for (int i = 0; i < 4; i++) {
      b.add("a" + i, "r0", Map.of("title", "A " + i, "rank", i));
      for (int j = 0; j < 4; j++) {
        b.add("b" + i + j, "a" + i, Map.of("title", "B " + i + j, "tags", List.of("x", "y")));
      }
    }
    return b.add("r1", null).add("c1", "r1").add("c2", "c1").add("c3", "c2").build();
  }

  @BeforeAll
  static void runBench() throws Exception {
    file = dir.resolve("forest.json");
    try (OutputStream os = Files.newOutputStream(file)) {
      TreeJson.write(forest(), os);
    }
    out = dir.resolve("out");
    run = arbor("bench", "--uri", BenchEndToEndTest.testServerUri(), "--tree", file.toString(),
        "--repeat", "1", "--warmup", "0", "--out", out.toString());
  }

  static Outcome arbor(String... args) {
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    int exit = Arbor.commandLine(new ByteArrayInputStream(new byte[0]), stdout, stderr)
        .execute(args);
    return new Outcome(exit, stdout.toString(UTF_8), stderr.toString(UTF_8));
  }

  /** The names every pattern must have a row for: every operation, every built-in workload. */
  private static List<String> names() {
    List<String> names = new ArrayList<>();
    for (Operation op : Operation.values()) {
      names.add(Names.of(op));
    }
    for (Workload w : Workload.BUILT_IN) {
      names.add(w.name());
    }
    return names;
  }

  @Test
  void theConsoleNamesTheFileAndGivesItsShape() {
    assertEquals(0, run.exit(), run::toString);
    assertTrue(run.stdout().contains("== Arbor bench: 5 patterns x tree forest.json (25 nodes);"),
        run.stdout());
    assertTrue(run.stdout().replace('\n', ' ').contains("Tree: " + file + ", " + SHAPE + "."),
        run.stdout());
    assertTrue(run.stdout().contains("Decision:\n  browse 95/5 (realised 95/5 in every"
        + " measurement): "), run.stdout());
    assertFalse(run.stdout().contains("WARNING"), run.stdout());
    assertEquals("", run.stderr());
  }

  @Test
  void theReportsNameTheFileAndGiveItsShape() throws Exception {
    String md = Files.readString(out.resolve(Output.MARKDOWN));
    assertTrue(md.contains("\n\n5 patterns x tree forest.json (25 nodes); seed 42, "), md);
    assertTrue(md.contains("\n\nTree: " + file + ", " + SHAPE + ". Every pattern loads this tree"),
        md);
    assertTrue(md.contains("\n### forest.json (the tree of " + file + "), 25 nodes\n"), md);
    assertTrue(md.contains("- The tree is read from " + file + " (--tree)"), md);
    assertTrue(md.contains("One tree was measured (--tree)"), "no growth fit: " + md);
    String html = Files.readString(out.resolve(Output.HTML));
    assertTrue(html.contains("Tree: " + file + ", " + SHAPE), "the HTML report too");

    Document tree = Document.parse(Files.readString(out.resolve(Output.JSON)))
        .get("run", Document.class);
    assertEquals(List.of(25), tree.getList("sizes", Integer.class));
    assertEquals(List.of("forest.json"), tree.getList("shapes", String.class));
    assertEquals(new Document("file", file.toString()).append("nodes", 25).append("roots", 2)
        .append("leaves", 17).append("maxDepth", 3).append("meanDepth", 42 / 25.0)
        .append("maxFanOut", 4).append("meanFanOut", 23 / 8.0), tree.get("tree", Document.class));
  }

  @Test
  void everyPatternHasARowForEveryOperationAndWorkloadOnTheFilesTree() throws Exception {
    assertEquals(0, run.exit(), run::toString);
    List<String> lines = Files.readAllLines(out.resolve(Output.CSV));
    List<String> header = BenchEndToEndTest.Csv.parseLine(lines.get(0));
    Set<String> keys = new HashSet<>();
    Set<String> subjects = new HashSet<>();
    for (String line : lines.subList(1, lines.size())) {
      List<String> cells = BenchEndToEndTest.Csv.parseLine(line);
      String pattern = cells.get(header.indexOf("pattern"));
      String name = cells.get(header.indexOf("name"));
      assertEquals("forest.json", cells.get(header.indexOf("shape")), line);
      assertEquals("25", cells.get(header.indexOf("size")), line);
      assertEquals("", cells.get(header.indexOf("note")), line);
      assertTrue(Double.parseDouble(cells.get(header.indexOf("round_trips"))) >= 1, line);
      assertTrue(keys.add(pattern + "/" + name), "duplicate row " + line);
      if (pattern.equals("parent-references")) {
        subjects.add(name + ": " + cells.get(header.indexOf("subject")));
      }
    }
    Set<String> expected = new HashSet<>();
    for (TreePattern p : TreePattern.values()) {
      for (String name : names()) {
        expected.add(Names.of(p) + "/" + name);
      }
    }
    assertEquals(expected, keys);
    // The subjects are the file's nodes: the widest node first in preorder, the deepest leaf.
    assertTrue(subjects.contains("children: r0 (4 children)"), subjects.toString());
    assertTrue(subjects.contains("ancestors: c3 (depth 3)"), subjects.toString());

    String md = Files.readString(out.resolve(Output.MARKDOWN));
    String every = md.substring(md.indexOf("## Every measurement"), md.indexOf("## Method"));
    for (String name : names()) {
      String row = every.lines().filter(l -> l.startsWith("| " + name + " |")).findFirst()
          .orElseThrow(() -> new AssertionError("no row for " + name + " in\n" + every));
      assertEquals(TreePattern.values().length, row.split(" rt / ").length - 1, row);
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "missing.json | | 1 | cannot read --tree DIR/missing.json: no such file: DIR/missing.json",
      "empty.json | | 1 | --tree DIR/empty.json holds no node (an empty array)",
      "malformed.json | | 1 | --tree DIR/malformed.json: line 1, column 1: expected '[' starting"
          + " the list of root nodes, found an object",
      "forest.json | --shapes=wide | 2 | --tree and --shapes exclude each other: --tree measures"
          + " the file's tree, at its own size; --shapes chooses generated ones",
      "forest.json | --sizes=1000 | 2 | --tree and --sizes exclude each other",
  })
  void refusesInOneLineNamingTheFileOrTheOption(String name, String option, int status,
      String expected) throws Exception {
    Files.writeString(dir.resolve("empty.json"), "[]\n");
    Files.writeString(dir.resolve("malformed.json"), "{\"id\": \"a\"}\n");
    List<String> args = new ArrayList<>(List.of("bench", "--tree", dir.resolve(name).toString(),
        "--out", dir.resolve("refused").toString()));
    if (option != null) {
      args.add(option);
    }
    Outcome o = arbor(args.toArray(String[]::new));
    assertEquals(status, o.exit(), o::toString);
    String message = o.stderr().strip();
    assertEquals(1, message.lines().count(), message);
    assertTrue(message.startsWith("arbor bench: " + expected.replace("DIR", dir.toString())),
        message);
    assertEquals("", o.stdout());
    assertFalse(Files.exists(dir.resolve("refused")), "refused before anything is written");
  }
}
