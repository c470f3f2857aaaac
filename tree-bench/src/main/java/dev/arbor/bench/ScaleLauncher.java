package dev.arbor.bench;

import dev.arbor.bench.ScaleBench.Figure;
import dev.arbor.bench.ScaleBench.Results;
import dev.arbor.bench.ScaleBench.Settings;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CommandMeter;
import dev.arbor.tools.ServerConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The orchestrator of a scale run ({@link ScaleBench}): opens the server (the embedded one in a
 * JVM of its own, {@link ScaleServer}, or in this one, or the one named), starts one client JVM
 * per pattern ({@link ScaleClient}), relays its progress lines and
 * reads its machine lines ({@code @op}, {@code @skip}, {@code @ratio}, {@code @cpu},
 * {@code @heap}) into the
 * {@link Results}.
 */
final class ScaleLauncher {
  private ScaleLauncher() {}

  /** Runs the clients one pattern at a time, relaying their progress to {@code out}. */
  static Results run(Settings s, PrintWriter out) throws IOException, InterruptedException {
    long start = System.nanoTime();
    Results results = new Results();
    results.sizes = s.sizes().stream().sorted().toList();
    // the embedded server in a JVM of its own (as a real server is), unless --uri names one or
    // --in-process-server keeps it in this one
    ScaleServer own = s.uri() == null && !s.inProcessServer()
        ? ScaleServer.start(System.getProperty("java.home"), s.serverHeap(), s.classpath(),
            s.launcher())
        : null;
    ServerConnection server;
    try {
      server = ServerConnection.open(own != null ? own.uri() : s.uri(), null,
          new CommandMeter());
    } catch (RuntimeException e) {
      if (own != null) {
        own.close();
      }
      throw e;
    }
    String uri = server.uri();
    String db = "arbor_scale_" + Long.toString(System.currentTimeMillis(), 36);
    out.printf(Locale.ROOT, "arbor scale: %s, sizes %s, client -Xmx%s, server %s%n",
        s.patterns().stream().map(Names::of).toList(), results.sizes, s.clientHeap(),
        own != null ? "embedded (a JVM of its own, pid " + own.pid() + ", -Xmx" + s.serverHeap()
            + ")" : server.embedded().isPresent() ? "embedded (this JVM, -Xmx"
            + Runtime.getRuntime().maxMemory() / (1 << 20) + "m)" : uri);
    try {
      for (TreePattern p : s.patterns()) {
        long t0 = System.nanoTime();
        List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx" + s.clientHeap(), "-Xms" + s.clientHeap(), "-XX:+UseSerialGC", "-cp",
            s.classpath()));
        command.addAll(s.launcher());
        command.addAll(List.of("client", uri, db, p.name(),
            String.join(",", results.sizes.stream().map(String::valueOf).toList()),
            String.valueOf(s.repeat()), String.valueOf(s.limitSeconds()),
            String.join(",", s.ops()),
            own != null ? String.valueOf(own.pid()) : server.embedded().isPresent()
                ? String.valueOf(ProcessHandle.current().pid()) : "-"));
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        ArrayDeque<String> last = new ArrayDeque<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
            child.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.startsWith("@")) {
              take(results, p, line);
            } else {
              out.println(line);
              out.flush();
              last.add(line);
              if (last.size() > 20) {
                last.removeFirst();
              }
            }
          }
        }
        if (!child.waitFor(1, TimeUnit.MINUTES)) {
          child.destroyForcibly();
        }
        results.patternMillis.put(p, (System.nanoTime() - t0) / 1_000_000);
        if (child.exitValue() != 0) {
          results.failures.put(p, "client exited with " + child.exitValue() + ": "
              + String.join(" | ", last));
          out.println("  " + Names.of(p) + " FAILED: " + results.failures.get(p));
        }
      }
    } finally {
      server.close();
      if (own != null) {
        own.close();
      }
    }
    results.totalMillis = (System.nanoTime() - start) / 1_000_000;
    return results;
  }

  /**
   * Reads a machine line of a client: {@code @op}, {@code @skip}, {@code @ratio}, {@code @cpu}
   * or {@code @heap}.
   */
  private static void take(Results r, TreePattern p, String line) {
    String[] f = line.split(" ", 7);
    switch (f[0]) {
      case "@op" -> r.figures.add(new Figure(p, Integer.parseInt(f[1]), f[2],
          Double.parseDouble(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]), null));
      case "@skip" -> r.figures.add(new Figure(p, Integer.parseInt(f[1]), f[2], Double.NaN, 0,
          0, line.substring(line.indexOf(f[2]) + f[2].length()).trim()));
      case "@ratio" -> r.ratios.computeIfAbsent(p, k -> new TreeMap<>())
          .put(Integer.parseInt(f[1]), Double.parseDouble(f[2]));
      case "@cpu" -> r.cpu.computeIfAbsent(p, k -> new TreeMap<>())
          .computeIfAbsent(Integer.parseInt(f[1]), k -> new TreeMap<>())
          .put(f[2], new double[] {Double.parseDouble(f[3]), Double.parseDouble(f[4])});
      case "@heap" -> {
        r.heap.computeIfAbsent(p, k -> new TreeMap<>())
            .put(Integer.parseInt(f[1]), Long.parseLong(f[2]));
        r.live.computeIfAbsent(p, k -> new TreeMap<>())
            .put(Integer.parseInt(f[1]), Long.parseLong(f[3]));
      }
      default -> throw new IllegalStateException("unknown client line: " + line);
    }
  }
}
