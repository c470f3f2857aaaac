package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.Text;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code arbor bench}: measures the five tree patterns side by side on generated trees, or on the
 * user's own tree ({@code --tree FILE}), and ranks them per workload.
 *
 * <p>For every size, shape and pattern it loads the same generated tree (with {@code --tree}: for
 * every pattern, the file's tree) and measures each operation and mixed workload: median and p95
 * latency, and the machine-independent counts (round trips, documents returned and written, bytes),
 * with a hand-written baseline beside every read. It prints progress and a comparison, and writes
 * {@code results.json}, {@code results.csv}, {@code report.md} and a self-contained {@code
 * report.html} into {@code --out}.
 *
 * <p>Exit status: 0 when every measurement succeeded, 1 when some failed, the server could not be
 * used or the file of {@code --tree} cannot be measured (unreadable, malformed, empty, or refused
 * by a pattern), 2 for an invalid option value or options that exclude each other (one line on
 * standard error naming it and the valid values).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Measure the five tree patterns side by side and recommend one per workload.",
        "Without --uri it starts an embedded MongoDB (mongo-java-server) in this process;"
            + " the defaults finish in a few minutes on two cores."},
    footer = {"", "Values are comma separated; 'all' selects every value, 'none' none.",
        "Examples:",
        "  arbor bench --uri mongodb://localhost:27017",
        "  arbor bench --uri mongodb://localhost:27017 --sizes 10k,100k,1M \\",
        "      --shapes random,catalog --repeat 10",
        "  arbor bench --mix 70/30 --sizes 5000 --workload none --ops none",
        "  arbor bench --tree categories.json"})
public final class BenchCommand implements Callable<Integer> {
  @Spec
  private CommandSpec spec;

  @Option(names = "--uri", paramLabel = "URI", defaultValue = "${env:ARBOR_MONGO_URI}",
      description = "MongoDB connection string (default: $ARBOR_MONGO_URI, else an embedded"
          + " server). The run uses a new database, dropped at the end.")
  private String uri;

  @Option(names = "--patterns", split = ",", paramLabel = "PATTERN",
      description = "Patterns: parent-references, child-references, array-of-ancestors,"
          + " materialized-paths, nested-sets (default: all).")
  private List<String> patterns;

  @Option(names = "--tree", paramLabel = "FILE",
      description = "Measure the tree of this file instead of generated ones: the nested-JSON"
          + " format of arbor import and export, read whole into memory. The patterns,"
          + " operations and workloads chosen all run on it, their subjects picked from it with"
          + " --seed; the report names the file and gives its shape (nodes, roots, depth,"
          + " fan-out). Excludes --shapes and --sizes.")
  private Path tree;

  @Option(names = "--shapes", split = ",", paramLabel = "SHAPE",
      description = "Tree shapes: balanced, deep, wide, random, catalog (default: all).")
  private List<String> shapes;

  @Option(names = "--sizes", split = ",", paramLabel = "N",
      description = "Tree sizes in nodes, with optional k or M: 1000,10k,1M (default: 300,1000).")
  private List<String> sizes;

  @Option(names = "--ops", split = ",", paramLabel = "OP",
      description = "Operations: load, insert-leaf, children, ancestors, descendants-small,"
          + " descendants-medium, descendants-large, descendants-limited, move-leaf,"
          + " move-subtree, delete-subtree (default: all).")
  private List<String> ops;

  @Option(names = "--workload", split = ",", paramLabel = "WORKLOAD",
      description = "Mixed workloads: browse (95/5), balanced (50/50), reorganise (20/80)"
          + " (default: all).")
  private List<String> workloads;

  @Option(names = "--mix", split = ",", paramLabel = "R/W",
      description = "A workload of your own: R%% reads and W%% edits, e.g. 70/30 (with the"
          + " balanced workload's kinds of read and edit; exact on every shape and size)."
          + " Without --workload, only these are run.")
  private List<String> mixes;

  @Option(names = "--repeat", paramLabel = "N", defaultValue = "" + Settings.DEFAULT_REPEAT,
      description = "Timed invocations per measurement, at most (default: ${DEFAULT-VALUE}).")
  private int repeat;

  @Option(names = "--warmup", paramLabel = "N", defaultValue = "" + Settings.DEFAULT_WARMUP,
      description = "Untimed invocations before measuring (default: ${DEFAULT-VALUE}; at least"
          + " one is always made).")
  private int warmup;

  @Option(names = "--seed", paramLabel = "N", defaultValue = "" + Settings.DEFAULT_SEED,
      description = "Seed of the generated trees and of every random choice: the subjects of"
          + " the operations, the workloads' sequences (default: ${DEFAULT-VALUE}).")
  private long seed;

  @Option(names = "--out", paramLabel = "DIR", defaultValue = "bench-results",
      description = "Directory for results.json, results.csv, report.md, report.html"
          + " (default: ${DEFAULT-VALUE}).")
  private Path out;

