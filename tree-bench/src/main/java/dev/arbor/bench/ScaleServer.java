package dev.arbor.bench;

import dev.arbor.embedded.EmbeddedMongo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The embedded server of a scale run in a JVM of its own ({@code arbor scale server}, a hidden
 * subcommand), as a user with a real server has it: its collections, garbage collections and
 * compilations share nothing with the launcher or the client but the machine. It prints its
 * connection string on one {@code @server} line and serves until its standard input ends (the
 * launcher closes it, or dies), then stops.
 */
final class ScaleServer implements AutoCloseable {
  /** The line prefix of the connection string the server JVM prints once it listens. */
  static final String READY = "@server ";

  private final Process process;
  private final String uri;

  private ScaleServer(Process process, String uri) {
    this.process = process;
    this.uri = uri;
  }

  /**
   * Starts the server JVM: {@code java -Xmx<heap> -cp <classpath> <launcher…> server}, and waits
   * for its connection string.
   *
   * @throws IOException if it could not be started or ended before it listened (with its last
   *     lines)
   */
  static ScaleServer start(String javaHome, String heap, String classpath, List<String> launcher)
      throws IOException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(javaHome, "bin", "java").toString(), "-Xmx" + heap, "-cp", classpath));
    command.addAll(launcher);
    command.add("server");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8));
    List<String> seen = new ArrayList<>();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.startsWith(READY)) {
        drain(in, p.pid());
        return new ScaleServer(p, line.substring(READY.length()).trim());
      }
      seen.add(line);
    }
    p.destroyForcibly();
    throw new IOException("the server JVM ended before it listened: "
        + String.join(" | ", seen.subList(Math.max(0, seen.size() - 10), seen.size())));
  }

  /** Reads the rest of the server's output (its log, if any) so that it never blocks on it. */
  private static void drain(BufferedReader in, long pid) {
    Thread t = new Thread(() -> {
      try {
        while (in.readLine() != null) {
          // the server's log: nothing the run reports
        }
      } catch (IOException e) {
        // the server ended
      }
    }, "arbor-scale-server-" + pid);
    t.setDaemon(true);
    t.start();
  }

  /** The connection string of the server. */
  String uri() {
    return uri;
  }

  /** The process id of the server JVM. */
  long pid() {
    return process.pid();
  }

  /** Ends the server: closes its standard input, and kills it if it has not ended in 30 s. */
  @Override
  public void close() throws InterruptedException {
    try {
      process.getOutputStream().close();
    } catch (IOException e) {
      // it has ended
    }
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /**
   * The server JVM's main: an embedded server in memory, its connection string printed on a
   * {@value #READY} line, served until {@code stdin} ends.
   */
  static void serve(InputStream stdin) {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      System.out.println(READY + mongo.uri());
      System.out.flush();
      byte[] buffer = new byte[256];
      while (stdin.read(buffer) >= 0) {
        // nothing is sent: the end of the stream is the signal
      }
    } catch (IOException e) {
      // the launcher is gone: stop
    }
  }
}
