package dev.arbor.cli;

import static dev.arbor.cli.Cli.onServer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.mongo.TreePattern;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line run in-process against the test server: exit codes, stdout and stderr. */
class CliTest {
  static final Path EXAMPLE = Path.of("..", "examples", "categories.json");

  @TempDir
  Path dir;

  MongoCollection<Document> collection;
  String name;

  @BeforeEach
  void freshCollection() {
    collection = MongoTestServer.get().freshCollection();
    name = collection.getNamespace().getCollectionName();
  }

  /**
   * The manual's nested sets as the manual writes them (root {@code parent: 0}, no depths): {@code
   * arbor check} recognises the pattern and finds the tree sound, and the export is the tree.
   * (Before stop 59 it listed the root's parent and every depth, exit code 3.)
   */
  @Test
  void theManualsNestedSetsAreCheckedSoundAsWritten() throws IOException {
    for (String line : List.of("{_id: 'Books', parent: 0, left: 1, right: 12}",
        "{_id: 'Programming', parent: 'Books', left: 2, right: 11}",
        "{_id: 'Languages', parent: 'Programming', left: 3, right: 4}",
        "{_id: 'Databases', parent: 'Programming', left: 5, right: 10}",
        "{_id: 'MongoDB', parent: 'Databases', left: 6, right: 7}",
        "{_id: 'dbm', parent: 'Databases', left: 8, right: 9}")) {
      collection.insertOne(Document.parse(line));
    }
    Cli.Result check = Cli.run(onServer("check", "-c", name));
    assertEquals(0, check.exit(), check::toString);
    assertTrue(check.stderr().contains("laid out in nested-sets"), check::toString);
    Path exported = dir.resolve("manual.json");
    Cli.Result export = Cli.run(onServer("export", exported.toString(), "-q", "-c", name));
    assertEquals(0, export.exit(), export::toString);
    assertEquals(Tree.parse("Books(Programming(Languages Databases(MongoDB dbm)))"),
        TreeJson.read(Files.newInputStream(exported)));
    assertEquals(0L, collection.countDocuments(new Document("arborDepth",
        new Document("$exists", true))), "check and export write nothing");
  }

  @Test
  void fieldNamesOfAnotherToolAreReadCheckedRepairedExportedAndWritten() throws IOException {
    collection.insertMany(List.of(
        new Document("_id", "Books").append("parentId", null).append("position", 0),
        new Document("_id", "Programming").append("parentId", "Books").append("position", 0),
        new Document("_id", "Databases").append("parentId", "Programming").append("position", 2),
        new Document("_id", "Languages").append("parentId", "Programming")
            .append("rank", "gold"))); // no position yet: repair gives it one; rank is data
    String[] fields = {"--field", "parent=parentId", "--field", "RANK=position"};
    Cli.Result check = Cli.run(onServer(join(new String[] {"check", "-c", name, "-p",
        "parent-references"}, fields)));
    assertEquals(Arbor.EXIT_PROBLEMS, check.exit(), check::toString);
    assertEquals(List.of("node 'Languages': position is missing or not a number: null"),
        check.out().lines().toList());
    Cli.Result repair = Cli.run(onServer(join(new String[] {"repair", "-c", name, "-p",
        "parent-references"}, fields)));
    assertEquals(0, repair.exit(), repair::toString);
    Path exported = dir.resolve("tree.json");
    Cli.Result export = Cli.run(onServer(join(new String[] {"export", exported.toString(), "-q",
        "-c", name, "-p", "parent-references"}, fields)));
    assertEquals(0, export.exit(), export::toString);
    String json = Files.readString(exported);
    assertTrue(json.contains("\"rank\": \"gold\""), json);
    assertFalse(json.contains("position") || json.contains("parentId"), json);
    Cli.Result graft = Cli.runWithStdin("[{\"id\": \"Rust\"}]".getBytes(UTF_8),
        onServer(join(new String[] {"import", "-", "--under", "Languages", "-c", name, "-p",
            "parent-references"}, fields)));
    assertEquals(0, graft.exit(), graft::toString);
    Document rust = collection.find(new Document("_id", "Rust")).first();
    assertEquals("Languages", rust.get("parentId"), rust::toJson);
    assertTrue(rust.get("position") instanceof Number, rust::toJson);
    assertFalse(rust.containsKey("parent") || rust.containsKey("arborRank"), rust::toJson);

    // without the names the collection is not read as parent references at all
    Cli.Result unnamed = Cli.run(onServer("check", "-c", name, "-p", "parent-references"));
    assertEquals(Arbor.EXIT_PROBLEMS, unnamed.exit(), unnamed::toString);
    assertTrue(unnamed.out().contains("TreeOptions.withFieldName"), unnamed::toString);

    // names that cannot work are bad command lines, before anything connects or is written
    for (String[] bad : new String[][] {{"--field", "path=p"}, {"--field", "nope=x"},
        {"--field", "parent=$p"}, {"--field", "parent=position", "--field", "rank=position"}}) {
      Cli.Result refused = Cli.run(onServer(join(new String[] {"check", "-c", name, "-p",
          "parent-references"}, bad)));
      assertEquals(Arbor.EXIT_USAGE, refused.exit(), refused::toString);
      assertTrue(refused.stderr().contains("invalid --field"), refused::toString);
    }
  }

