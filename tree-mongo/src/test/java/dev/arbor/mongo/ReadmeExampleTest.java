package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.Position;
import dev.arbor.core.TreeStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The usage example of the README, compiled and run; the README must show it verbatim. */
class ReadmeExampleTest {

  @Test
  void example() {
    String uri = MongoTestServer.get().uri();
    String db = MongoTestServer.get().database().getName();
    // README:begin
    try (MongoClient client = MongoClients.create(uri)) {
      MongoCollection<Document> categories = client.getDatabase(db).getCollection("categories");
      TreeStore tree = TreePattern.MATERIALIZED_PATHS.open(categories);
      tree.ensureIndexes();

      tree.insert("Books", Position.lastRoot());
      tree.insert("Programming", Position.lastChildOf("Books"));
      tree.insert("Databases", Position.lastChildOf("Programming"), Map.of("title", "Databases"));
      tree.insert("Languages", Position.before("Databases"));
      tree.insert("MongoDB", Position.lastChildOf("Databases"));

      List<String> path = tree.ancestors("MongoDB");         // [Books, Programming, Databases]
      List<String> below = tree.descendants("Programming");  // [Languages, Databases, MongoDB]
      tree.move("Databases", Position.firstRoot());          // with its whole subtree
      assertEquals(List.of("Databases"), tree.ancestors("MongoDB"));
      assertEquals(List.of(), tree.check());                 // no problem found
      // README:end
      assertEquals(List.of("Books", "Programming", "Databases"), path);
      assertEquals(List.of("Languages", "Databases", "MongoDB"), below);
      assertEquals(List.of("Databases", "Books"), tree.roots());
    }
  }

  @Test
  void readmeShowsTheExample() throws IOException {
    Path readme = Path.of("..", "README.md");
    String text = Files.readString(readme);
    String source = Files.readString(
        Path.of("src/test/java/dev/arbor/mongo/ReadmeExampleTest.java"));
    String snippet = source.substring(source.indexOf("// README:begin") + 16,
        source.indexOf("      // README:end"));
    for (String line : snippet.split("\n")) {
      String trimmed = line.strip();
      assertTrue(trimmed.isEmpty() || text.contains(trimmed),
          "README.md lacks the example line: " + trimmed);
    }
  }
}
