package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.json.TreeJson;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor export} streams: a client JVM limited to {@value #CLIENT_HEAP} of heap exports a
 * tree of {@value #NODES} nodes whose JSON alone is larger than that heap, byte-identical to the
 * tree's JSON. The embedded server holds its data on its own heap, so it runs in a second JVM with
 * a large heap; the client measures its peak heap ({@link MeasuredArbor}).
 */
class SmallHeapExportTest {
  static final int NODES = 300_000;
  static final String CLIENT_HEAP = "48m";
  private static final long CLIENT_HEAP_BYTES = 48L << 20;

  @TempDir
  Path dir;

  @Test
  void aTreeLargerThanTheClientHeapIsExportedByteIdentical() throws Exception {
    long start = System.nanoTime();
    Process server = java("-Xmx2g", BigTreeServer.class.getName(), String.valueOf(NODES), "1000",
        "NESTED_SETS").redirectErrorStream(true).start();
    try {
      String uri = null;
      List<String> said = new ArrayList<>();
      BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(),
          StandardCharsets.UTF_8));
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        said.add(line);
        if (line.startsWith("ready ")) {
          uri = line.substring("ready ".length());
          break;
        }
      }
      assertTrue(uri != null, () -> "the server did not start: " + said);

      long loaded = System.nanoTime();
      Path file = dir.resolve("big.json");
      Process client = java("-Xmx" + CLIENT_HEAP, MeasuredArbor.class.getName(), "export",
          file.toString(), "--uri", uri, "--db", "arbor", "-c", "NESTED_SETS",
          "-p", "nested-sets", "--no-check", "-q")
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      String err = new String(client.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(client.waitFor(120, TimeUnit.SECONDS), "the export did not end");
      assertEquals(0, client.exitValue(), err);
      long peak = Long.parseLong(err.substring(err.indexOf("peak heap: ") + 11).trim());
      System.out.println("exported " + NODES + " nodes (" + Files.size(file) + " bytes of JSON)"
          + " with -Xmx" + CLIENT_HEAP + ": peak heap " + peak / (1 << 20) + " MB, in "
          + (System.nanoTime() - loaded) / 1_000_000 + " ms (server started and loaded in "
          + (loaded - start) / 1_000_000 + " ms)");
      assertTrue(Files.size(file) > CLIENT_HEAP_BYTES,
          "the JSON is larger than the client's whole heap: " + Files.size(file));
      assertTrue(peak <= CLIENT_HEAP_BYTES, "peak " + peak);

      Path expected = dir.resolve("expected.json");
      try (OutputStream o = Files.newOutputStream(expected)) {
        TreeJson.write(BigTreeServer.tree(NODES, 1000), o);
      }
      assertEquals(-1L, Files.mismatch(expected, file), "the export is byte-identical");
    } finally {
      server.getOutputStream().close(); // ends the server
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    }
  }

  /**
   * A JVM on the test class path: the client C1 only with the serial GC, as a command-line run
   * is; the server with the default compilers, as it loads 300 000 nodes.
   */
  private static ProcessBuilder java(String heap, String main, String... args) {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(java, heap));
    if (main.equals(MeasuredArbor.class.getName())) {
      command.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    }
    command.addAll(List.of("-cp", classpath, main));
    command.addAll(List.of(args));
    return new ProcessBuilder(command);
  }
}
