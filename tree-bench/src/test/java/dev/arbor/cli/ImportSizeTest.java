package dev.arbor.cli;

import static dev.arbor.cli.Cli.onServer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.embedded.EmbeddedMongo;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.tools.Errors;
import dev.arbor.tools.Text;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * {@code arbor import} sums its documents' sizes in its first pass over the file and refuses, in
 * one line and before writing anything, a load whose total the target cannot hold, naming the
 * total and the patterns that would hold the tree in linear space; {@code --accept-size} loads it
 * anyway. The limits are made small by the {@link Capacity} each run is given, never the real
 * disk. No command prints a stack trace for running out of memory.
 */
class ImportSizeTest {
  /** Levels of the chain: its materialized paths total 31.7 MB, its parent references 273 KB. */
  static final int DEPTH = 3_000;

  @TempDir
  static Path files;

  static Path chain;

  @TempDir
  Path dir;

  private static final Capacity MACHINE = Capacity.ofThisMachine();

  /** A chain of {@value #DEPTH} nodes with ids {@code 000000, 000001, ...}. */
  @BeforeAll
  static void writeChain() throws IOException {
    chain = files.resolve("chain.json");
    try (BufferedWriter w = Files.newBufferedWriter(chain, StandardCharsets.UTF_8)) {
      for (int i = 0; i < DEPTH; i++) {
        w.write((i == 0 ? "[" : ", \"children\": [") + "{\"id\": \""
            + String.format("%06d", i) + "\"");
      }
      w.write("}]".repeat(DEPTH));
      w.write('\n');
    }
  }

  /** The one line of a refusal, checked for what every refusal names. */
  private static String refusal(Cli.Result r) {
    assertEquals(Arbor.EXIT_FAILURE, r.exit(), r::toString);
    List<String> lines = r.errLines().stream().filter(l -> !l.startsWith("arbor: ")).toList();
    assertEquals(1, lines.size(), r::toString);
    String line = lines.get(0);
    assertFalse(r.stderr().contains("\tat "), "no stack trace: " + r);
    assertTrue(line.startsWith("arbor import: " + chain + " as materialized-paths would store"
        + " about 30.3 MB of documents (the largest 20.6 KB, in encoded BSON), "), line);
    assertTrue(line.contains("; the patterns whose documents do not grow with depth would store"
        + " it in parent-references 267 KB, child-references 240 KB and nested-sets 354 KB"),
        line);
    return line;
  }

  @Test
  void aDataDirectoryTakesAQuarterOfItsFreeDisk() throws Exception {
    Path data = dir.resolve("data");
    Capacity disk = MACHINE.withUsableSpace(d -> {
      assertEquals(data, d);
      return 40L << 20; // a quarter: 10 MB
    });
    long t0 = System.nanoTime();
    Cli.Result refused = Cli.run(disk, "import", chain.toString(), "--data-dir", data.toString(),
        "-c", "chain", "-p", "materialized-paths");
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    String line = refusal(refused);
    assertTrue(line.contains("more than the data directory " + data + " can take: a quarter of"
        + " the 40 MB free on its disk (10 MB)"), line);
    assertTrue(line.endsWith("; free disk space, give a server with --uri, or add --accept-size"
        + " to load it anyway"), line);
    assertTrue(millis < 20_000, "refused after " + millis + " ms");
    try (EmbeddedMongo server = EmbeddedMongo.start(data)) {
      assertFalse(server.client().getDatabase("arbor").listCollectionNames().into(
          new java.util.ArrayList<>()).contains("chain"), "nothing was written");
    }

    // the patterns it names hold it within the limit
    Cli.Result linear = Cli.run(disk, "import", chain.toString(), "--data-dir", data.toString(),
        "-c", "chain", "-p", "nested-sets", "-q");
    assertEquals(0, linear.exit(), linear::toString);

    // and --accept-size loads it anyway, saying so
    Cli.Result accepted = Cli.run(disk, "import", chain.toString(), "--data-dir", data.toString(),
        "-c", "paths", "-p", "materialized-paths", "--accept-size");
    assertEquals(0, accepted.exit(), accepted::toString);
    assertTrue(accepted.stderr().contains("arbor: " + chain + " as materialized-paths will store"
        + " about 30.3 MB of documents (the largest 20.6 KB, in encoded BSON), more than the data"
        + " directory " + data + " can take"), accepted::toString);
    assertTrue(accepted.stderr().contains(": loading it (--accept-size)"), accepted::toString);
    assertTrue(accepted.stderr().contains("imported " + DEPTH + " nodes"), accepted::toString);
  }

