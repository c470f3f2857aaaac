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

/** The Java sample of docs/cli.md, compiled and run; the page reads as documentation. */
class DocsSampleTest {
  @Test
  void thePageStartsWithItsTitleAndWhatItCovers() throws IOException {
    java.util.List<String> lines = Files.readAllLines(Path.of("..", "docs", "cli.md"));
    org.junit.jupiter.api.Assertions.assertEquals(
        "# The `arbor` command line and the nested-JSON format", lines.get(0));
    org.junit.jupiter.api.Assertions.assertFalse(lines.get(2).startsWith("Material for"),
        lines.get(2));
  }

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
