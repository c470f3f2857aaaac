package dev.arbor.cli;

import static dev.arbor.cli.Cli.onServer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteError;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import dev.arbor.core.Tree;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.Errors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line's messages and exit codes for the mistakes people make: one line each, in
 * words, without the driver's internals; a bad command line exits with 2, a failure with 1.
 */
class MessagesTest {
  /** A port nothing listens on, and a server selection timeout short enough for a test. */
  private static final String NOBODY = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300";

  @TempDir
  Path dir;

  @Test
  void namesMongoDbCannotTakeAreABadCommandLine() {
    assertOneLine(Cli.run("check", "-c", "", "-p", "nested-sets"), Arbor.EXIT_USAGE,
        "arbor check: invalid --collection '': a collection name cannot be empty; see 'arbor"
            + " check --help'");
    // The server refused this one with "WriteError{code=10156, ...}" after reading the file.
    assertOneLine(Cli.run("import", "missing.json", "-c", "system.users", "-p",
        "nested-sets"), Arbor.EXIT_USAGE, "arbor import: invalid --collection 'system.users':"
            + " names starting with 'system.' belong to MongoDB; see 'arbor import --help'");
    assertOneLine(Cli.run("export", "-c", "t", "-p", "nested-sets", "--db", "my.db"),
        Arbor.EXIT_USAGE, "arbor export: invalid --db 'my.db': a database name cannot contain"
            + " '.' (nor any of /\\. \"$*<>:|?); see 'arbor export --help'");
    assertOneLine(Cli.run("convert", "-c", "t", "-p", "nested-sets", "--to-pattern",
        "nested-sets", "--to-collection", "a$b"), Arbor.EXIT_USAGE, "arbor convert: invalid"
            + " --to-collection 'a$b': a collection name cannot contain '$'; see 'arbor convert"
            + " --help'");
  }

  @Test
  void aMalformedUriIsABadCommandLineAndIsNotRepeated() {
    Cli.Result result = Cli.run("check", "-c", "t", "-p", "nested-sets", "--uri",
        "mongo://admin:s3cret@db1");
    assertEquals(Arbor.EXIT_USAGE, result.exit(), result::toString);
    assertEquals(1, result.errLines().size(), result::toString);
    assertTrue(result.stderr().startsWith("arbor check: invalid --uri: The connection string is"
        + " invalid."), result::toString);
    assertFalse(result.stderr().contains("s3cret"), result::toString);

    Cli.Result bench = Cli.run("bench", "--uri", "mongo://admin:s3cret@db1", "--out",
        dir.toString());
    assertEquals(Arbor.EXIT_USAGE, bench.exit(), bench::toString);
    assertEquals(1, bench.errLines().size(), bench::toString);
    assertTrue(bench.stderr().startsWith("arbor bench: malformed MongoDB URI"), bench::toString);
    assertFalse(bench.stderr().contains("s3cret"), bench::toString);
  }

  @Test
  void anUnreachableServerIsOneShortLineWithoutTheClusterState() {
    assertOneLine(Cli.run("check", "-c", "t", "-p", "nested-sets", "--uri", NOBODY),
        Arbor.EXIT_FAILURE, "arbor check: cannot reach MongoDB at 127.0.0.1:1: no server"
            + " answered within 0.3 s");
    assertOneLine(Cli.run("bench", "--uri", NOBODY, "--out", dir.toString()),
        Arbor.EXIT_FAILURE, "arbor bench: cannot reach MongoDB at 127.0.0.1:1: no server answered"
            + " within 0.3 s");
  }

