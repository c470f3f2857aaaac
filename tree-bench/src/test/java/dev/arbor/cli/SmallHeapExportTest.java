package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.json.TreeJson;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor export} streams: a client JVM limited to {@value #CLIENT_HEAP} of heap exports a
 * tree of {@value #NODES} nodes whose JSON alone is larger than that heap, byte-identical to the
 * tree's JSON. The embedded server holds its data on its own heap, so it runs in a second JVM with
 * a large heap; the client measures its peak heap ({@link MeasuredArbor}).
 */
class SmallHeapExportTest {
  static final int NODES = 300_000;
  static final String CLIENT_HEAP = "48m";
  private static final long CLIENT_HEAP_BYTES = 48L << 20;

  @TempDir
  Path dir;

  @Test
  void aTreeLargerThanTheClientHeapIsExportedByteIdentical() throws Exception {
    long start = System.nanoTime();
    try (ChildJvm.Server server = ChildJvm.Server.start(String.valueOf(NODES), "1000",
        "NESTED_SETS")) {
      long loaded = System.nanoTime();
      Path file = dir.resolve("big.json");
      long peak = ChildJvm.arbor(CLIENT_HEAP, 120, "export", file.toString(), "--uri",
          server.uri(), "--db", "arbor", "-c", "NESTED_SETS", "-p", "nested-sets", "--no-check",
          "-q");
      System.out.println("exported " + NODES + " nodes (" + Files.size(file) + " bytes of JSON)"
          + " with -Xmx" + CLIENT_HEAP + ": peak heap " + peak / (1 << 20) + " MB, in "
          + (System.nanoTime() - loaded) / 1_000_000 + " ms (server started and loaded in "
          + (loaded - start) / 1_000_000 + " ms)");
      assertTrue(Files.size(file) > CLIENT_HEAP_BYTES,
          "the JSON is larger than the client's whole heap: " + Files.size(file));
      assertTrue(peak <= CLIENT_HEAP_BYTES, "peak " + peak);

      Path expected = dir.resolve("expected.json");
      try (OutputStream o = Files.newOutputStream(expected)) {
        TreeJson.write(BigTreeServer.tree(NODES, 1000), o);
      }
      assertEquals(-1L, Files.mismatch(expected, file), "the export is byte-identical");
    }
  }
}
