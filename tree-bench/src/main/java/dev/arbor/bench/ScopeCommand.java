package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.ServerConnection;
import dev.arbor.tools.Text;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code arbor scope}: writers in disjoint subtrees of one tree against writers in separate trees
 * of one collection and in one shared subtree ({@link ScopeBench}): changes per second and the
 * time the writers waited for locks, for one writer (the baseline), then {@code --writers} in one
 * shared subtree, in disjoint subtrees of one tree, and in a tree each, each measured after a
 * warm-up ({@code --warmup}) and printed as it ends; then, per pattern, the throughput of
 * disjoint subtrees over that of separate trees.
 *
 * <p>Exit status: 0 when the run completed, 1 when the server could not be used, 2 for an
 * invalid option value (one line on standard error).
 */
@Command(name = "scope", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Measure writers in disjoint subtrees of one tree against writers in separate"
        + " trees of one collection (scoped stores) and in one shared subtree: changes per second"
        + " and time spent waiting for locks."},
    footer = {"", "Examples:",
        "  java -jar arbor.jar scope",
        "  java -jar arbor.jar scope --patterns nested-sets --seconds 10 --writers 8"})
public final class ScopeCommand implements Callable<Integer> {
  @Spec
  private CommandSpec spec;

  @Option(names = "--patterns", split = ",", paramLabel = "PATTERN",
      description = "Patterns: parent-references, child-references, array-of-ancestors,"
          + " materialized-paths, nested-sets (default: all).")
  private List<String> patterns;

  @Option(names = "--seconds", paramLabel = "S", defaultValue = "5",
      description = "How long every writer makes changes, per configuration (default:"
          + " ${DEFAULT-VALUE}).")
  private double seconds;

  @Option(names = "--warmup", paramLabel = "S", defaultValue = "1",
      description = "How long every writer makes changes before they are measured, per"
          + " configuration (default: ${DEFAULT-VALUE}; 0: none).")
  private double warmup;

  @Option(names = "--writers", paramLabel = "N", defaultValue = "4",
      description = "Writers of the shared, disjoint and separate configurations (default:"
          + " ${DEFAULT-VALUE}).")
  private int writers;

  @Option(names = "--nodes", paramLabel = "N", defaultValue = "200",
      description = "Nodes per subtree (default: ${DEFAULT-VALUE}).")
  private int nodes;

  @Option(names = "--uri", paramLabel = "URI", defaultValue = "${env:ARBOR_MONGO_URI}",
      description = "MongoDB connection string (default: $ARBOR_MONGO_URI, else an embedded"
          + " server in this JVM). The run uses a new database, dropped at the end.")
  private String uri;

  /**
   * What a run on the embedded server says after its figures (on stderr): the bound its ratios
   * meet (docs/benchmark.md, "Stop 58").
   */
  static final String EMBEDDED_NOTE = "arbor scope: measured on the embedded server, which runs"
      + " one collection's commands one at a time: writers in one tree there are bound by the"
      + " commands and the server time each change takes, not by waiting for each other. Run"
      + " it with --uri on your own MongoDB to see what its writers get.";

  /** Creates the command; picocli sets the options. */
  public ScopeCommand() {}

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<TreePattern> chosen;
    try {
      chosen = Names.parse("pattern", patterns, TreePattern.values(),
          List.of(TreePattern.values()));
      if (writers < 1 || nodes < 1 || !(seconds > 0) || !(warmup >= 0)) {
        throw new IllegalArgumentException("--writers and --nodes must be at least 1,"
            + " --seconds positive and --warmup at least 0");
      }
    } catch (IllegalArgumentException e) {
      err.println("arbor scope: " + Text.oneLine(e.getMessage()));
      err.flush();
      return 2;
    }
    List<ScopeBench.Figures> figures;
    try {
      figures = ScopeBench.run(chosen, warmup, seconds, writers, nodes, uri, f -> {
        out.println(f); // as each configuration ends: a run of all patterns takes minutes
        out.flush();
      });
    } catch (ServerConnection.MalformedUri e) {
      err.println("arbor scope: malformed MongoDB URI (--uri or ARBOR_MONGO_URI): "
          + e.getMessage());
      err.flush();
      return 2;
    } catch (ServerConnection.Unusable e) {
      err.println("arbor scope: " + Text.oneLine(e.getMessage()));
      err.flush();
      return 1;
    }
    for (TreePattern p : chosen) {
      out.printf(java.util.Locale.ROOT, "%-18s disjoint subtrees / separate trees: %.2f%n",
          Names.of(p), ScopeBench.disjointOverSeparate(figures, p));
    }
    out.flush();
    if (ServerConnection.embedded(uri)) {
      err.println(EMBEDDED_NOTE);
      err.flush();
    }
    return 0;
  }
}
