package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.json.TreeJson;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.mongo.TreePattern;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor export} streams: a client JVM limited to {@value #CLIENT_HEAP} of heap exports a
 * tree of {@value #NODES} nodes whose JSON alone is larger than that heap, byte-identical to the
 * tree's JSON. The server is the fork's test server ({@link MongoTestServer}: the embedded one
 * holds its data in the test JVM's large heap); the client measures its peak heap ({@link
 * MeasuredArbor}).
 *
 * <p><b>Why this size proves the bound.</b> The JSON (about 26 MB) is larger than the client's
 * whole heap, so an export that held the text, or the tree it comes from (more than the text),
 * could not run; a streaming one holds a batch and the path from the root. Measured: the export
 * peaks at about 15 MB at {@code -Xmx16m} (it ran with the same peak-to-heap ratio at 300 000
 * nodes and {@code -Xmx48m}, this test's former size: the heap it needs does not grow with the
 * tree).
 */
class SmallHeapExportTest {
  static final int NODES = 100_000;
  static final String CLIENT_HEAP = "16m";
  private static final long CLIENT_HEAP_BYTES = 16L << 20;

  @TempDir
  Path dir;

  @Test
  void aTreeLargerThanTheClientHeapIsExportedByteIdentical() throws Exception {
    MongoTestServer server = MongoTestServer.get();
    MongoCollection<Document> collection = server.freshCollection();
    try {
      long start = System.nanoTime();
      TreePattern.NESTED_SETS.open(collection).load(BigTrees.tree(NODES, 1000));
      long loaded = System.nanoTime();
      Path file = dir.resolve("big.json");
      long peak = ChildJvm.arbor(CLIENT_HEAP, 120, "export", file.toString(), "--uri",
          server.uri(), "--db", server.database().getName(), "-c",
          collection.getNamespace().getCollectionName(), "-p", "nested-sets", "--no-check",
          "-q");
      System.out.println("exported " + NODES + " nodes (" + Files.size(file) + " bytes of JSON)"
          + " with -Xmx" + CLIENT_HEAP + ": peak heap " + peak / (1 << 20) + " MB, in "
          + (System.nanoTime() - loaded) / 1_000_000 + " ms (loaded in "
          + (loaded - start) / 1_000_000 + " ms)");
      assertTrue(Files.size(file) > CLIENT_HEAP_BYTES,
          "the JSON is larger than the client's whole heap: " + Files.size(file));
      assertTrue(peak <= CLIENT_HEAP_BYTES, "peak " + peak);

      Path expected = dir.resolve("expected.json");
      try (OutputStream o = Files.newOutputStream(expected)) {
        TreeJson.write(BigTrees.tree(NODES, 1000), o);
      }
      assertEquals(-1L, Files.mismatch(expected, file), "the export is byte-identical");
    } finally {
      collection.drop(); // the fork's server is shared: give its heap back
    }
  }
}
