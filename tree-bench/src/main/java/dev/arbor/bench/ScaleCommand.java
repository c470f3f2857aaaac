package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.ServerConnection;
import dev.arbor.tools.Text;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code arbor scale}: the scale benchmark ({@link ScaleBench}): per pattern and tree size, load
 * throughput against raw {@code insertMany}, the client's heap, and the time and round trips of
 * each operation, with their growth exponents, measured in a client JVM of its own per pattern.
 *
 * <p>Exit status: 0 when every client succeeded, 1 when one failed or the server could not be
 * used, 2 for an invalid option value (one line on standard error).
 */
@Command(name = "scale", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Measure how each pattern scales with the tree: load throughput against raw"
        + " insertMany, the client's heap, and each operation's time and round trips, with"
        + " their growth exponents.",
        "Each pattern runs in a client JVM of its own (-Xmx of --client-heap); without --uri the"
            + " embedded server runs in a JVM of its own too (-Xmx of --server-heap: it holds the"
            + " largest tree twice), as a real server would."},
    footer = {"", "Examples:",
        "  java -jar arbor.jar scale",
        "  java -jar arbor.jar scale --sizes 1k,10k --patterns nested-sets --markdown scale.md"})
public final class ScaleCommand implements Callable<Integer> {
  @Spec
  private CommandSpec spec;

  @Option(names = "--patterns", split = ",", paramLabel = "PATTERN",
      description = "Patterns: parent-references, child-references, array-of-ancestors,"
          + " materialized-paths, nested-sets (default: all).")
  private List<String> patterns;

  @Option(names = "--sizes", split = ",", paramLabel = "N",
      description = "Tree sizes in nodes, with optional k or M (default: 1k,10k,100k,1M).")
  private List<String> sizes;

  @Option(names = "--ops", split = ",", paramLabel = "OP",
      description = "Operations besides the load: insertMany, entries, children, ancestors,"
          + " descendants, insert, move, delete (default: all).")
  private List<String> ops;

  @Option(names = "--repeat", paramLabel = "N",
      defaultValue = "" + ScaleBench.Settings.DEFAULT_REPEAT,
      description = "Runs of each read and write, and pairs of raw insertMany and load,"
          + " alternating (median; default: ${DEFAULT-VALUE}).")
  private int repeat;

  @Option(names = "--client-heap", paramLabel = "SIZE",
      defaultValue = ScaleBench.Settings.DEFAULT_CLIENT_HEAP,
      description = "-Xmx of the client JVM (default: ${DEFAULT-VALUE}).")
  private String clientHeap;

  @Option(names = "--limit-seconds", paramLabel = "S",
      defaultValue = "" + ScaleBench.Settings.DEFAULT_LIMIT_SECONDS,
      description = "Skip an operation whose time, extrapolated from the smaller sizes, passes S"
          + " (default: ${DEFAULT-VALUE}).")
  private double limitSeconds;

  @Option(names = "--uri", paramLabel = "URI", defaultValue = "${env:ARBOR_MONGO_URI}",
      description = "MongoDB connection string (default: $ARBOR_MONGO_URI, else an embedded"
          + " server in a JVM of its own).")
  private String uri;

  @Option(names = "--server-heap", paramLabel = "SIZE",
      defaultValue = ScaleBench.Settings.DEFAULT_SERVER_HEAP,
      description = "-Xmx of the embedded server's JVM (default: ${DEFAULT-VALUE}).")
  private String serverHeap;

  @Option(names = "--in-process-server",
      description = "Run the embedded server in this JVM (give it the -Xmx) instead of a JVM of"
          + " its own.")
  private boolean inProcessServer;

  @Option(names = "--markdown", paramLabel = "FILE",
      description = "Also write the tables to FILE.")
  private Path markdown;

  /** Creates the command; picocli sets the options. */
  public ScaleCommand() {}

  /**
   * The settings of the command line.
   *
   * @throws IllegalArgumentException naming an invalid option value
   */
  ScaleBench.Settings settings() {
    ScaleBench.Settings d = ScaleBench.Settings.defaults(launcher());
    List<TreePattern> chosen = Names.parse("pattern", patterns, TreePattern.values(),
        d.patterns());
    List<Integer> chosenSizes = sizes == null ? d.sizes() : Settings.parseSizes(sizes);
    List<String> chosenOps = ops == null ? d.ops() : ScaleBench.ops(ops);
    if (repeat < 1) {
      throw new IllegalArgumentException("--repeat must be at least 1, got " + repeat);
    }
    for (String[] heap : new String[][] {{"--client-heap", clientHeap},
        {"--server-heap", serverHeap}}) {
      if (!heap[1].matches("[0-9]+[kKmMgG]?")) {
        throw new IllegalArgumentException(heap[0] + " must be a size as -Xmx takes it (256m,"
            + " 10g), got '" + heap[1] + "'");
      }
    }
    return new ScaleBench.Settings(chosen, chosenSizes, chosenOps, repeat, clientHeap,
        limitSeconds, uri == null || uri.isBlank() ? null : uri, d.classpath(), d.launcher(),
        markdown, inProcessServer, serverHeap);
  }

  /**
   * How a client JVM runs this command: the class of the root command (whose {@code main} this
   * process runs) and the names of the subcommands down to this one.
   */
  private List<String> launcher() {
    List<String> names = new ArrayList<>();
    for (CommandSpec c = spec; c.parent() != null; c = c.parent()) {
      names.add(0, c.name());
    }
    names.add(0, spec.root().userObject().getClass().getName());
    return names;
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ScaleBench.Settings s;
    try {
      s = settings();
    } catch (IllegalArgumentException e) {
      err.println("arbor scale: " + Text.oneLine(e.getMessage()));
      err.flush();
      return 2;
    }
    ScaleBench.Results r;
    try {
      r = ScaleLauncher.run(s, out);
    } catch (ServerConnection.MalformedUri e) {
      err.println("arbor scale: malformed MongoDB URI (--uri or ARBOR_MONGO_URI): "
          + e.getMessage());
      err.flush();
      return 2;
    } catch (ServerConnection.Unusable | IOException e) {
      // the server (or its JVM) could not be used, or a client JVM could not be started
      err.println("arbor scale: " + Text.oneLine(e.getMessage()));
      err.flush();
      return 1;
    }
    String md = ScaleReport.markdown(s, r);
    out.println();
    out.println(md);
    if (s.markdown() != null) {
      Files.writeString(s.markdown(), md);
      out.println("written " + s.markdown());
    }
    out.flush();
    return r.failures.isEmpty() ? 0 : 1;
  }

  /**
   * {@code arbor scale client …}: one pattern's client JVM, started by the run; not for people.
   */
  @Command(name = "client", hidden = true,
      description = "The client JVM of one pattern (started by arbor scale).")
  int client(@Parameters(arity = "8", paramLabel = "ARG") List<String> args) {
    ScaleClient.client(args.toArray(String[]::new));
    return 0;
  }

  /**
   * {@code arbor scale server}: the embedded server's JVM, started by the run, serving until its
   * standard input ends; not for people.
   */
  @Command(name = "server", hidden = true,
      description = "The embedded server's JVM (started by arbor scale).")
  int server() {
    ScaleServer.serve(System.in);
    return 0;
  }
}
