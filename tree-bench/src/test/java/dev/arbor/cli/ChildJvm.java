package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * JVMs the small-heap tests start on the test class path: the {@code arbor} command line ({@link
 * MeasuredArbor}, or {@link Arbor} itself) with a small heap. The server the client tests reach
 * is the fork's own test server ({@code MongoTestServer}), in the test JVM with its large heap.
 */
final class ChildJvm {
  private ChildJvm() {}

  /**
   * A JVM on the test class path, quick to start as a short command-line run wants: C1 only and
   * the serial GC (neither changes the heap limit {@code heap} sets, which is what the tests
   * prove bounds against).
   */
  static ProcessBuilder java(String heap, String main, String... args) {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(java, heap, "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC"));
    command.addAll(List.of("-cp", classpath, main));
    command.addAll(List.of(args));
    return new ProcessBuilder(command);
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