  @Test
  void aServerLoadPastTheThresholdNeedsAcceptSize() {
    Capacity threshold = MACHINE.withServerUnconfirmed(10L << 20);
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    String name = c.getNamespace().getCollectionName();
    String line = refusal(Cli.run(threshold, onServer("import", chain.toString(), "-c", name, "-p",
        "materialized-paths")));
    assertTrue(line.contains("more than the 10 MB a load into a server stores unconfirmed; "),
        line);
    assertTrue(line.endsWith("; add --accept-size to load it"), line);
    assertEquals(0, c.countDocuments(), "nothing was written, not even a lock");
    assertFalse(MongoTestServer.get().database().listCollectionNames()
        .into(new java.util.ArrayList<>()).contains(name), "the collection was not created");

    Cli.Result accepted = Cli.run(threshold, onServer("import", chain.toString(), "-c", name, "-p",
        "materialized-paths", "--accept-size"));
    assertEquals(0, accepted.exit(), accepted::toString);
    assertTrue(accepted.stderr().contains("will store about 30.3 MB of documents"),
        accepted::toString);
    assertEquals(DEPTH, Connection.nodes(c));

    // under the threshold nothing is asked
    MongoCollection<Document> small = MongoTestServer.get().freshCollection();
    Cli.Result linear = Cli.run(threshold, onServer("import", chain.toString(), "-c",
        small.getNamespace().getCollectionName(), "-p", "parent-references"));
    assertEquals(0, linear.exit(), linear::toString);
    assertFalse(linear.stderr().contains("store about"), linear::toString);
  }

  @Test
  void theInMemoryServerIsLimitedByTheHeap() {
    Capacity heap = MACHINE.withMaxHeap(64L << 20);
    String line = refusal(Cli.run(heap, "import", chain.toString(), "-c", "chain", "-p",
        "materialized-paths"));
    // 6 x 31 741 494 + 1 536 x 3 000 bytes
    assertTrue(line.contains("which the temporary in-memory server would hold in about 186 MB"
        + " of heap (6 bytes per byte, 1.5 KB per node), more than this JVM's 64 MB (java -Xmx)"),
        line);
    assertTrue(line.endsWith("; run java with a larger -Xmx, give --data-dir or --uri, or add"
        + " --accept-size to load it anyway"), line);
    Cli.Result linear = Cli.run(heap, "import", chain.toString(), "-c", "chain", "-p",
        "child-references", "-q");
    assertEquals(0, linear.exit(), linear::toString);
  }

  @Test
  void aDocumentPastSixteenMegabytesIsStillRefusedFirst() throws IOException {
    // every load is past it: the document's refusal comes first
    Capacity every = MACHINE.withServerUnconfirmed(1);
    Path deep = dir.resolve("deep.json");
    Files.writeString(deep, "[{\"id\": \"" + "a".repeat(9_000_000) + "\", \"children\": [{\"id\":"
        + " \"" + "b".repeat(9_000_000) + "\"}]}]\n");
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Cli.Result r = Cli.run(every, onServer("import", deep.toString(), "-c",
        c.getNamespace().getCollectionName(), "-p", "materialized-paths"));
    assertEquals(Arbor.EXIT_FAILURE, r.exit());
    assertEquals(1, r.errLines().size());
    assertTrue(r.stderr().startsWith("arbor import: Cannot store node '")
        && r.stderr().contains("16 MB"), () -> r.stderr().substring(0, 200));
  }