  @Test
  void objectIdTreesImportExportAndConvertWithTheirCanonicalStrings() throws IOException {
    String a = "65a000000000000000000001";
    String b = "65a000000000000000000002";
    Path file = dir.resolve("oids.json");
    Files.writeString(file, dev.arbor.core.json.TreeJson.toJson(
        dev.arbor.core.Tree.parse(a + "(" + b + ")")));
    Cli.Result imported = Cli.run(onServer("import", file.toString(), "-c", name,
        "-p", "array-of-ancestors", "--id-type", "objectid"));
    assertEquals(0, imported.exit(), imported::toString);
    assertTrue(imported.stderr().contains("imported 2 nodes"), imported::toString);
    Document child = collection.find(new Document("_id", new org.bson.types.ObjectId(b))).first();
    assertEquals(new org.bson.types.ObjectId(a), child.get("parent"), child::toJson);
    Path exported = dir.resolve("back.json");
    Cli.Result export = Cli.run(onServer("export", exported.toString(), "-q", "-c", name,
        "-p", "array-of-ancestors", "--id-type", "objectid"));
    assertEquals(0, export.exit(), export::toString);
    assertArrayEquals(Files.readAllBytes(file), Files.readAllBytes(exported));
    Cli.Result check = Cli.run(onServer("check", "-c", name, "-p", "array-of-ancestors",
        "--id-type", "OBJECT_ID"));
    assertTrue(check.stderr().contains("sound, 2 nodes"), check::toString);
    Cli.Result converted = Cli.run(onServer("convert", "-c", name, "-p", "array-of-ancestors",
        "--id-type", "objectid", "--to-collection", name + "_s", "--to-pattern", "nested-sets"));
    assertEquals(0, converted.exit(), converted::toString);
    assertEquals(b, MongoTestServer.get().database().getCollection(name + "_s")
        .find(new Document("parent", a)).first().get("_id"));
    Cli.Result bad = Cli.run(onServer("check", "-c", name, "-p", "array-of-ancestors",
        "--id-type", "int"));
    assertEquals(Arbor.EXIT_USAGE, bad.exit(), bad::toString);
    assertTrue(bad.stderr().contains("string, objectid, uuid, long"), bad::toString);
  }

  /**
   * A collection whose nodes carry dates (a {@code createdAt} of another application) exports
   * them as Extended JSON's {@code $date} and imports them back as BSON dates. (Before, export
   * refused it: "attribute 'created' of node 'r' is a java.util.Date, which has no form in the
   * JSON tree format"; found by a trial on collections made by others.)
   */
  @Test
  void datesInTheNodesAreExportedAndImportedBack() throws IOException {
    java.util.Date created = new java.util.Date(1577836800123L);
    collection.insertMany(List.of(
        new Document("_id", "r").append("parent", null).append("arborRank", 0)
            .append("created", created),
        new Document("_id", "c").append("parent", "r").append("arborRank", 0)
            .append("log", List.of(new Document("at", new java.util.Date(0L))))));
    Path exported = dir.resolve("dates.json");
    Cli.Result export = Cli.run(onServer("export", exported.toString(), "-q", "-c", name,
        "-p", "parent-references"));
    assertEquals(0, export.exit(), export::toString);
    String json = Files.readString(exported);
    assertTrue(json.contains("\"created\": {\"$date\": \"2020-01-01T00:00:00.123Z\"}"), json);
    Cli.Result imported = Cli.run(onServer("import", exported.toString(), "-c", name + "_b",
        "-p", "nested-sets"));
    assertEquals(0, imported.exit(), imported::toString);
    com.mongodb.client.MongoCollection<Document> back =
        MongoTestServer.get().database().getCollection(name + "_b");
    assertEquals(created, back.find(new Document("_id", "r")).first().get("created"));
    assertEquals(new java.util.Date(0L), back.find(new Document("_id", "c")).first()
        .getList("log", Document.class).get(0).get("at"));
  }

  private static String[] join(String[] a, String[] b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void importThenExportGivesTheExampleFileBack() throws IOException {
    Cli.Result imported = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "array-of-ancestors"));
    assertEquals(0, imported.exit(), imported::toString);
    assertEquals("", imported.out());
    assertEquals(1, imported.errLines().size(), imported::toString);
    assertTrue(imported.stderr().startsWith("imported 6 nodes from " + EXAMPLE + " into "),
        imported::toString);
    assertEquals(6, Connection.nodes(collection));

