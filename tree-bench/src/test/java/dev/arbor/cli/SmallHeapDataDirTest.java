package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor import} and {@code arbor export} with {@code --data-dir}, where the embedded
 * server runs in the command's own JVM and shares its heap: a deep, irregular tree of {@value
 * #NODES} nodes, several times the heap once stored as materialized paths, goes in and comes out
 * byte-identical with {@code -Xmx}{@value #HEAP} (the same tree at {@code -Xmx384m} takes 300 000
 * nodes). Before, the server kept every change since the start in the heap until the import
 * ended, and the export's check and count read the whole collection into lists on both sides.
 */
class SmallHeapDataDirTest {
  static final int NODES = 60_000;
  static final String HEAP = "80m";

  @TempDir
  Path dir;

  @Test
  void aDataDirectoryImportLargerThanTheHeapRoundTrips() throws Exception {
    Path file = dir.resolve("deep.json");
    try (OutputStream o = Files.newOutputStream(file)) {
      TreeJson.write(deepTree(NODES, 1), o);
    }
    Path data = dir.resolve("data");
    long start = System.nanoTime();
    long importPeak = ChildJvm.arbor(HEAP, 300, "import", file.toString(), "--data-dir",
        data.toString(), "-c", "t", "-p", "materialized-paths", "-q");
    long imported = System.nanoTime();
    Path out = dir.resolve("out.json");
    long exportPeak = ChildJvm.arbor(HEAP, 300, "export", out.toString(), "--data-dir",
        data.toString(), "-c", "t", "-p", "materialized-paths", "-q");
    System.out.println("data directory, -Xmx" + HEAP + ", " + NODES + " nodes ("
        + Files.size(file) + " bytes of JSON): import " + (imported - start) / 1_000_000
        + " ms, peak heap " + importPeak / (1 << 20) + " MB; export (checked) "
        + (System.nanoTime() - imported) / 1_000_000 + " ms, peak heap "
        + exportPeak / (1 << 20) + " MB");
    assertEquals(-1L, Files.mismatch(file, out), "the export is byte-identical to the import");
  }

  /**
   * A data-directory import killed half-way, after parts of it were saved: with {@code
   * --replace} the collection is still the tree it held; into an empty collection, the next
   * import finds the killed load undone (its lock and journal were saved with it) and loads the
   * file whole.
   */
  @Test
  void aKilledDataDirectoryImportLeavesTheTreeAsItWas() throws Exception {
    Path file = dir.resolve("deep.json");
    try (OutputStream o = Files.newOutputStream(file)) {
      TreeJson.write(deepTree(NODES, 2), o);
    }
    Path small = dir.resolve("small.json");
    try (OutputStream o = Files.newOutputStream(small)) {
      TreeJson.write(deepTree(500, 3), o);
    }
    Path data = dir.resolve("data");
    String d = data.toString();
    ChildJvm.arbor(HEAP, 120, "import", small.toString(), "--data-dir", d, "-c", "t", "-p",
        "materialized-paths", "-q");

    killHalfWay("import", file.toString(), "--data-dir", d, "-c", "t", "-p",
        "materialized-paths", "--replace");
    Path out = dir.resolve("t.json");
    ChildJvm.arbor(HEAP, 120, "export", out.toString(), "--data-dir", d, "-c", "t", "-p",
        "materialized-paths", "-q");
    assertEquals(-1L, Files.mismatch(small, out), "the replaced tree is as it was");

    killHalfWay("import", file.toString(), "--data-dir", d, "-c", "u", "-p",
        "materialized-paths");
    ChildJvm.arbor(HEAP, 300, "import", file.toString(), "--data-dir", d, "-c", "u", "-p",
        "materialized-paths", "-q");
    Path again = dir.resolve("u.json");
    ChildJvm.arbor(HEAP, 300, "export", again.toString(), "--data-dir", d, "-c", "u", "-p",
        "materialized-paths", "-q");
    assertEquals(-1L, Files.mismatch(file, again), "imported whole after the killed one");
  }

  /** Runs {@code arbor args} with the small heap and kills it once it has loaded 40%. */
  private static void killHalfWay(String... args) throws Exception {
    Process p = ChildJvm.java("-Xmx" + HEAP, MeasuredArbor.class.getName(), args)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    java.util.List<String> said = new java.util.ArrayList<>();
    try (java.io.BufferedReader err = new java.io.BufferedReader(new java.io.InputStreamReader(
        p.getErrorStream(), java.nio.charset.StandardCharsets.UTF_8))) {
      // progress lines: "arbor: loading 60,000 nodes into ...: 24,002 of 60,000 nodes (40%), ..."
      java.util.regex.Pattern percent = java.util.regex.Pattern.compile("\\((\\d+)%\\)");
      for (String line = err.readLine(); line != null; line = err.readLine()) {
        said.add(line);
        java.util.regex.Matcher m = percent.matcher(line);
        if (line.contains("loading") && m.find() && Integer.parseInt(m.group(1)) >= 40) {
          p.destroyForcibly().waitFor();
          return;
        }
      }
    }
    throw new AssertionError("the import ended before 40%: " + said);
  }

  /**
   * A random recursive tree, deep and irregular: each node's parent is, mostly, one of the 50
   * nodes made just before it (depths in the tens), else any earlier node.
   */
  static Tree deepTree(int nodes, long seed) {
    Random random = new Random(seed);
    Tree.Builder b = Tree.builder();
    b.add("node-0", null, Map.of("size", 0));
    for (int i = 1; i < nodes; i++) {
      int parent = random.nextDouble() < 0.7 ? Math.max(0, i - 1 - random.nextInt(50))
          : random.nextInt(i);
      b.add("node-" + i, "node-" + parent, Map.of("size", i));
    }
    return b.build();
  }
}