  /** A command that runs out of memory. */
  @Command(name = "exhaust")
  static final class Exhaust implements Callable<Integer> {
    @Override
    public Integer call() {
      throw new OutOfMemoryError("Java heap space");
    }
  }

  @Test
  void runningOutOfMemoryIsOneLineNamingTheHeap() {
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    CommandLine cmd = Arbor.commandLine(new java.io.ByteArrayInputStream(new byte[0]),
        new java.io.ByteArrayOutputStream(), err);
    cmd.addSubcommand(new Exhaust());
    cmd.setErr(cmd.getErr()); // to the new subcommand too, as to those of the annotation
    assertEquals(Arbor.EXIT_FAILURE, cmd.execute("exhaust"));
    String said = err.toString(StandardCharsets.UTF_8);
    assertEquals(1, said.lines().count(), said);
    assertTrue(said.startsWith("arbor exhaust: out of memory (Java heap space): this JVM's heap,"
        + " at most " + Text.bytes(Runtime.getRuntime().maxMemory()) + " (java -Xmx), cannot"
        + " hold what the command needs; run java with a larger -Xmx, or use --uri"), said);
    assertEquals("out of memory (Direct buffer memory): run java with a larger"
        + " -XX:MaxDirectMemorySize (run with --stacktrace for details)",
        Errors.message(new OutOfMemoryError("Direct buffer memory")));
    assertTrue(Errors.outOfMemory(new OutOfMemoryError("GC overhead limit exceeded"), 1L << 30)
        .contains("at most 1 GB (java -Xmx)"));
    // the trace only when asked for
    err.reset();
    assertEquals(Arbor.EXIT_FAILURE, cmd.execute("--stacktrace", "exhaust"));
    String traced = err.toString(StandardCharsets.UTF_8);
    assertTrue(traced.startsWith("arbor exhaust: out of memory (Java heap space)")
        && traced.contains("java.lang.OutOfMemoryError: Java heap space")
        && traced.contains("\tat dev.arbor.cli.ImportSizeTest$Exhaust.call"), traced);
    // an error after the heap ran nearly full (an embedded server's thread out of heap closes
    // its connections) names the heap
    assertTrue(Errors.heapRanFull(64L << 20).startsWith("this JVM's heap, at most 64 MB (java"
        + " -Xmx), ran nearly full meanwhile"));
  }

  @Test
  void aJvmWithASmallHeapRefusesTheInMemoryLoadInOneLine() throws Exception {
    // no seam: the child's own Runtime.maxMemory()
    Process arbor = ChildJvm.java("-Xmx64m", Arbor.class.getName(), "import", chain.toString(),
        "-c", "chain", "-p", "materialized-paths")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    String err = new String(arbor.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(arbor.waitFor(60, TimeUnit.SECONDS), err);
    assertEquals(Arbor.EXIT_FAILURE, arbor.exitValue(), err);
    List<String> lines = err.lines().toList();
    assertEquals(2, lines.size(), err); // the note on the temporary server, the refusal
    assertTrue(lines.get(1).startsWith("arbor import: " + chain + " as materialized-paths would"
        + " store about 30.3 MB of documents") && lines.get(1).contains("(java -Xmx)")
        && lines.get(1).contains("parent-references 267 KB"), err);
  }

  @Test
  void sizesAreSaidInBinaryUnits() {
    assertEquals("812 bytes", Text.bytes(812));
    assertEquals("1 KB", Text.bytes(1024));
    assertEquals("1.5 KB", Text.bytes(1536));
    assertEquals("64 MB", Text.bytes(64L << 20));
    assertEquals("35.2 GB", Text.bytes((long) (35.2 * (1L << 30))));
    assertEquals("612 MB", Text.bytes(612L << 20));
    assertEquals("1 GB", Text.bytes(Capacity.SERVER_UNCONFIRMED));
  }
}