    Path exported = dir.resolve("out.json");
    Cli.Result export = Cli.run(onServer("export", exported.toString(), "-q", "-c", name,
        "-p", "array-of-ancestors"));
    assertEquals(0, export.exit(), export::toString);
    assertEquals("", export.stderr());
    assertArrayEquals(Files.readAllBytes(EXAMPLE), Files.readAllBytes(exported));
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(exported), files.toList(), "no temporary file left behind");
    }
  }

  @Test
  void exampleKeepsItsValueTypes() throws IOException {
    Tree tree = TreeJson.read(Files.newInputStream(EXAMPLE));
    Map<String, Object> mongo = tree.get("MongoDB").attributes();
    assertEquals(4.5, mongo.get("stars"));
    assertEquals(2009, mongo.get("since"));
    assertEquals(Map.of("url", "https://www.mongodb.com", "docs", 1L), mongo.get("site"));
    assertEquals(List.of("Books", "Programming", "Databases"),
        List.of(tree.get("Books").id(), tree.get("Programming").id(),
            tree.get("MongoDB").parentId()));
  }

  /**
   * {@code --scope FIELD=VALUE} names one of several trees of a collection
   * ({@code TreeOptions.withScope}) in every command that reads or writes a tree: two trees
   * imported into one collection, each checked (its pattern recognised within its scope),
   * repaired, exported and converted alone; an import into a tree that holds nodes is refused,
   * with {@code --replace} too (a rename would take the other trees), and writes nothing. (Before
   * stop 60 the command line had no {@code --scope}: a scoped tree could not be read by it.)
   */
  @Test
  void scopedTreesOfOneCollectionAreImportedCheckedExportedAndConvertedOneByOne()
      throws IOException {
    Path small = dir.resolve("small.json");
    try (var out = Files.newOutputStream(small)) {
      TreeJson.write(Tree.parse("a(b c(d))"), out);
    }
    Cli.Result acme = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "materialized-paths", "--scope", "tenant=acme", "-q"));
    assertEquals(0, acme.exit(), acme::toString);
    Cli.Result zero = Cli.run(onServer("import", small.toString(), "-c", name,
        "-p", "materialized-paths", "--scope", "tenant=0", "-q"));
    assertEquals(0, zero.exit(), zero::toString);
    Document zeroNodes = new Document("tenant", 0).append("_id.id", new Document("$exists", true));
    assertEquals(4, collection.countDocuments(zeroNodes));
    assertEquals(4, collection.countDocuments(new Document("tenant",
        new Document("$type", "int")).append("_id.id", new Document("$exists", true))),
        "tenant=0 is the number 0");
    dev.arbor.core.TreeStore acmeTree = TreePattern.MATERIALIZED_PATHS.open(collection,
        dev.arbor.mongo.TreeOptions.defaults().withScope("tenant", "acme"));
    assertEquals(example(), acmeTree.snapshot());

    Cli.Result check = Cli.run(onServer("check", "-c", name, "--scope", "tenant=acme"));
    assertEquals(0, check.exit(), check::toString);
    assertTrue(check.stderr().contains("laid out in materialized-paths"), check::toString);
    assertTrue(check.stderr().contains("(materialized-paths, scope tenant=acme): sound, "
        + example().size() + " nodes"), check::toString);
    Cli.Result repair = Cli.run(onServer("repair", "-c", name, "-p", "materialized-paths",
        "--scope", "tenant=0"));
    assertEquals(0, repair.exit(), repair::toString);
    assertTrue(repair.stderr().contains("sound, 4 nodes, nothing to repair"), repair::toString);

    Path exported = dir.resolve("zero.json");
    Cli.Result export = Cli.run(onServer("export", exported.toString(), "-q", "-c", name,
        "--scope", "tenant=0"));
    assertEquals(0, export.exit(), export::toString);
    assertEquals(Tree.parse("a(b c(d))"), TreeJson.read(Files.newInputStream(exported)));

    for (String replace : List.of("-q", "--replace")) {
      Cli.Result refused = Cli.run(onServer("import", small.toString(), "-c", name,
          "-p", "materialized-paths", "--scope", "tenant=acme", replace));
      assertEquals(Arbor.EXIT_FAILURE, refused.exit(), refused::toString);
      assertTrue(refused.stderr().contains("the tree of " + db() + "." + name
          + " (materialized-paths, scope tenant=acme) is not empty (" + example().size()
          + " nodes)"), refused::toString);
      assertEquals(replace.equals("--replace"),
          refused.stderr().contains("--replace does not replace one tree"), refused::toString);
      assertEquals(example(), acmeTree.snapshot());
      assertEquals(4, collection.countDocuments(zeroNodes));
    }

    Cli.Result converted = Cli.run(onServer("convert", "-c", name, "--scope", "tenant=acme",
        "--to-collection", name + "_sets", "--to-pattern", "nested-sets", "--to-scope",
        "tenant={\"org\": \"acme\"}", "-q"));
    assertEquals(0, converted.exit(), converted::toString);
    assertEquals(example(), TreePattern.NESTED_SETS.open(
        MongoTestServer.get().database().getCollection(name + "_sets"),
        dev.arbor.mongo.TreeOptions.defaults().withScope("tenant", new Document("org", "acme")))
        .snapshot());
    Cli.Result inPlace = Cli.run(onServer("convert", "-c", name, "--scope", "tenant=acme",
        "--to-pattern", "nested-sets", "--replace"));
    assertEquals(Arbor.EXIT_FAILURE, inPlace.exit(), inPlace::toString);
    assertTrue(inPlace.stderr().contains("a scoped tree is not converted in place"),
        inPlace::toString);
    assertEquals(example(), acmeTree.snapshot());

    Cli.Result bad = Cli.run(onServer("check", "-c", name, "--scope", "tenant"));
    assertEquals(Arbor.EXIT_USAGE, bad.exit(), bad::toString);
    assertTrue(bad.stderr().contains("invalid --scope 'tenant': give FIELD=VALUE"),
        bad::toString);
    Cli.Result ids = Cli.run(onServer("export", "-c", name, "-p", "materialized-paths",
        "--scope", "tenant=acme", "--id-type", "long"));
    assertEquals(Arbor.EXIT_USAGE, ids.exit(), ids::toString);
    assertTrue(ids.stderr().contains("--scope and --id-type long exclude each other"),
        ids::toString);
    Cli.Result toIds = Cli.run(onServer("convert", "-c", name, "--scope", "tenant=acme",
        "--to-collection", name + "_ids", "--to-pattern", "nested-sets", "--to-scope",
        "tenant=acme", "--to-id-type", "long"));
    assertEquals(Arbor.EXIT_USAGE, toIds.exit(), toIds::toString);
    assertTrue(toIds.stderr().contains("--to-scope and --to-id-type long exclude each other"),
        toIds::toString);
  }

  @Test
  void importIntoACollectionWithDocumentsIsRefusedUnlessReplacing() {
    pattern(TreePattern.NESTED_SETS).load(Tree.parse("x(y z)"));
    Cli.Result refused = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "nested-sets"));
    assertEquals(Arbor.EXIT_FAILURE, refused.exit(), refused::toString);
    assertEquals(List.of("arbor import: collection " + db() + "." + name
        + " (nested-sets) is not empty (3 nodes): add --replace to replace it"),
        refused.errLines());
    assertEquals(Tree.parse("x(y z)"), pattern(TreePattern.NESTED_SETS).snapshot());

    Cli.Result replaced = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "nested-sets", "--replace", "-q"));
    assertEquals(0, replaced.exit(), replaced::toString);
    assertEquals(example(), pattern(TreePattern.NESTED_SETS).snapshot());
    assertEquals(List.of(), pattern(TreePattern.NESTED_SETS).check());
    assertEquals(List.of(name), collectionsNamed(name), "the temporary collection is gone");
  }

  @Test
  void aGraftOfAnIdTheTreeHoldsOrUnderAMissingNodeNamesThemAndSaysNothingWasWritten()
      throws IOException {
    pattern(TreePattern.MATERIALIZED_PATHS).load(Tree.parse("Books(Databases(Postgres))"));
    Tree before = pattern(TreePattern.MATERIALIZED_PATHS).snapshot();
    Path more = Files.writeString(dir.resolve("more.json"), "[{\"id\": \"SQLite\"},"
        + " {\"id\": \"Postgres\"}]");
    Cli.Result again = Cli.run(onServer("import", more.toString(), "-c", name,
        "-p", "materialized-paths", "--under", "Databases"));
    assertEquals(Arbor.EXIT_FAILURE, again.exit(), again::toString);
    assertEquals(List.of("arbor import: " + more + ": node 'Postgres' already exists in the"
        + " tree of " + db() + "." + name + " (materialized-paths): a graft adds new nodes"
        + " only; remove it from the file; nothing was written"), again.errLines());
    assertEquals(before, pattern(TreePattern.MATERIALIZED_PATHS).snapshot());

    Cli.Result unknown = Cli.run(onServer("import", more.toString(), "-c", name,
        "-p", "materialized-paths", "--under", "Storage"));
    assertEquals(Arbor.EXIT_FAILURE, unknown.exit(), unknown::toString);
    assertEquals(List.of("arbor import: --under 'Storage': no such node in the tree of " + db()
        + "." + name + " (materialized-paths); nothing was written"), unknown.errLines());
    assertEquals(before, pattern(TreePattern.MATERIALIZED_PATHS).snapshot());
  }

  @Test
  void oneNodeIsCountedInTheSingular() throws IOException {
    Path one = Files.writeString(dir.resolve("one.json"), "[{\"id\": \"Books\"}]");
    Cli.Result imported = Cli.run(onServer("import", one.toString(), "-c", name, "-p",
        "nested-sets"));
    assertTrue(imported.stderr().contains("imported 1 node from "), imported::toString);
    Path more = Files.writeString(dir.resolve("more.json"), "[{\"id\": \"Rust\"}]");
    Cli.Result grafted = Cli.run(onServer("import", more.toString(), "-c", name, "-p",
        "nested-sets", "--under", "Books"));
    assertTrue(grafted.stderr().contains("grafted 1 node from "), grafted::toString);
    Cli.Result exported = Cli.run(onServer("export", "-c", name, "-p", "nested-sets"));
    assertTrue(exported.stderr().contains("exported 2 nodes from "), exported::toString);
    Cli.Result converted = Cli.run(onServer("convert", "-c", name, "-p", "nested-sets",
        "--to-collection", name + "_one", "--to-pattern", "parent-references"));
    assertTrue(converted.stderr().contains("converted 2 nodes from "), converted::toString);
    MongoCollection<Document> single = MongoTestServer.get().freshCollection();
    String s = single.getNamespace().getCollectionName();
    pattern(TreePattern.NESTED_SETS).delete("Rust");
    Cli.Result alone = Cli.run(onServer("export", "-c", name, "-p", "nested-sets"));
    assertTrue(alone.stderr().contains("exported 1 node from "), alone::toString);
    Cli.Result copied = Cli.run(onServer("convert", "-c", name, "-p", "nested-sets",
        "--to-collection", s, "--to-pattern", "parent-references", "--replace"));
    assertTrue(copied.stderr().contains("converted 1 node from "), copied::toString);
  }

  @Test
  void graftAddsTheFileUnderANodeOrAsRootsAllOrNothing() throws IOException {
    pattern(TreePattern.NESTED_SETS).load(Tree.parse("x(y z)"));
    Cli.Result under = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "nested-sets", "--under", "y"));
    assertEquals(0, under.exit(), under::toString);
    assertTrue(under.stderr().contains("grafted 6 nodes from " + EXAMPLE + " into ")
        && under.stderr().contains(" under 'y'"), under::toString);
    dev.arbor.core.InMemoryTreeStore expected = new dev.arbor.core.InMemoryTreeStore();
    expected.load(Tree.parse("x(y z)"));
    expected.graft("y", example());
    assertEquals(expected.snapshot(), pattern(TreePattern.NESTED_SETS).snapshot());
    assertEquals(List.of(), pattern(TreePattern.NESTED_SETS).check());

    // the same ids again: refused naming one, nothing written
    Cli.Result again = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "nested-sets", "--graft"));
    assertEquals(Arbor.EXIT_FAILURE, again.exit(), again::toString);
    assertEquals(1, again.errLines().size(), again::toString);
    assertTrue(again.errLines().get(0).contains("already exists"), again::toString);
    assertEquals(expected.snapshot(), pattern(TreePattern.NESTED_SETS).snapshot());

    Cli.Result missing = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "nested-sets", "--under", "nope"));
    assertEquals(Arbor.EXIT_FAILURE, missing.exit(), missing::toString);
    assertEquals(1, missing.errLines().size(), missing::toString);
    assertTrue(missing.errLines().get(0).contains("'nope'"), missing::toString);
    assertEquals(expected.snapshot(), pattern(TreePattern.NESTED_SETS).snapshot());

    Cli.Result both = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "nested-sets", "--graft", "--replace"));
    assertEquals(Arbor.EXIT_USAGE, both.exit(), both::toString);
    assertTrue(both.errLines().get(0).contains("--replace and --graft exclude each other"),
        both::toString);
  }

  @Test
  void anIdRepeatedBatchesLaterIsNamedWithItsLineAndTheTreeReplacedIsKept() throws IOException {
    pattern(TreePattern.PARENT_REFERENCES).load(Tree.parse("x(y z)"));
    // more nodes than a load's batch: the repeat is met after batches were written, and undone
    Path big = dir.resolve("repeat.json");
    StringBuilder json = new StringBuilder("[\n");
    for (int i = 0; i < 12_000; i++) {
      json.append("{\"id\": \"n").append(i).append("\"},\n");
    }
    json.append("{\"id\": \"n7\"}\n]\n");
    Files.writeString(big, json);
    Cli.Result result = Cli.run(onServer("import", big.toString(), "-c", name,
        "-p", "parent-references", "--replace", "-q"));
    assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
    assertEquals(List.of("arbor import: " + big + ": line 12002, column 8: duplicate id 'n7' (a"
        + " node nested under itself, a cycle, is a duplicate too)"), result.errLines());
    assertEquals(Tree.parse("x(y z)"), pattern(TreePattern.PARENT_REFERENCES).snapshot());
    // grafted, an id the tree has is the store's refusal
    Files.writeString(big, "[{\"id\": \"new\", \"children\": [{\"id\": \"y\"}]}]");
    result = Cli.run(onServer("import", big.toString(), "-c", name, "-p", "parent-references",
        "--under", "x"));
    assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
    assertEquals(1, result.errLines().size(), result::toString);
    assertTrue(result.errLines().get(0).contains("'y'"), result::toString);
    assertEquals(Tree.parse("x(y z)"), pattern(TreePattern.PARENT_REFERENCES).snapshot());
  }

  @Test
  void malformedFileIsRefusedWithLineAndReasonAndNothingIsWritten() throws IOException {
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, "[\n  {\"id\": \"a\", \"children\": [\n    {\"id\": \"b\"},\n"
        + "    {\"id\": \"a\"}\n  ]}\n]\n");
    Cli.Result result = Cli.run(onServer("import", bad.toString(), "-c", name,
        "-p", "parent-references"));
    assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
    assertEquals(List.of("arbor import: " + bad + ": line 4, column 12: duplicate id 'a' (a node"
        + " nested under itself, a cycle, is a duplicate too)"), result.errLines());
    assertEquals(0, Connection.nodes(collection));
    assertFalse(collectionsNamed(name).contains(name), "not even created");

    Files.writeString(bad, "[\n  {\"id\": \"a\", \"children\": \"b\"}\n]\n");
    result = Cli.run(onServer("import", bad.toString(), "-c", name, "-p", "parent-references"));
    assertEquals(List.of("arbor import: " + bad + ": line 2, column 27: 'children' of node 'a'"
        + " must be an array, found a string"), result.errLines());

    result = Cli.runWithStdin("[{\"id\": \"a\"},\n{\"id\": 3}]".getBytes(UTF_8),
        onServer("import", "-", "-c", name, "-p", "parent-references"));
    assertEquals(List.of("arbor import: -: line 2, column 8: 'id' must be a string, found a"
        + " number"), result.errLines());
    assertEquals(0, Connection.nodes(collection));
  }

  @Test
  void attributeTheTargetPatternReservesIsRefusedBeforeAnyWrite() {
    Cli.Result result = Cli.runWithStdin(
        "[{\"id\": \"a\", \"children\": [{\"id\": \"b\", \"attributes\": {\"parent\": 1}}]}]"
            .getBytes(UTF_8),
        onServer("import", "-", "-c", name, "-p", "parent-references"));
    assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
    assertEquals(1, result.errLines().size(), result::toString);
    assertEquals("arbor import: -: line 1, column 54: attribute 'parent' of node 'b': reserved by"
        + " parent-references for the tree structure (reserved: _id, arborJournal, arborLane, arborLock, arborOp, arborRank, parent)",
        result.errLines().get(0));
    assertEquals(0, Connection.nodes(collection));
  }

  @Test
  void checkPrintsOneLinePerProblemNamingTheNode() {
    Cli.Result sound = Cli.run(onServer("check", "-c", name, "-p", "array-of-ancestors"));
    assertEquals(Arbor.EXIT_FAILURE, sound.exit(), "no such collection: " + sound);
    assertEquals(List.of("arbor check: collection " + db() + "." + name + " does not exist"),
        sound.errLines());

    pattern(TreePattern.ARRAY_OF_ANCESTORS).load(Tree.parse("a(b c)"));
    sound = Cli.run(onServer("check", "-c", name, "-p", "array-of-ancestors"));
    assertEquals(0, sound.exit(), sound::toString);
    assertEquals("", sound.out());
    assertTrue(sound.stderr().contains("sound, 3 nodes"), sound::toString);

    collection.insertOne(new Document("_id", "ghost").append("parent", "nobody")
        .append("ancestors", List.of("nobody")).append("arborRank", 0L));
    collection.updateOne(new Document("_id", "c"),
        new Document("$set", new Document("ancestors", List.of("b"))));
    Cli.Result broken = Cli.run(onServer("check", "-q", "-c", name, "-p",
        "array-of-ancestors"));
    assertEquals(Arbor.EXIT_PROBLEMS, broken.exit(), broken::toString);
    List<String> lines = broken.out().lines().toList();
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("node 'ghost': ")), broken::toString);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("node 'c': ")), broken::toString);
    assertTrue(lines.stream().allMatch(l -> l.startsWith("node '")), broken::toString);
    assertEquals("", broken.stderr());
  }

  @Test
  void repairCompletesAHandWrittenCollectionAndReportsWhatRemains() {
    // The manual's parent references, written by hand: no sibling order.
    collection.insertMany(List.of(new Document("_id", "Books").append("parent", null),
        new Document("_id", "Programming").append("parent", "Books"),
        new Document("_id", "Languages").append("parent", "Programming"),
        new Document("_id", "Databases").append("parent", "Programming")));
    String[] where = {"-c", name, "-p", "parent-references"};
    Cli.Result before = Cli.run(onServer(concat(new String[] {"check", "-q"}, where)));
    assertEquals(Arbor.EXIT_PROBLEMS, before.exit(), before::toString);

    Cli.Result repaired = Cli.run(onServer(concat(new String[] {"repair"}, where)));
    assertEquals(0, repaired.exit(), repaired::toString);
    assertEquals("", repaired.out());
    assertTrue(repaired.errLines().stream().anyMatch(l -> l.startsWith("arbor: found: node '")),
        repaired::toString);
    assertTrue(repaired.stderr().contains("found, 0 remain, 4 nodes"), repaired::toString);
    assertEquals(Tree.parse("Books(Programming(Languages Databases))"),
        pattern(TreePattern.PARENT_REFERENCES).snapshot());

    Cli.Result again = Cli.run(onServer(concat(new String[] {"repair"}, where)));
    assertEquals(0, again.exit(), again::toString);
    assertTrue(again.stderr().contains("sound, 4 nodes, nothing to repair"), again::toString);

    // A cycle of parents cannot be settled without guessing: it remains, named on stdout.
    collection.insertMany(List.of(new Document("_id", "x").append("parent", "y"),
        new Document("_id", "y").append("parent", "x")));
    Cli.Result cycle = Cli.run(onServer(concat(new String[] {"repair", "-q"}, where)));
    assertEquals(Arbor.EXIT_PROBLEMS, cycle.exit(), cycle::toString);
    assertTrue(cycle.out().lines().anyMatch(l -> l.startsWith("node 'x': ")), cycle::toString);
    assertTrue(cycle.out().lines().allMatch(l -> l.startsWith("node '")), cycle::toString);
    assertEquals("", cycle.stderr());
  }

  @Test
  void checkAndRepairSayWhatToDoAboutTheProblemsTheyLeave() {
    collection.insertMany(List.of(new Document("_id", "Books").append("parent", null),
        new Document("_id", "Lost").append("parent", "Nowhere")));
    String[] where = {"-c", name, "-p", "parent-references"};
    Cli.Result check = Cli.run(onServer(concat(new String[] {"check"}, where)));
    assertEquals(Arbor.EXIT_PROBLEMS, check.exit(), check::toString);
    assertTrue(check.errLines().contains("arbor: run 'arbor repair' with the same options: it"
        + " rebuilds what the stored structure determines and lists what it cannot settle"
        + " without guessing"), check::toString);

    Cli.Result repair = Cli.run(onServer(concat(new String[] {"repair"}, where)));
    assertEquals(Arbor.EXIT_PROBLEMS, repair.exit(), repair::toString);
    assertEquals(List.of("node 'Lost': parent 'Nowhere' does not exist (orphan)"),
        repair.out().lines().toList());
    assertTrue(repair.errLines().contains("arbor: what remains needs your decision: move each"
        + " node named to where it belongs (TreeStore.move) or delete it (TreeStore.delete),"
        + " then run 'arbor check'"), repair::toString);
  }

  @Test
  void repairRefusesAPatternWhoseFieldsNoDocumentHas() {
    // No document has the fields of any pattern: repair would add a whole structure.
    collection.insertMany(List.of(new Document("_id", "a").append("title", "A"),
        new Document("_id", "b").append("title", "B")));
    List<Document> before = collection.find().into(new java.util.ArrayList<>());
    Cli.Result refused = Cli.run(onServer("repair", "-c", name, "-p", "nested-sets"));
    assertEquals(Arbor.EXIT_FAILURE, refused.exit(), refused::toString);
    assertEquals(List.of("arbor repair: no document of " + db() + "." + name + " has the field"
        + " 'left' that nested-sets builds on: is --pattern right? (--force repairs anyway)"),
        refused.errLines());
    assertEquals(before, collection.find().into(new java.util.ArrayList<>()), "untouched");
  }

  @Test
  void exportOfADamagedCollectionIsRefusedNamingTheFirstProblem() {
    pattern(TreePattern.ARRAY_OF_ANCESTORS).load(Tree.parse("a(b c(d))"));
    collection.updateOne(new Document("_id", "d"),
        new Document("$set", new Document("ancestors", List.of("b"))));
    Cli.Result result = Cli.run(onServer("export", "-c", name, "-p", "array-of-ancestors"));
    assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
    assertEquals(1, result.errLines().size(), result::toString);
    assertTrue(result.stderr().startsWith("arbor export: collection " + db() + "." + name
        + " (array-of-ancestors) has 1 problem, the first: node 'd': "), result::toString);
    assertTrue(result.stderr().contains("(a wrong --pattern, or damage: 'arbor check' lists"),
        result::toString);
    assertEquals("", result.out());
  }

  @Test
  void convertInPlaceNeedsReplace() {
    pattern(TreePattern.PARENT_REFERENCES).load(example());
    Cli.Result refused = Cli.run(onServer("convert", "-c", name, "-p", "parent-references",
        "--to-pattern", "materialized-paths"));
    assertEquals(Arbor.EXIT_FAILURE, refused.exit(), refused::toString);
    assertTrue(refused.stderr().contains("add --replace to convert it in place"),
        refused::toString);
    assertEquals(example(), pattern(TreePattern.PARENT_REFERENCES).snapshot());

    Cli.Result converted = Cli.run(onServer("convert", "-q", "-c", name,
        "-p", "parent-references", "--to-pattern", "materialized-paths", "--replace"));
    assertEquals(0, converted.exit(), converted::toString);
    assertEquals(example(), pattern(TreePattern.MATERIALIZED_PATHS).snapshot());
    assertEquals(List.of(), pattern(TreePattern.MATERIALIZED_PATHS).check());
    assertEquals(List.of(name), collectionsNamed(name));
  }

  @Test
  void convertNamesTheNodeAndTheSourceOfWhatTheTargetCannotTakeAndHowToKeepIt() {
    pattern(TreePattern.PARENT_REFERENCES).load(Tree.builder().add("a", null, Map.of())
        .add("b", "a", Map.of("left", 1)).build());
    MongoCollection<Document> other = MongoTestServer.get().freshCollection();
    String target = other.getNamespace().getCollectionName();
    Cli.Result refused = Cli.run(onServer("convert", "-c", name, "-p", "parent-references",
        "--to-collection", target, "--to-pattern", "nested-sets"));
    assertEquals(Arbor.EXIT_FAILURE, refused.exit(), refused::toString);
    assertEquals(List.of("arbor convert: node 'b' of " + db() + "." + name
        + " (parent-references): attribute 'left' is reserved by nested-sets for the tree"
        + " structure (reserved: _id, arborDepth, arborJournal, arborLane, arborLock, arborOp,"
        + " left, parent, right); keep it by naming the target's field otherwise (--to-field"
        + " left=NAME)"), refused.errLines(), refused::toString);
    assertEquals(0, other.countDocuments(), "nothing written");
    Cli.Result notLong = Cli.run(onServer("convert", "-c", name, "-p", "parent-references",
        "--to-collection", target, "--to-pattern", "parent-references", "--to-id-type", "long"));
    assertEquals(List.of("arbor convert: node 'a' of " + db() + "." + name
        + " (parent-references): not a canonical LONG id (a decimal long without sign '+' or"
        + " leading zeros): the target stores its ids as LONG (--to-id-type long)"),
        notLong.errLines(), notLong::toString);
    assertEquals(0, other.countDocuments(), "nothing written");

    Cli.Result kept = Cli.run(onServer("convert", "-q", "-c", name, "-p", "parent-references",
        "--to-collection", target, "--to-pattern", "nested-sets", "--to-field", "left=lft"));
    assertEquals(0, kept.exit(), kept::toString);
    assertEquals(Map.of("left", 1), TreePattern.NESTED_SETS.open(other, dev.arbor.mongo
        .TreeOptions.defaults().withFieldName(dev.arbor.mongo.TreeField.LEFT, "lft"))
        .snapshot().get("b").attributes());
  }

  @Test
  void convertIntoACollectionWithDocumentsIsRefused() {
    pattern(TreePattern.PARENT_REFERENCES).load(example());
    MongoCollection<Document> other = MongoTestServer.get().freshCollection();
    TreePattern.CHILD_REFERENCES.open(other).load(Tree.parse("keep"));
    Cli.Result refused = Cli.run(onServer("convert", "-c", name, "-p", "parent-references",
        "--to-collection", other.getNamespace().getCollectionName(),
        "--to-pattern", "child-references"));
    assertEquals(Arbor.EXIT_FAILURE, refused.exit(), refused::toString);
    assertTrue(refused.stderr().contains("is not empty (1 node)"), refused::toString);
    assertEquals(Tree.parse("keep"), TreePattern.CHILD_REFERENCES.open(other).snapshot());
  }

  @Test
  void dataDirKeepsTheTreeBetweenRunsAndReplacesIt() throws IOException {
    Path data = dir.resolve("data");
    String[] where = {"--data-dir", data.toString(), "-c", "categories", "-p", "nested-sets"};
    Cli.Result imported = Cli.run(concat(new String[] {"import", EXAMPLE.toString(), "-q"},
        where));
    assertEquals(0, imported.exit(), imported::toString);
    assertTrue(Files.exists(data.resolve(Connection.DATA_FILE)));

    Cli.Result exported = Cli.run(concat(new String[] {"export", "-q"}, where));
    assertEquals(0, exported.exit(), exported::toString);
    assertArrayEquals(Files.readAllBytes(EXAMPLE), exported.stdout());

    Path other = dir.resolve("other.json");
    Files.writeString(other, "[{\"id\": \"only\"}]\n");
    Cli.Result replaced = Cli.run(concat(new String[] {"import", other.toString(), "-q",
        "--replace"}, where));
    assertEquals(0, replaced.exit(), replaced::toString);
    exported = Cli.run(concat(new String[] {"export", "-q"}, where));
    assertEquals("[\n  {\"id\": \"only\"}\n]\n", exported.out());

    Cli.Result check = Cli.run(concat(new String[] {"check", "-q"}, where));
    assertEquals(0, check.exit(), check::toString);
  }

  @Test
  void theTemporaryServerSaysSo() {
    Cli.Result result = Cli.run("check", "-c", "tree", "-p", "nested-sets");
    assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
    assertEquals(List.of(
        "arbor: no --uri or --data-dir: using a temporary in-memory server, which starts empty"
            + " and keeps nothing after exit",
        "arbor check: collection arbor.tree does not exist (the temporary in-memory server starts"
            + " empty: give --uri or --data-dir)"), result.errLines());
  }

  @Test
  void usageErrorsAreOneLineWithExitCode2() {
    Cli.Result unknownPattern = Cli.run("check", "-c", "t", "-p", "nested");
    assertEquals(Arbor.EXIT_USAGE, unknownPattern.exit());
    assertEquals(List.of("arbor check: Invalid value for option '--pattern': 'nested' is not a"
        + " pattern (expected one of: parent-references, child-references, array-of-ancestors,"
        + " materialized-paths, nested-sets); see 'arbor check --help'"),
        unknownPattern.errLines());

    Cli.Result missing = Cli.run("export", "-p", "nested-sets");
    assertEquals(Arbor.EXIT_USAGE, missing.exit());
    assertEquals(1, missing.errLines().size(), missing::toString);
    assertTrue(missing.stderr().contains("Missing required option: '--collection=NAME'"),
        missing::toString);

    Cli.Result typo = Cli.run("import", "f.json", "-c", "x", "-p", "nested-sets", "--replac");
    assertEquals(Arbor.EXIT_USAGE, typo.exit());
    assertEquals(1, typo.errLines().size(), typo::toString);
    assertTrue(typo.stderr().contains("did you mean --replace?"), typo::toString);

    Cli.Result both = Cli.run("check", "-c", "t", "-p", "nested-sets", "--uri",
        "mongodb://localhost", "--data-dir", dir.toString());
    assertEquals(Arbor.EXIT_USAGE, both.exit());
    assertEquals(List.of("arbor check: --uri and --data-dir exclude each other: give one; see"
        + " 'arbor check --help'"), both.errLines());

    Cli.Result bare = Cli.run();
    assertEquals(Arbor.EXIT_USAGE, bare.exit());
    assertTrue(bare.stderr().startsWith("Usage: arbor"), bare::toString);
  }

  @Test
  void withoutPatternCheckExportConvertAndRepairRecogniseTheCollectionsPatternAndSaySo()
      throws IOException {
    for (TreePattern p : TreePattern.values()) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      String n = c.getNamespace().getCollectionName();
      p.open(c).load(example());
      String recognised = "arbor: no --pattern: collection " + db() + "." + n
          + " is laid out in " + Patterns.name(p);
      Cli.Result check = Cli.run(onServer("check", "-c", n));
      assertEquals(0, check.exit(), check::toString);
      assertEquals(recognised, check.errLines().get(0), check::toString);
      assertTrue(check.errLines().get(1).startsWith(db() + "." + n + " (" + Patterns.name(p)
          + "): sound, 6 nodes"), check::toString);

      Path exported = dir.resolve(n + ".json");
      Cli.Result export = Cli.run(onServer("export", exported.toString(), "-c", n));
      assertEquals(0, export.exit(), export::toString);
      assertEquals(recognised, export.errLines().get(0), export::toString);
      assertArrayEquals(Files.readAllBytes(EXAMPLE), Files.readAllBytes(exported), p::toString);

      Cli.Result quiet = Cli.run(onServer("check", "-q", "-c", n));
      assertEquals(0, quiet.exit(), quiet::toString);
      assertEquals("", quiet.stderr(), quiet::toString);
    }
    MongoCollection<Document> manual = MongoTestServer.get().freshCollection();
    String m = manual.getNamespace().getCollectionName();
    manual.insertMany(List.of(new Document("_id", "Books").append("parent", null),
        new Document("_id", "Programming").append("parent", "Books")));
    Cli.Result repair = Cli.run(onServer("repair", "-c", m));
    assertEquals(0, repair.exit(), repair::toString);
    assertEquals("arbor: no --pattern: collection " + db() + "." + m
        + " is laid out in parent-references", repair.errLines().get(0), repair::toString);
    assertTrue(manual.find(new Document("_id", "Programming")).first().get("arborRank")
        instanceof Number, repair::toString);
    Cli.Result convert = Cli.run(onServer("convert", "-c", m, "--to-collection", m + "_ns",
        "--to-pattern", "nested-sets"));
    assertEquals(0, convert.exit(), convert::toString);
    assertTrue(convert.stderr().contains("converted 2 nodes from " + db() + "." + m
        + " (parent-references)"), convert::toString);
  }

  @Test
  void withoutPatternOrIdTypeATreeOfAnotherIdTypeIsRecognisedWithItsIdType() throws IOException {
    String a = "65a000000000000000000001";
    Path file = dir.resolve("oids.json");
    Files.writeString(file, TreeJson.toJson(Tree.parse(a + "(65a000000000000000000002)")));
    Cli.Result imported = Cli.run(onServer("import", file.toString(), "-q", "-c", name,
        "-p", "array-of-ancestors", "--id-type", "objectid"));
    assertEquals(0, imported.exit(), imported::toString);

    Cli.Result check = Cli.run(onServer("check", "-c", name));
    assertEquals(0, check.exit(), check::toString);
    assertEquals("arbor: no --pattern: collection " + db() + "." + name + " is laid out in"
        + " array-of-ancestors, its node ids objectid (--id-type objectid)",
        check.errLines().get(0), check::toString);
    Path exported = dir.resolve("back.json");
    Cli.Result export = Cli.run(onServer("export", exported.toString(), "-q", "-c", name));
    assertEquals(0, export.exit(), export::toString);
    assertArrayEquals(Files.readAllBytes(file), Files.readAllBytes(exported));

    // with -p and no --id-type: the problems say --id-type; repair, which refuses, is not offered
    Cli.Result strings = Cli.run(onServer("check", "-c", name, "-p", "array-of-ancestors"));
    assertEquals(Arbor.EXIT_PROBLEMS, strings.exit(), strings::toString);
    assertTrue(strings.out().contains("--id-type objectid"), strings::toString);
    assertFalse(strings.stderr().contains("arbor repair"), strings::toString);
  }

  @Test
  void aCollectionOfScopedTreesIsNotCalledEmptyButNamedForWhatItHolds() {
    TreePattern.MATERIALIZED_PATHS.open(collection, dev.arbor.mongo.TreeOptions.defaults()
        .withScope("tenant", "acme")).insert("General", dev.arbor.core.Position.lastRoot());
    for (String command : List.of("check", "export", "repair")) {
      Cli.Result result = Cli.run(onServer(command, "-c", name));
      assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
      assertEquals(List.of("arbor " + command + ": collection " + db() + "." + name + " holds"
          + " trees with a scope (TreeOptions.withScope: each node's _id is {s: scope, id:"
          + " node id}): name one with --scope FIELD=VALUE"),
          result.errLines());
    }
    List<Document> before = collection.find().into(new java.util.ArrayList<>());
    Cli.Result load = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name, "-p",
        "materialized-paths"));
    assertEquals(Arbor.EXIT_FAILURE, load.exit(), load::toString);
    assertEquals(List.of("arbor import: collection " + db() + "." + name + " holds trees with a"
        + " scope (TreeOptions.withScope), which a tree without one does not join: give another"
        + " collection, a --scope of its own, or --replace to replace them"), load.errLines());
    assertEquals(before, collection.find().into(new java.util.ArrayList<>()), "nothing written");
  }

  @Test
  void withoutPatternAnEmptyOrUnrecognisableCollectionIsRefusedAskingForIt() {
    MongoTestServer.get().database().createCollection(name);
    Cli.Result empty = Cli.run(onServer("check", "-c", name));
    assertEquals(Arbor.EXIT_USAGE, empty.exit(), empty::toString);
    assertEquals(List.of("arbor check: collection " + db() + "." + name + " holds no nodes,"
        + " so its pattern cannot be recognised: give --pattern (-p): parent-references,"
        + " child-references, array-of-ancestors, materialized-paths, nested-sets; see"
        + " 'arbor check --help'"), empty.errLines());

    // one document in each of two patterns: they fit neither more than the other
    collection.insertMany(List.of(new Document("_id", "a").append("path", null),
        new Document("_id", "b").append("children", List.of())));
    List<Document> before = collection.find().into(new java.util.ArrayList<>());
    for (String command : List.of("export", "repair")) {
      Cli.Result ambiguous = Cli.run(onServer(command, "-c", name));
      assertEquals(Arbor.EXIT_USAGE, ambiguous.exit(), ambiguous::toString);
      assertEquals(List.of("arbor " + command + ": the node documents of collection " + db()
          + "." + name + " fit no one pattern (they have no pattern's structural fields, or"
          + " those of two patterns equally), so its pattern cannot be recognised: give"
          + " --pattern (-p): parent-references, child-references, array-of-ancestors,"
          + " materialized-paths, nested-sets; see 'arbor " + command + " --help'"),
          ambiguous.errLines());
      assertEquals(before, collection.find().into(new java.util.ArrayList<>()));
    }

    Cli.Result load = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name + "_new"));
    assertEquals(Arbor.EXIT_USAGE, load.exit(), load::toString);
    assertEquals(List.of("arbor import: give --pattern (-p), the pattern to store the tree in:"
        + " parent-references, child-references, array-of-ancestors, materialized-paths,"
        + " nested-sets; see 'arbor import --help'"), load.errLines());
  }

  @Test
  void progressLinesForLongPhasesAndNothingWhenQuiet() {
    Cli.Result result = Cli.run(onServer("import", EXAMPLE.toString(), "-c", name,
        "-p", "child-references", "--progress-interval", "1"));
    assertEquals(0, result.exit(), result::toString);
    assertTrue(result.errLines().stream().anyMatch(l -> l.startsWith("arbor: ")),
        result::toString);

    MongoCollection<Document> quiet = MongoTestServer.get().freshCollection();
    Cli.Result silent = Cli.run(onServer("import", EXAMPLE.toString(), "-q",
        "-c", quiet.getNamespace().getCollectionName(), "-p", "child-references",
        "--progress-interval", "1"));
    assertEquals(0, silent.exit(), silent::toString);
    assertEquals("", silent.stderr());
  }

  // ---------------------------------------------------------------------------------- helpers

  private dev.arbor.core.TreeStore pattern(TreePattern pattern) {
    return pattern.open(collection);
  }

  private static Tree example() {
    try {
      return TreeJson.read(Files.newInputStream(EXAMPLE));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String db() {
    return MongoTestServer.get().database().getName();
  }

  private static List<String> collectionsNamed(String prefix) {
    return MongoTestServer.get().database().listCollectionNames().into(new java.util.ArrayList<>())
        .stream().filter(n -> n.startsWith(prefix + ".") || n.equals(prefix)).sorted().toList();
  }

  private static String[] concat(String[] a, String[] b) {
    return Stream.concat(Stream.of(a), Stream.of(b)).toArray(String[]::new);
  }
}