  @Test
  void driverExceptionsAreSaidInWords() {
    ServerAddress server = new ServerAddress("db1", 27017);
    assertEquals("MongoDB refused a write: cannot update system collection (code 10156)",
        Errors.message(new MongoWriteException(new WriteError(10156,
            "cannot update system collection", new BsonDocument()), server)));
    assertEquals("MongoDB refused a write: too large (code 10334)",
        Errors.message(new MongoBulkWriteException(BulkWriteResult.unacknowledged(),
            List.of(new BulkWriteError(10334, "too large", new BsonDocument(), 3)), null, server,
            java.util.Set.of())));
    assertEquals("MongoDB refused the credentials (authentication failed)",
        Errors.message(new MongoSecurityException(MongoCredential.createCredential("admin",
            "admin", "s3cret".toCharArray()), "Exception authenticating MongoCredential{...}")));
    assertEquals("cannot reach MongoDB at db1:27017: no server answered within 10 s",
        Errors.unreachable("db1:27017", 10_000, new MongoTimeoutException(
            "Timed out ... Client view of cluster state is {type=UNKNOWN, servers=[...]}")));
  }

  @Test
  void aTreeTooDeepForThePatternIsRefusedInOneLineNamingTheNodeAndWhatHoldsIt()
      throws IOException {
    // A chain of 2 500 nodes with 8 000-character ids: near depth 2 090 an array of ancestors
    // passes 16 MB.
    StringBuilder json = new StringBuilder();
    for (int i = 0; i < 2_500; i++) {
      json.append(i == 0 ? "[" : ", \"children\": [").append("{\"id\": \"")
          .append(String.format("%08000d", i)).append('"');
    }
    json.append("}]".repeat(2_500)).append('\n');
    Path file = dir.resolve("deep.json");
    Files.writeString(file, json);
    Cli.Result r = Cli.run(onServer("import", file.toString(), "-c", "deep", "-p",
        "array-of-ancestors"));
    assertEquals(Arbor.EXIT_FAILURE, r.exit(), r::toString);
    // the refusal is one line; a machine slow enough to read the file for more than two seconds
    // also prints progress lines before it
    List<String> lines = r.errLines().stream().filter(l -> !l.startsWith("arbor: reading "))
        .toList();
    assertEquals(1, lines.size(), r::toString);
    String line = lines.get(0);
    assertTrue(line.startsWith("arbor import: Cannot store node '") && line.contains("(depth 20")
        && line.contains("16 MB") && line.contains(
            "PARENT_REFERENCES, CHILD_REFERENCES, NESTED_SETS hold this tree"), line);
    assertEquals(0, MongoTestServer.get().database().getCollection("deep").countDocuments());
  }

  @Test
  void attributeNamesAreRefusedWithTheirLineAndColumn() throws IOException {
    Path file = dir.resolve("names.json");
    Files.writeString(file, "[\n  {\"id\": \"a\", \"children\": [\n"
        + "    {\"id\": \"b\", \"attributes\": {\"title\": \"B\", \"parent\": 1}}\n  ]}\n]\n");
    assertOneLine(Cli.run(onServer("import", file.toString(), "-c", "names", "-p",
        "parent-references")), Arbor.EXIT_FAILURE, "arbor import: " + file + ": line 3, column"
            + " 46: attribute 'parent' of node 'b': reserved by parent-references for the tree"
            + " structure (reserved: _id, arborJournal, arborLane, arborLock, arborOp, arborRank, parent)");

    Files.writeString(file, "[{\"id\": \"a\", \"attributes\": {\"a.b\": 1}}]\n");
    assertOneLine(Cli.run(onServer("import", file.toString(), "-c", "names", "-p",
        "nested-sets")), Arbor.EXIT_FAILURE, "arbor import: " + file + ": line 1, column 29:"
            + " attribute 'a.b' of node 'a': a MongoDB field name cannot contain '.'");
    assertFalse(MongoTestServer.get().database().listCollectionNames()
        .into(new java.util.ArrayList<>()).contains("names"), "nothing written");
  }

