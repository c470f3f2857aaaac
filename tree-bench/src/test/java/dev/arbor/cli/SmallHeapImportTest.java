package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeStore;
import dev.arbor.core.json.TreeJson;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.mongo.TreePattern;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor import} streams: a client JVM limited to {@value #CLIENT_HEAP} of heap imports a
 * file of {@value #NODES} nodes whose JSON alone is larger than that heap (it reads the file
 * through once to check it, then again into the store's streamed load), and the tree arrives
 * whole. Nothing the client holds grows with the file: not the tree, nor its ids (a repeated id
 * is refused by the store's unique {@code _id} index). The server is the fork's test server
 * ({@link MongoTestServer}: the embedded one holds its data in the test JVM's large heap); the
 * client measures its peak heap ({@link MeasuredArbor}).
 *
 * <p><b>Why this size proves the bound.</b> The JSON (about 37 MB) is larger than the client's
 * whole heap, so an import that held the text, the tree or its ids (a set of 140 000 id strings
 * alone is some 15 MB) beside the driver and a batch could not run. The heap the import needs
 * does not grow with the file: measured, 100 000 nodes import at {@code -Xmx32m} and fail at
 * {@code -Xmx24m} (out of memory), and 300 000 nodes (this test's former size) imported at
 * {@code -Xmx48m}; so {@value #CLIENT_HEAP} is the smallest round heap with room, and the tree the
 * smallest whose JSON is clearly larger than it.
 */
class SmallHeapImportTest {
  static final int NODES = 140_000;
  static final String CLIENT_HEAP = "32m";
  private static final long CLIENT_HEAP_BYTES = 32L << 20;

  @TempDir
  Path dir;

  @Test
  void aFileLargerThanTheClientHeapIsImportedWhole() throws Exception {
    Path file = dir.resolve("big.json");
    try (OutputStream o = Files.newOutputStream(file)) {
      TreeJson.write(BigTrees.tree(NODES, 1000), o);
    }
    assertTrue(Files.size(file) > CLIENT_HEAP_BYTES,
        "the JSON is larger than the client's whole heap: " + Files.size(file));
    MongoTestServer server = MongoTestServer.get();
    MongoCollection<Document> imported = server.freshCollection();
    try {
      long start = System.nanoTime();
      long peak = ChildJvm.arbor(CLIENT_HEAP, 300, "import", file.toString(), "--uri",
          server.uri(), "--db", server.database().getName(), "-c",
          imported.getNamespace().getCollectionName(), "-p", "nested-sets", "-q");
      System.out.println("imported " + NODES + " nodes (" + Files.size(file) + " bytes of JSON)"
          + " with -Xmx" + CLIENT_HEAP + ": peak heap " + peak / (1 << 20) + " MB, in "
          + (System.nanoTime() - start) / 1_000_000 + " ms");
      assertTrue(peak <= CLIENT_HEAP_BYTES, "peak " + peak);

      assertEquals(NODES, Connection.nodes(imported));
      TreeStore tree = TreePattern.NESTED_SETS.open(imported);
      assertEquals(List.of(), tree.check());
      assertEquals(List.of("root"), tree.roots());
      assertEquals(1000, tree.children("folder-000000").size());
    } finally {
      imported.drop(); // the fork's server is shared: give its heap back
    }
  }
}