  @Option(names = "--cell-seconds", paramLabel = "S",
      defaultValue = "" + Settings.DEFAULT_CELL_SECONDS,
      description = "Stop repeating a measurement after this many seconds; one timed invocation"
          + " is always made (default: ${DEFAULT-VALUE}).")
  private double cellSeconds;

  @Option(names = "--isolated-reads", paramLabel = "BOOL", defaultValue = "true",
      arity = "1", description = "Whether the measured stores isolate their reads by the lock"
          + " document, the library's default (default: ${DEFAULT-VALUE}); false measures the"
          + " patterns' own queries. Reads are also timed with the other setting, for the"
          + " overhead tables.")
  private boolean isolatedReads;

  @Option(names = "--transactions", description = "Open the stores with the benchmark's client"
      + " for multi-document transactions where the server has them (replica sets), instead of"
      + " the lock and journal.")
  private boolean transactions;

  @Option(names = "--rank-by", paramLabel = "FIGURE", defaultValue = "auto",
      description = "What ranks the patterns per workload: time (median ms/op, ties where the"
          + " 95%% intervals overlap), counts (round trips and documents written per op, the same"
          + " on any server) or auto (default: counts on the embedded server, whose latencies"
          + " mostly count scans, time on a real one).")
  private String rankBy;

  /** Creates the command; picocli sets the options. */
  public BenchCommand() {}

  @Override
  public Integer call() {
    PrintWriter stdout = spec.commandLine().getOut();
    PrintWriter stderr = spec.commandLine().getErr();
    Settings settings;
    try {
      settings = settings();
    } catch (IllegalArgumentException e) {
      stderr.println("arbor bench: " + e.getMessage());
      stderr.flush();
      return 2;
    } catch (TreeFile.Unusable e) {
      stderr.println("arbor bench: " + Text.oneLine(e.getMessage()));
      stderr.flush();
      return 1;
    }
    try {
      Output.prepare(settings.out()); // before measuring: results are never lost to a bad --out
    } catch (IOException e) {
      stderr.println("arbor bench: " + e.getMessage());
      stderr.flush();
      return 1;
    }
    Server server;
    try {
      server = Server.start(settings.uri());
    } catch (Server.MalformedUri e) {
      stderr.println("arbor bench: " + e.getMessage());
      stderr.flush();
      return 2;
    } catch (IllegalStateException e) {
      stderr.println("arbor bench: " + Text.oneLine(e.getMessage()));
      stderr.flush();
      return 1;
    }
    Results results;
    try (server) {
      stdout.println("arbor bench on " + server.description() + "; writing to "
          + settings.out().toAbsolutePath());
      results = new Runner(settings, server, stdout).run();
    }
    Report report = new Report(new Analysis(results));
    try {
      Output.write(settings.out(), report, results);
    } catch (IOException e) {
      stderr.println("arbor bench: " + e.getMessage());
      stderr.flush();
      return 1;
    }
    Output.summary(stdout, report, results, settings.out());
    stdout.flush();
    boolean failed = results.measurements().stream().anyMatch(Measurement::failed);
    return failed ? 1 : 0;
  }

  /**
   * The validated settings; with {@code --tree}, after the other options, the file is read and
   * checked against the patterns chosen.
   *
   * @throws IllegalArgumentException naming an invalid option value or two that exclude each other
   * @throws TreeFile.Unusable naming the file of {@code --tree} and why it cannot be measured
   */
  private Settings settings() {
    List<TreePattern> chosen = Names.parse("pattern", patterns, TreePattern.values(),
        List.of(TreePattern.values()));
    List<Operation> operations = Names.parse("operation", ops, Operation.values(),
        List.of(Operation.values()));
    List<Workload> measuredWorkloads = Workload.parse(workloads, mixes);
    Settings.RankBy by = Settings.RankBy.parse(rankBy);
    List<TreeSource> sources;
    List<Integer> treeSizes;
    if (tree == null) {
      sources = List.copyOf(Names.parse("shape", shapes, Shape.values(),
          List.of(Shape.values())));
      treeSizes = Settings.parseSizes(sizes);
    } else {
      excludedByTree("--shapes", shapes);
      excludedByTree("--sizes", sizes);
      TreeFile file = TreeFile.read(tree, chosen);
      sources = List.of(file);
      treeSizes = List.of(file.size());
    }
    return new Settings(uri == null || uri.isBlank() ? null : uri, chosen, sources, treeSizes,
        operations, measuredWorkloads, repeat, warmup, seed, out, cellSeconds, isolatedReads,
        transactions, by);
  }

  /** Refuses an option that chooses generated trees when {@code --tree} gives the tree. */
  private static void excludedByTree(String option, List<String> given) {
    if (given != null) {
      throw new IllegalArgumentException("--tree and " + option + " exclude each other: --tree"
          + " measures the file's tree, at its own size; " + option + " chooses generated ones");
    }
  }
}