  @Test
  void idsNotOfTheIdTypeAreRefusedWithTheirLineAndColumnBeforeAnythingIsWritten()
      throws IOException {
    Path file = dir.resolve("ids.json");
    StringBuilder json = new StringBuilder("[\n  {\"id\": \"1\", \"children\": [\n");
    for (int i = 2; i < 30_000; i++) { // past a load's first batch: refused while reading
      json.append("    {\"id\": \"").append(i).append("\"},\n");
    }
    json.append("    {\"id\": \"x2\"}\n  ]}\n]\n");
    Files.writeString(file, json);
    assertOneLine(Cli.run(onServer("import", file.toString(), "-c", "ids", "-p",
        "parent-references", "--id-type", "long")), Arbor.EXIT_FAILURE, "arbor import: " + file
            + ": line 30001, column 12: id 'x2': not a canonical LONG id (a decimal long without"
            + " sign '+' or leading zeros): the tree stores its ids as LONG (--id-type long)");
    assertEquals(0, MongoTestServer.get().database().getCollection("ids").countDocuments(),
        "nothing written");
  }

  @Test
  void keysNestedInAttributesAreRefusedWithTheirLineAndColumn() throws IOException {
    Path file = dir.resolve("nested.json");
    Files.writeString(file, "[{\"id\": \"a\", \"attributes\": {\"n\": {\"$numberLong\": \"5\"},\n"
        + "  \"site\": {\"url\": \"x\", \"meta\": [1, {\"$where\": \"1\"}]}}}]\n");
    assertOneLine(Cli.run(onServer("import", file.toString(), "-c", "nested", "-p",
        "materialized-paths")), Arbor.EXIT_FAILURE, "arbor import: " + file + ": line 2,"
            + " column 37: key '$where' in attribute 'site' of node 'a': a MongoDB field name"
            + " cannot start with '$'");
    Files.writeString(file, "[{\"id\": \"a\", \"attributes\": {\"o\": {\"x.y\": 1}}}]\n");
    assertOneLine(Cli.run(onServer("import", file.toString(), "-c", "nested", "-p",
        "materialized-paths")), Arbor.EXIT_FAILURE, "arbor import: " + file + ": line 1,"
            + " column 35: key 'x.y' in attribute 'o' of node 'a': a MongoDB field name cannot"
            + " contain '.'");
  }

  @Test
  void benchChecksItsOutputDirectoryBeforeMeasuring() throws IOException {
    Path file = Files.writeString(dir.resolve("results"), "a file, not a directory");
    Cli.Result result = Cli.run("bench", "--out", file.toString(), "--sizes", "10");
    assertOneLine(result, Arbor.EXIT_FAILURE, "arbor bench: cannot write to --out " + file
        + ": a file is in the way of the directory");
    assertEquals("", result.out(), "nothing measured");
  }

  @Test
  void helpIsACommandAndItsTextKeepsUrisWhole() {
    Cli.Result help = Cli.run("help");
    assertEquals(0, help.exit(), help::toString);
    assertTrue(help.out().startsWith("Usage: arbor "), help::toString);
    assertTrue(help.out().contains("  help "), help::toString);
    Cli.Result importHelp = Cli.run("help", "import");
    assertEquals(0, importHelp.exit(), importHelp::toString);
    assertTrue(importHelp.out().startsWith("Usage: arbor import "), importHelp::toString);

    Pattern uri = Pattern.compile("mongodb://\\S*");
    for (String command : List.of("bench", "import", "export", "convert", "check", "repair")) {
      String text = Cli.run(command, "--help").out();
      Matcher m = uri.matcher(text);
      int found = 0;
      while (m.find()) {
        found++;
        assertTrue(m.group().matches("mongodb://[a-z0-9.]+:[0-9]+(/\\w+)?[.,]?"),
            command + " --help splits the URI " + m.group() + ":\n" + text);
      }
      assertTrue(found > 0, command + " --help shows a URI");
    }
  }

