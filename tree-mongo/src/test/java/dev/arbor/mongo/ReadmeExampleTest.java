package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Deletion;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The usage examples of the README, compiled and run; the README must show them verbatim. */
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
  void nodeDataExample() {
    String uri = MongoTestServer.get().uri();
    String db = MongoTestServer.get().database().getName();
    // README-data:begin
    try (MongoClient client = MongoClients.create(uri)) {
      MongoCollection<Document> products = client.getDatabase(db).getCollection("products");
      MongoTree shop = TreePattern.ARRAY_OF_ANCESTORS.open(products);
      shop.ensureIndexes();
      shop.insert("Books", Position.lastRoot(), Map.of("title", "Books"));
      shop.insert("Databases", Position.lastChildOf("Books"), Map.of("title", "Databases"));
      shop.insert("MongoDB in Action", Position.lastChildOf("Databases"), Map.of("price", 35));
      shop.insert("dbm notes", Position.lastChildOf("Databases"), Map.of("price", 5));

      shop.update("Databases", Map.of("title", "Storage"));        // one document written
      Tree page = shop.subtree("Books", 1);                         // Books and its children
      List<Node> crumbs = shop.ancestorNodes("dbm notes");          // Books, Storage: with data
      List<Node> cheap = shop.descendantNodes("Books", Integer.MAX_VALUE, Filters.lt("price", 10));
      List<Node> first = shop.childNodes("Databases", null, 1);     // a page of one child
      List<Node> next = shop.childNodes("Databases", first.get(0).id(), 1);  // the page after it
      long inBooks = products.countDocuments(shop.subtreeFilter("Books"));  // your own query
      shop.delete("Databases", Deletion.LIFT_CHILDREN);             // its children take its place
      // README-data:end
      assertEquals(List.of("Books", "Databases"), page.ids());
      assertEquals("Storage", page.get("Databases").attributes().get("title"));
      assertEquals(List.of("Books", "Storage"),
          crumbs.stream().map(n -> n.attributes().get("title")).toList());
      assertEquals(List.of(new Node("dbm notes", "Databases", 2, Map.of("price", 5))), cheap);
      assertEquals("MongoDB in Action", first.get(0).id());
      assertEquals("dbm notes", next.get(0).id());
      assertEquals(4, inBooks);
      assertEquals(List.of("MongoDB in Action", "dbm notes"), shop.children("Books"));
    }
  }

  @Test
  void readmeShowsTheExamples() throws IOException {
    Path readme = Path.of("..", "README.md");
    String text = Files.readString(readme);
    String source = Files.readString(
        Path.of("src/test/java/dev/arbor/mongo/ReadmeExampleTest.java"));
    for (String marker : List.of("README", "README-data")) {
      String begin = "// " + marker + ":begin";
      String snippet = source.substring(source.indexOf(begin) + begin.length() + 1,
          source.indexOf("      // " + marker + ":end"));
      for (String line : snippet.split("\n")) {
        String trimmed = line.strip();
        assertTrue(trimmed.isEmpty() || text.contains(trimmed),
            "README.md lacks the example line: " + trimmed);
      }
    }
  }
}
