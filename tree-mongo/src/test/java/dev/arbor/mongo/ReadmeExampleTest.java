package dev.arbor.mongo;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Deletion;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import dev.arbor.core.json.TreeJsonWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.bson.Document;
import org.bson.codecs.pojo.annotations.BsonId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The README's first program, taken from the README as it stands, compiled and run as a new user
 * would: it must compile against the modules alone, run to the end, and print what its comments
 * say it prints; and the examples of docs/data-api.md (node data, streaming, scopes, typed nodes),
 * run here and shown in that page verbatim ({@link DocsPages#assertShown}).
 *
 * <p>{@link Isolated}: the first program's output is read from {@code System.out}, which the
 * classes running beside it in the JVM would write into.
 */
@Isolated
class ReadmeExampleTest {
  private static final String CLASS = "FirstTree";

  @TempDir
  Path dir;

  @Test
  void theReadmesFirstProgramRunsAsWrittenAndPrintsWhatItSays() throws Exception {
    String source = program(Files.readString(DocsPages.readme()));
    Path file = dir.resolve(CLASS + ".java");
    Files.writeString(file, source);

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "tests run on a JDK");
    StringWriter diagnostics = new StringWriter();
    String classpath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    boolean compiled = javac.getTask(diagnostics, null, null, List.of("-d", dir.toString(),
        "-classpath", classpath, "-Xlint:all", "-Werror"), null,
        javac.getStandardFileManager(null, null, UTF_8).getJavaFileObjects(file)).call();
    assertTrue(compiled, "the README's program does not compile:\n" + diagnostics);

    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = System.out;
    try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
        getClass().getClassLoader())) {
      Method main = loader.loadClass(CLASS).getMethod("main", String[].class);
      System.setOut(new PrintStream(printed, true, UTF_8));
      main.invoke(null, (Object) new String[0]);
    } finally {
      System.setOut(out);
    }
    assertEquals(expectedOutput(source), printed.toString(UTF_8).lines().toList());
  }

  @Test
  void nodeDataExample() {
    String uri = MongoTestServer.get().uri();
    String db = MongoTestServer.get().databaseOfItsOwn("readme").getName();
    // docs-data:begin
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
      // docs-data:end
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
  void streamingExample() throws IOException {
    MongoCollection<Document> collection = MongoTestServer.get().freshCollection();
    TreePattern.NESTED_SETS.open(collection).load(Tree.parse("Books(Programming(MongoDB dbm))"));
    Path file = Files.createTempFile("arbor-readme-", ".json");
    try {
      // docs-stream:begin
      MongoTree tree = TreePattern.NESTED_SETS.open(collection);
      try (Stream<Node> entries = tree.entries();             // preorder, from a cursor
          OutputStream out = Files.newOutputStream(file)) {
        TreeJsonWriter writer = TreeJson.writer(out);               // holds the path from the root
        entries.forEach(writer::write);
        writer.finish();
      }
      // docs-stream:end
      assertEquals(Tree.parse("Books(Programming(MongoDB dbm))"),
          TreeJson.parse(Files.readString(file)));
    } finally {
      Files.delete(file);
    }
  }

  @Test
  void scopeExample() {
    String uri = MongoTestServer.get().uri();
    String db = MongoTestServer.get().databaseOfItsOwn("readme").getName();
    // docs-scope:begin
    try (MongoClient client = MongoClients.create(uri)) {
      MongoCollection<Document> forums = client.getDatabase(db).getCollection("forums");
      MongoTree acme = TreePattern.MATERIALIZED_PATHS.open(forums,
          TreeOptions.defaults().withScope("tenant", "acme"));
      MongoTree globex = TreePattern.MATERIALIZED_PATHS.open(forums,
          TreeOptions.defaults().withScope("tenant", "globex"));
      acme.ensureIndexes();                                         // each index led by "tenant"
      acme.insert("General", Position.lastRoot());
      acme.insert("Help", Position.lastChildOf("General"));
      globex.insert("General", Position.lastRoot());                // the same id, another tree
      globex.move("General", Position.lastRoot());                  // never waits for acme's lock
      long inGeneral = forums.countDocuments(acme.subtreeFilter("General"));  // 2: acme's only
      // docs-scope:end
      assertEquals(2, inGeneral);
      assertEquals(List.of("Help"), acme.children("General"));
      assertEquals(List.of(), globex.children("General"));
      assertEquals(1, globex.size());
      Document stored = forums.find(Filters.and(Filters.eq("tenant", "acme"),
          Filters.eq("_id.id", "Help"))).first();
      assertNotNull(stored);
      assertEquals(",General,", stored.getString("path"));
    }
  }

  /** The record of docs/data-api.md, as the typed example declares it. */
  // docs-record:begin
  public record Category(@BsonId String id, String title, List<String> tags) {}
  // docs-record:end

  @Test
  void typedExample() {
    String uri = MongoTestServer.get().uri();
    String db = MongoTestServer.get().databaseOfItsOwn("readme").getName();
    // docs-typed:begin
    try (MongoClient client = MongoClients.create(uri)) {
      MongoCollection<Category> categories =
          client.getDatabase(db).getCollection("categories", Category.class);
      TypedTree<Category> shop = TreePattern.MATERIALIZED_PATHS.openTyped(categories);
      shop.tree().ensureIndexes();
      shop.insert(new Category("Books", "Books", List.of()), Position.lastRoot());
      shop.insert(new Category("Databases", "Databases", List.of("tech")),
          Position.lastChildOf("Books"));
      shop.insert(new Category("MongoDB", "MongoDB", List.of("tech", "nosql")),
          Position.lastChildOf("Databases"));

      List<Category> crumbs = shop.ancestorNodes("MongoDB");             // Books, Databases
      List<Category> tech = shop.descendantNodes("Books", Integer.MAX_VALUE, Filters.eq("tags", "nosql"));
      shop.update(new Category("Databases", "Storage", List.of("tech")));  // one document written
      shop.tree().move("MongoDB", Position.lastRoot());              // the structure, by id
      // docs-typed:end
      assertEquals(List.of(new Category("Books", "Books", List.of()),
          new Category("Databases", "Databases", List.of("tech"))), crumbs);
      assertEquals(List.of("MongoDB"), tech.stream().map(Category::id).toList());
      assertEquals(List.of(), shop.ancestorNodes("MongoDB"));
      assertEquals("Storage", shop.find("Databases").orElseThrow().title());
    }
  }

  @Test
  void theDataApiPageShowsTheExamples() throws IOException {
    for (String marker : List.of("docs-data", "docs-record", "docs-typed", "docs-stream",
        "docs-scope")) {
      DocsPages.assertShown(DocsPages.page("data-api.md"),
          DocsPages.testSource("ReadmeExampleTest.java"), marker);
    }
  }

  /** The Java block of the README that declares the first program. */
  static String program(String readme) {
    Matcher block = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(readme);
    while (block.find()) {
      if (block.group(1).contains("public class " + CLASS + " ")) {
        return block.group(1);
      }
    }
    throw new AssertionError("README.md shows no 'public class " + CLASS + "' in a java block");
  }

  /** What the program's comments say it prints: {@code println(...); // [a, b]} lines. */
  static List<String> expectedOutput(String source) throws IOException {
    List<String> expected = new ArrayList<>();
    Matcher m = Pattern.compile("System\\.out\\.println\\(.*\\);\\s*// (\\[[^\\]]*\\])")
        .matcher(source);
    while (m.find()) {
      expected.add(m.group(1));
    }
    assertTrue(expected.size() >= 3, "the program says what it prints: " + expected);
    return expected;
  }
}