  @Test
  void everyHelpTextFormatsWithoutWarnings() {
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    java.io.PrintStream before = System.err;
    System.setErr(new java.io.PrintStream(err, true, UTF_8));
    try {
      for (String command : List.of("bench", "import", "export", "convert", "check", "repair")) {
        assertEquals(0, Cli.run(command, "--help").exit(), command);
      }
    } finally {
      System.setErr(before);
    }
    // picocli reports a description it cannot format (a lone %) on System.err
    assertEquals("", err.toString(UTF_8));
  }

  @Test
  void progressSaysHowManyNodesOfHowManyAndTheShareDone() {
    Tree.Builder b = Tree.builder();
    for (int i = 0; i < 5_000; i++) {
      b.add("n" + i, i == 0 ? null : "n" + (i - 1) / 3);
    }
    byte[] json = dev.arbor.core.json.TreeJson.toJson(b.build()).getBytes(UTF_8);
    Cli.Result result = Cli.runWithStdin(json, onServer("import", "-", "-c", "progress", "-p",
        "nested-sets", "--progress-interval", "1"));
    assertEquals(0, result.exit(), result::toString);
    assertTrue(result.errLines().stream().anyMatch(l -> l.matches("arbor: loading 5,000 nodes"
        + " into .*: [0-9,]+ of 5,000 nodes \\([0-9]+%\\), [0-9.]+ s.*")), result::toString);

    assertEquals("arbor: loading: 2,500 of 10,000 nodes (25%), 3.0 s, about 9 s left",
        Progress.line("loading", 2_500, 10_000, 0.25, 3_000_000_000L));
    assertEquals("arbor: reading f.json: 400 nodes, 50%, 1.0 s, about 1 s left",
        Progress.line("reading f.json", 400, -1, 0.5, 1_000_000_000L));
    assertEquals("arbor: saving: 2.0 s", Progress.line("saving", -1, -1, Double.NaN,
        2_000_000_000L));
  }

  @Test
  void aDataDirThatIsAFileIsSaidInWordsWithoutTheJavaException() throws IOException {
    Path file = Files.writeString(dir.resolve("notes.txt"), "not a directory");
    assertOneLine(Cli.run("check", "-c", "t", "-p", "nested-sets", "--data-dir",
        file.toString()), Arbor.EXIT_FAILURE, "arbor check: --data-dir " + file + ": cannot"
            + " create the data directory " + file + ": it exists and is not a directory");
    Path under = file.resolve("data");
    assertOneLine(Cli.run("check", "-c", "t", "-p", "nested-sets", "--data-dir",
        under.toString()), Arbor.EXIT_FAILURE, "arbor check: --data-dir " + under + ": cannot"
            + " create the data directory " + under + ": " + file + " exists and is not a"
            + " directory");
  }

  @Test
  void exportNamesItsTargetNeverItsTemporaryFile() throws IOException {
    MongoTestServer.get().database().getCollection("exported").drop();
    TreePattern.NESTED_SETS.open(MongoTestServer.get().database().getCollection("exported"))
        .load(Tree.parse("a(b c)"));
    Path directory = Files.createDirectory(dir.resolve("a-directory"));
    assertOneLine(Cli.run(onServer("export", directory.toString(), "-c", "exported", "-p",
        "nested-sets")), Arbor.EXIT_FAILURE, "arbor export: cannot write " + directory
            + ": it is a directory");

    // A name so long that the target's name plus a suffix would not be a valid file name.
    Path longName = dir.resolve("x".repeat(250) + ".json");
    Cli.Result result = Cli.run(onServer("export", longName.toString(), "-q", "-c", "exported",
        "-p", "nested-sets"));
    assertEquals(0, result.exit(), result::toString);
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(directory, longName), files.sorted().toList(), "nothing left beside");
    }
  }

  private static void assertOneLine(Cli.Result result, int exit, String line) {
    assertEquals(List.of(line), result.errLines(), result::toString);
    assertEquals(exit, result.exit(), result::toString);
  }
}
