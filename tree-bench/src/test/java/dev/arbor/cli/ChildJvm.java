package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * JVMs the small-heap tests start on the test class path: a {@link BigTreeServer} with a large
 * heap of its own, and the {@code arbor} client ({@link MeasuredArbor}) with a small one.
 */
final class ChildJvm {
  private ChildJvm() {}

  /**
   * A JVM on the test class path: the client C1 only with the serial GC, as a command-line run
   * is; the server with the default compilers, as it loads hundreds of thousands of nodes.
   */
  static ProcessBuilder java(String heap, String main, String... args) {
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

  /** A running {@link BigTreeServer}; closing it ends the server. */
  record Server(Process process, String uri) implements AutoCloseable {
    /** Starts a server with 2 GB of heap and {@link BigTreeServer}'s {@code args}. */
    static Server start(String... args) throws Exception {
      Process server = java("-Xmx2g", BigTreeServer.class.getName(), args)
          .redirectErrorStream(true).start();
      List<String> said = new ArrayList<>();
      BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(),
          StandardCharsets.UTF_8));
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        said.add(line);
        if (line.startsWith("ready ")) {
          return new Server(server, line.substring("ready ".length()));
        }
      }
      server.destroyForcibly();
      assertTrue(false, "the server did not start: " + said);
      throw new AssertionError();
    }

    @Override
    public void close() throws InterruptedException {
      try {
        process.getOutputStream().close(); // ends the server
      } catch (java.io.IOException e) {
        process.destroyForcibly();
      }
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }

  /**
   * Runs {@code arbor args} in a client JVM limited to {@code heap}, asserts it succeeds within
   * {@code seconds}, and returns its peak heap in bytes.
   */
  static long arbor(String heap, int seconds, String... args) throws Exception {
    Process client = java("-Xmx" + heap, MeasuredArbor.class.getName(), args)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    String err = new String(client.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(client.waitFor(seconds, TimeUnit.SECONDS), "arbor did not end: " + err);
    org.junit.jupiter.api.Assertions.assertEquals(0, client.exitValue(), err);
    return Long.parseLong(err.substring(err.indexOf("peak heap: ") + 11).trim());
  }
}
