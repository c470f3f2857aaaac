package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor import} and {@code arbor export} with {@code --data-dir}, where the embedded
 * server runs in the command's own JVM and shares its heap of {@code -Xmx}{@value #HEAP}: a deep,
 * irregular tree of {@value #NODES} nodes stored as materialized paths. One data directory goes
 * through the whole story, each step a JVM of its own:
 *
 * <ol>
 *   <li>a small tree is imported into collection {@code t};
 *   <li>the big import into {@code t} with {@code --replace} is killed after a save of it has
 *       reached the file: {@code t} is still the small tree;
 *   <li>the big import into the empty collection {@code u} is killed the same way; the next
 *       import finds that load undone (its lock and journal were saved with it) and loads the
 *       file whole;
 *   <li>{@code u} is exported with its check, byte-identical to the file.
 * </ol>
 *
 * <p><b>Why this size proves the bound.</b> Code that keeps the tree in the heap cannot hold it
 * in this one. The in-memory server takes about 1.5 KB of heap a node (measured, {@link
 * Capacity#HEAP_PER_NODE}), some 88 MB for {@value #NODES} nodes before the documents' path
 * strings (11 MB of characters, 1.6 bytes of heap a byte), and {@code arbor import} without {@code
 * --data-dir} refuses the file at this heap for that reason (checked first, in this JVM). The
 * data-directory server as it was, which kept every change since the start of an import until
 * it ended, stopped at about 200 000 nodes at {@code -Xmx384m} (1.9 KB a node: 115 MB here); its
 * export's check and count read the whole collection into lists on both sides. Today the import
 * peaks at about 45 MB after a full collection, so {@value #HEAP} is a bound with room: at {@code
 * -Xmx80m} an import of this tree ran hundreds of full collections and took minutes. The tree
 * cannot shrink much with the heap: the data-directory server keeps its secondary indexes (the
 * ids, the distinct paths), its cache and a load's batch of up to 10 000 documents in the heap
 * too (30 000 nodes ran a 48 MB heap out).
 *
 * <p><b>Why it is not smaller.</b> Measured with {@code -Xlog:gc} (60 000 nodes, {@code
 * -Xmx96m}): the import's live set after a full collection is 33 to 64 MB all along the load,
 * so the heap cannot shrink much below this one, and with it the tree: below about 55 000 nodes
 * the in-memory server would hold the tree in 96 MB (1.5 KB a node and the path strings,
 * measured as above), and the test would no longer show what only a data directory can. So this
 * is the module's longest test (about two and a half minutes on an idle two-core machine, most
 * of it the full import and the checked export); its time is the data directory's cost per
 * document (H2 writes and reads the documents and the {@code _id} index's keys by Java
 * serialization; the index no longer serializes its string keys to compare them, {@code
 * KeyValueType}, which took the full import from 38 to 28 s of CPU) and some 140 full
 * collections in a nearly full heap, not a size beyond the bound.
 */
class SmallHeapDataDirTest {
  static final int NODES = 60_000;
  static final String HEAP = "96m";
  private static final long HEAP_BYTES = 96L << 20;
  /**
   * The lease of the imports that are killed, which the next command on their collection waits
   * out (a real wait: the holder is another process) before it undoes their load; the library's
   * default is 30 s. Not shorter: each batch of a load is limited to nine tenths of the lease
   * (Fences.timed), and a batch of 10 000 documents in this nearly full heap takes seconds, many
   * more on a loaded machine; a 5 s lease would let the killed import time out before it is
   * killed.
   */
  private static final int KILLED_LEASE_SECONDS = 10;

  @TempDir
  Path dir;

  @Test
  void aDataDirectoryLargerThanTheHeapSurvivesKillsAndRoundTrips() throws Exception {
    Path file = dir.resolve("deep.json");
    try (OutputStream o = Files.newOutputStream(file)) {
      TreeJson.write(deepTree(NODES, 1), o);
    }
    Path small = dir.resolve("small.json");
    try (OutputStream o = Files.newOutputStream(small)) {
      TreeJson.write(deepTree(500, 3), o);
    }
    refusedByTheInMemoryServer(file);

    Path data = dir.resolve("data");
    String d = data.toString();
    ChildJvm.arbor(HEAP, 120, "import", small.toString(), "--data-dir", d, "-c", "t", "-p",
        "materialized-paths", "-q");

    killAfterASave(data, "import", file.toString(), "--data-dir", d, "-c", "t", "-p",
        "materialized-paths", "--replace");
    Path out = dir.resolve("t.json");
    ChildJvm.arbor(HEAP, 120, "export", out.toString(), "--data-dir", d, "-c", "t", "-p",
        "materialized-paths", "-q");
    assertEquals(-1L, Files.mismatch(small, out), "the replaced tree is as it was");

    killAfterASave(data, "import", file.toString(), "--data-dir", d, "-c", "u", "-p",
        "materialized-paths");
    long start = System.nanoTime();
    long importPeak = ChildJvm.arbor(HEAP, 300, "import", file.toString(), "--data-dir", d, "-c",
        "u", "-p", "materialized-paths", "-q");
    long imported = System.nanoTime();
    Path again = dir.resolve("u.json");
    long exportPeak = ChildJvm.arbor(HEAP, 300, "export", again.toString(), "--data-dir", d,
        "-c", "u", "-p", "materialized-paths", "-q");
    System.out.println("data directory, -Xmx" + HEAP + ", " + NODES + " nodes ("
        + Files.size(file) + " bytes of JSON): import after a killed one "
        + (imported - start) / 1_000_000 + " ms, peak heap " + importPeak / (1 << 20)
        + " MB; export (checked) " + (System.nanoTime() - imported) / 1_000_000
        + " ms, peak heap " + exportPeak / (1 << 20) + " MB");
    assertEquals(-1L, Files.mismatch(file, again), "imported whole after the killed one,"
        + " exported byte-identical");
  }

  /**
   * The in-memory server would need more than {@value #HEAP} for the file: {@code arbor import}
   * without {@code --data-dir}, its heap seen as {@value #HEAP}, refuses it up front.
   */
  private static void refusedByTheInMemoryServer(Path file) {
    Cli.Result r = Cli.run(Capacity.ofThisMachine().withMaxHeap(HEAP_BYTES), "import",
        file.toString(), "-c", "t", "-p", "materialized-paths", "-q");
    assertEquals(Arbor.EXIT_FAILURE, r.exit(), r::toString);
    assertTrue(r.stderr().contains("which the temporary in-memory server would hold in about")
        && r.stderr().contains("more than this JVM's 96 MB (java -Xmx)"), r::toString);
  }

  /**
   * Runs {@code arbor args} with the small heap and a lease of {@value #KILLED_LEASE_SECONDS} s
   * and kills it once a save of what it loads has reached the data directory's file: at the
   * first progress line after the file has grown twice (saves are written one after the other,
   * each synced before the next, so the first is complete by then). The next command on the
   * collection waits out that lease before it settles the killed load.
   */
  private static void killAfterASave(Path data, String... args) throws Exception {
    Path mv = data.resolve(Connection.DATA_FILE);
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--progress-interval", "100", "--lease-seconds",
        String.valueOf(KILLED_LEASE_SECONDS)));
    Process p = ChildJvm.java("-Xmx" + HEAP, MeasuredArbor.class.getName(),
        all.toArray(String[]::new)).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    List<String> said = new ArrayList<>();
    long size = Files.size(mv);
    int grew = 0;
    try (BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(),
        StandardCharsets.UTF_8))) {
      for (String line = err.readLine(); line != null; line = err.readLine()) {
        said.add(line);
        long now = Files.size(mv);
        if (now != size) {
          size = now;
          grew++;
        }
        if (line.contains("loading") && grew >= 2) {
          p.destroyForcibly().waitFor();
          return;
        }
      }
    } finally {
      p.destroyForcibly().waitFor();
    }
    throw new AssertionError("the import ended before a save: " + said);
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
