package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ValidationOptions;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The Java examples of docs/data-api.md and docs/patterns.md that {@link ReadmeExampleTest} does
 * not run, run here (or, where they need a replica set, compiled here and run on one), each shown
 * verbatim in its page ({@link DocsPages#assertShown}); and the page's {@code mongosh} validator,
 * read back and compared with the validator Arbor makes.
 */
class DocsExamplesTest {
  private final MongoTestServer server = MongoTestServer.get();
  // A database of its own: the examples name their collections ("categories"), as do
  // ReadmeExampleTest's, which may run beside these in the JVM.
  private final MongoDatabase db = server.databaseOfItsOwn("docs_examples");

  @Test
  void loadAndGraftFromStreams() throws Exception {
    for (String name : List.of("old", "new", "more")) {
      db.getCollection(name).drop();
    }
    TreePattern.PARENT_REFERENCES.open(db.getCollection("old"))
        .load(Tree.parse("Books (Programming (Databases (MongoDB)))"));
    MongoTree other = TreePattern.MATERIALIZED_PATHS.open(db.getCollection("more"));
    other.load(Tree.parse("Music (Jazz)"));
    // docs-load-graft:begin
    MongoTree source = TreePattern.PARENT_REFERENCES.open(db.getCollection("old"));
    MongoTree target = TreePattern.NESTED_SETS.open(db.getCollection("new"));
    try (Stream<Node> entries = source.entries()) {         // read by cursor
      target.load(entries.iterator());                            // written in batches
    }
    target.graft("Databases", Tree.parse("Postgres SQLite"));     // last children of Databases
    try (Stream<Node> more = other.entries()) {
      target.graft(null, more.iterator());                        // new last roots
    }
    // docs-load-graft:end
    assertEquals(List.of("Books", "Music"), target.roots());
    assertEquals(List.of("MongoDB", "Postgres", "SQLite"), target.children("Databases"));
    assertEquals(List.of("Jazz"), target.children("Music"));
    assertTrue(target.check().isEmpty(), () -> target.check().toString());
    DocsPages.assertShown(DocsPages.page("data-api.md"), source(), "docs-load-graft");
  }

  @Test
  void aChangeInTheCallersTransaction() throws Exception {
    DocsPages.assertShown(DocsPages.page("data-api.md"), source(), "docs-transaction");
    assumeTrue(CallersSessionTest.transactions(), "the server runs no transactions");
    db.getCollection("categories").drop();
    MongoCollection<Document> products = server.freshCollection();
    TreePattern.ARRAY_OF_ANCESTORS.open(db.getCollection("categories"))
        .load(Tree.parse("Books Databases"));
    MongoClient client = server.client();
    // docs-transaction:begin
    MongoTree categories = TreePattern.ARRAY_OF_ANCESTORS.open(db.getCollection("categories"));
    try (ClientSession session = client.startSession()) {
      session.withTransaction(() -> {
        products.insertOne(session, new Document("_id", "p1").append("category", "Databases"));
        categories.withSession(session).move("Databases", Position.lastChildOf("Books"));
        return null;
      });
    }
    // docs-transaction:end
    assertEquals(List.of("Databases"), categories.children("Books"));
    assertEquals(1, products.countDocuments());
  }

  @Test
  void watchingEveryProcesssChangesSkipsArborsOwnDocuments() throws Exception {
    DocsPages.assertShown(DocsPages.page("data-api.md"), source(), "docs-watch");
    // A change stream needs a replica set: here the filter is checked; the example compiles.
    MongoCollection<Document> collection = server.freshCollection();
    collection.insertMany(List.of(new Document("_id", "Books"),
        new Document("_id", new Document("arbor", "lock"))));
    assertEquals(List.of("Books"), collection.aggregate(List.of(Aggregates.match(
        Filters.not(Filters.type("_id", BsonType.DOCUMENT))))).map(d -> d.get("_id"))
        .into(new ArrayList<>()));
  }

  /** Compiled, not run: a change stream needs a replica set and never ends. */
  static void watchExample(MongoCollection<Document> collection) {
    // docs-watch:begin
    collection.watch(List.of(Aggregates.match(Filters.not(Filters.type("documentKey._id",
        BsonType.DOCUMENT))))).forEach(change -> invalidate(change.getDocumentKey()));
    // docs-watch:end
  }

  private static void invalidate(BsonDocument key) {
    assertTrue(key.containsKey("_id"));
  }

  @Test
  void fieldNamesOfYourOwn() throws Exception {
    MongoCollection<Document> collection = server.freshCollection();
    // docs-field-names:begin
    MongoTree tree = TreePattern.NESTED_SETS.open(collection, TreeOptions.defaults()
        .withFieldName(TreeField.LEFT, "lft").withFieldName(TreeField.RIGHT, "rgt")
        .withFieldName(TreeField.PARENT, "parent_id").withFieldName(TreeField.DEPTH, "level"));
    // docs-field-names:end
    tree.load(Tree.parse("Books (Databases)"));
    Document stored = collection.find(Filters.eq("_id", "Databases")).first();
    assertEquals("Books", stored.get("parent_id"));
    assertEquals(1, ((Number) stored.get("level")).intValue());
    assertTrue(stored.containsKey("lft") && stored.containsKey("rgt"), stored::toJson);
    assertEquals(List.of("Databases"), tree.children("Books"));
    DocsPages.assertShown(DocsPages.page("patterns.md"), source(), "docs-field-names");
  }

  @Test
  void theValidatorFromJavaAndFromMongosh() throws Exception {
    db.getCollection("categories").drop();
    MongoDatabase database = db;
    // docs-validator:begin
    database.createCollection("categories", new CreateCollectionOptions().validationOptions(
        new ValidationOptions().validator(TreePattern.ARRAY_OF_ANCESTORS.validator())));
    // docs-validator:end
    MongoTree tree = TreePattern.ARRAY_OF_ANCESTORS.open(db.getCollection("categories"));
    tree.load(Tree.parse("Books (Databases)"));
    assertEquals(List.of("Databases"), tree.children("Books"));
    DocsPages.assertShown(DocsPages.page("patterns.md"), source(), "docs-validator");

    // The mongosh block of the same page creates the same validator.
    String page = Files.readString(DocsPages.page("patterns.md"));
    int block = page.indexOf("```js\ndb.createCollection(\"categories\", ");
    assertTrue(block >= 0, "patterns.md shows the validator in mongosh");
    int from = page.indexOf('{', block);
    int to = page.lastIndexOf(')', page.indexOf("```", block + 5));
    Document options = Document.parse(page.substring(from, to));
    assertEquals(TreePattern.ARRAY_OF_ANCESTORS.validator(), options.get("validator"));
  }

  private static java.nio.file.Path source() {
    return DocsPages.testSource("DocsExamplesTest.java");
  }
}
