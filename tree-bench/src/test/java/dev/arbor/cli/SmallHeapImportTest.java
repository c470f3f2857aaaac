package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.json.TreeJson;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreePattern;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor import} streams: a client JVM limited to {@value #CLIENT_HEAP} of heap imports a
 * file of {@value #NODES} nodes whose JSON alone is larger than that heap (it reads the file
 * through once to check it, then again into the store's streamed load), and the tree arrives
 * whole. Nothing the client holds grows with the file: not the tree, nor its ids (a repeated id
 * is refused by the store's unique {@code _id} index), so the heap is the export's 48 MB. The
 * embedded server runs in a second JVM with a large heap;
 * the client measures its peak heap ({@link MeasuredArbor}).
 */
class SmallHeapImportTest {
  static final int NODES = 300_000;
  static final String CLIENT_HEAP = "48m";
  private static final long CLIENT_HEAP_BYTES = 48L << 20;

  @TempDir
  Path dir;

  @Test
  void aFileLargerThanTheClientHeapIsImportedWhole() throws Exception {
    Path file = dir.resolve("big.json");
    try (OutputStream o = Files.newOutputStream(file)) {
      TreeJson.write(BigTreeServer.tree(NODES, 1000), o);
    }
    assertTrue(Files.size(file) > CLIENT_HEAP_BYTES,
        "the JSON is larger than the client's whole heap: " + Files.size(file));
    try (ChildJvm.Server server = ChildJvm.Server.start("1", "1")) {
      long start = System.nanoTime();
      long peak = ChildJvm.arbor(CLIENT_HEAP, 300, "import", file.toString(), "--uri",
          server.uri(), "--db", "arbor", "-c", "imported", "-p", "nested-sets", "-q");
      System.out.println("imported " + NODES + " nodes (" + Files.size(file) + " bytes of JSON)"
          + " with -Xmx" + CLIENT_HEAP + ": peak heap " + peak / (1 << 20) + " MB, in "
          + (System.nanoTime() - start) / 1_000_000 + " ms");
      assertTrue(peak <= CLIENT_HEAP_BYTES, "peak " + peak);

      try (MongoClient check = MongoClients.create(server.uri())) {
        MongoCollection<Document> imported = check.getDatabase("arbor")
            .getCollection("imported");
        assertEquals(NODES, Connection.nodes(imported));
        TreeStore tree = TreePattern.NESTED_SETS.open(imported);
        assertEquals(List.of(), tree.check());
        assertEquals(List.of("root"), tree.roots());
        assertEquals(1000, tree.children("folder-000000").size());
      }
    }
  }
}
