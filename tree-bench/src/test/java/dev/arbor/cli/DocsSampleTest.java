package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.core.json.TreeJson;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java sample of docs/cli.md, compiled and run. */
class DocsSampleTest {
  @TempDir
  Path dir;

  @Test
  void sampleRoundTripsTheExample() throws IOException {
    Path example = Path.of("..", "examples", "categories.json");
    Path output = dir.resolve("out.json");
    TreeStore store = new InMemoryTreeStore();
    // --- sample (docs/cli.md, "From Java"), paths adapted to the test
    Tree tree;
    try (InputStream in = Files.newInputStream(example)) {
      tree = TreeJson.read(in);
    }
    store.load(tree);
    try (OutputStream out = Files.newOutputStream(output)) {
      TreeJson.write(store.snapshot(), out);
    }
    // --- end of sample
    assertArrayEquals(Files.readAllBytes(example), Files.readAllBytes(output));
  }
}
