package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code arbor import --data-dir} run as a real process and killed ({@code SIGKILL}) at several
 * moments: while reading the file, while loading beside the collection, while creating the
 * indexes, while renaming over it, while saving, and between saving and exiting. Each time, the
 * next {@code export} and {@code check} find the tree as it was before the import or as the import
 * made it, never anything else.
 */
class DataDirKillTest {
  private static final String[] WHERE = {"-c", "tree", "-p", "parent-references"};

  @TempDir
  Path dir;

  @Test
  void aKilledImportLeavesTheTreeBeforeOrAfter() throws Exception {
    Path before = dir.resolve("before.json");
    Path after = dir.resolve("after.json");
    write(SampleTrees.mixed(1, 200, 10), before);
    write(SampleTrees.mixed(2, 6_000, 40), after);
    String beforeJson = Files.readString(before);
    String afterJson = Files.readString(after);

    // The phase of the progress line after which the process is killed, and a delay.
    // A phase shorter than the progress interval prints no line: creating the indexes may be
    // over before its line, so that run is killed at the first line of it or of what follows.
    String[] phases = {"reading", "loading", "loading", "creating the indexes|renaming|saving",
        "renaming|saving", "saving", "imported"};
    long[] delays = {0, 0, 400, 0, 0, 60, 0};
    List<String> outcomes = new ArrayList<>();
    for (int run = 0; run < phases.length; run++) {
      Path data = dir.resolve("data" + run);
      Cli.Result first = Cli.run(args("import", before.toString(), "-q", "--data-dir",
          data.toString()));
      assertEquals(0, first.exit(), first::toString);

      String last = killDuring(data, after, phases[run], delays[run]);

      Cli.Result export = Cli.run(args("export", "-q", "--data-dir", data.toString()));
      assertEquals(0, export.exit(), "killed after '" + last + "': " + export);
      boolean old = export.out().equals(beforeJson);
      assertTrue(old || export.out().equals(afterJson),
          "killed after '" + last + "': the tree is neither before nor after the import");
      Cli.Result check = Cli.run(args("check", "-q", "--data-dir", data.toString()));
      assertEquals(0, check.exit(), "killed after '" + last + "': " + check);
      outcomes.add((old ? "before" : "after") + " <- " + last);
    }
    System.out.println(String.join("\n", outcomes));
    // The kills landed both before and after the save: both outcomes were seen.
    assertTrue(outcomes.stream().anyMatch(o -> o.startsWith("before")), outcomes::toString);
    assertTrue(outcomes.stream().anyMatch(o -> o.startsWith("after")), outcomes::toString);
  }

  /**
   * Runs {@code arbor import FILE --replace} in a new JVM on the test class path and kills it
   * once its progress reaches {@code phase} (one of several separated by |), after {@code
   * delayMillis}.
   *
   * @return the line after which it was killed
   */
  private static String killDuring(Path data, Path file, String phase, long delayMillis)
      throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    // A quick-starting JVM (C1 only, serial GC), as a short command-line run is.
    List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC", "-cp", classpath, Arbor.class.getName()));
    command.addAll(List.of(args("import", file.toString(), "--replace", "--data-dir",
        data.toString(), "--progress-interval", "10")));
    Process p = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectInput(ProcessBuilder.Redirect.PIPE).start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8))) {
      for (String read = out.readLine(); read != null; read = out.readLine()) {
        String line = read;
        lines.add(line);
        if (Arrays.stream(phase.split("\\|"))
            .anyMatch(f -> line.startsWith("arbor: " + f) || line.startsWith(f))) {
          Thread.sleep(delayMillis);
          assertTrue(p.isAlive() || phase.equals("imported"), "alive when killed: " + lines);
          p.destroyForcibly();
          return line;
        }
      }
    } finally {
      p.destroyForcibly();
      assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    }
    throw new AssertionError("the import never reached '" + phase + "': " + lines);
  }

  private static String[] args(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of(WHERE));
    return all.toArray(String[]::new);
  }

  private static void write(Tree tree, Path file) throws IOException {
    try (OutputStream out = Files.newOutputStream(file)) {
      TreeJson.write(tree, out);
    }
  }
}
