package dev.arbor.cli;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.arbor.bench.BenchCommand;
import dev.arbor.bench.ScaleCommand;
import dev.arbor.bench.ScopeCommand;
import dev.arbor.tools.Errors;
import dev.arbor.tools.Text;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;
import picocli.CommandLine;

/**
 * The {@code arbor} command line: {@code arbor
 * bench|scale|scope|import|export|convert|check|repair|doctor}: the benchmarks ({@code
 * dev.arbor.bench}) and the data subcommands.
 *
 * <p>Every data subcommand names its tree with {@code --uri} (or {@code --data-dir} for the
 * embedded server kept on disk; neither: an embedded in-memory server), {@code --db}, {@code
 * --collection} and {@code --pattern}. Data goes to stdout (the JSON of {@code export}, the
 * problems of {@code check}); progress, notes and errors go to stderr, each error on one line.
 *
 * <p>Exit codes: {@value #EXIT_OK} success, {@value #EXIT_FAILURE} failure (nothing written),
 * {@value #EXIT_USAGE} bad command line, {@value #EXIT_PROBLEMS} {@code check} found problems or
 * problems remain after {@code repair}.
 */
@Command(
    name = "arbor",
    mixinStandardHelpOptions = true,
    version = "arbor 0.1.0-SNAPSHOT",
    description = "Trees in MongoDB in the five patterns of the MongoDB manual.",
    subcommands = {BenchCommand.class, ScaleCommand.class, ScopeCommand.class,
        ImportCommand.class, ExportCommand.class, ConvertCommand.class, CheckCommand.class,
        RepairCommand.class, DoctorCommand.class, HelpCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:success",
        "1:failure, one line on stderr; nothing was written",
        "2:invalid command line",
        "3:check found problems, problems remain after repair, or doctor found a failure"})
public final class Arbor implements Callable<Integer> {
  /** Success. */
  public static final int EXIT_OK = 0;
  /** A failure, reported on one line of stderr; nothing was written. */
  public static final int EXIT_FAILURE = 1;
  /** An invalid command line. */
  public static final int EXIT_USAGE = 2;
  /**
   * {@code check} found problems, problems remain after {@code repair}, or {@code doctor} found
   * a failure.
   */
  public static final int EXIT_PROBLEMS = 3;

  private final InputStream stdin;
  private final OutputStream stdout;
  private final Capacity capacity;

  @Spec
  CommandSpec spec;

  @Option(names = "--stacktrace", scope = ScopeType.INHERIT,
      description = "On an error, print its stack trace too (for bug reports).")
  boolean stacktrace;

  private Arbor(InputStream stdin, OutputStream stdout, Capacity capacity) {
    this.stdin = stdin;
    this.stdout = stdout;
    this.capacity = capacity;
  }

  /**
   * Runs the command line and exits with its status. An exception no thread catches (an {@link
   * OutOfMemoryError} in a thread of the embedded server, say) is one line on stderr too, its
   * stack trace only with {@code --stacktrace}.
   */
  public static void main(String[] args) {
    boolean traces = List.of(args).contains("--stacktrace");
    Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
      System.err.println("arbor: " + Errors.message(e) + " (thread " + thread.getName() + ")");
      if (traces) {
        e.printStackTrace();
      }
      System.err.flush();
    });
    System.exit(commandLine(System.in, System.out, System.err).execute(args));
  }

  /**
   * The command line reading data from {@code stdin} and writing data to {@code stdout} and
   * messages to {@code stderr}, both in UTF-8; {@code execute(args)} runs it and returns the exit
   * code. For embedding and for tests.
   */
  public static CommandLine commandLine(InputStream stdin, OutputStream stdout,
      OutputStream stderr) {
    return commandLine(stdin, stdout, stderr, Capacity.ofThisMachine());
  }

  /**
   * The command line as {@link #commandLine(InputStream, OutputStream, OutputStream)}, whose
   * {@code import} checks a load against {@code capacity} (tests: a small disk or heap).
   */
  static CommandLine commandLine(InputStream stdin, OutputStream stdout, OutputStream stderr,
      Capacity capacity) {
    requireNonNull(stdin, "stdin");
    requireNonNull(stdout, "stdout");
    requireNonNull(stderr, "stderr");
    requireNonNull(capacity, "capacity");
    CommandLine cmd = new CommandLine(new Arbor(stdin, stdout, capacity));
    cmd.setOut(new PrintWriter(new OutputStreamWriter(stdout, UTF_8), true));
    cmd.setErr(new PrintWriter(new OutputStreamWriter(stderr, UTF_8), true));
    CommandLine.IExecutionStrategy run = cmd.getExecutionStrategy();
    cmd.setExecutionStrategy(parseResult -> {
      Heap.watch();
      try {
        return run.execute(parseResult);
      } catch (Error e) {
        // picocli lets errors through, and the JVM would print their stack trace; an
        // OutOfMemoryError reaches here with the command's stack unwound, its memory free again
        List<CommandLine> commands = parseResult.asCommandLineList();
        throw new CommandLine.ExecutionException(commands.get(commands.size() - 1),
            String.valueOf(e.getMessage()), e);
      }
    });
    cmd.setExecutionExceptionHandler(Arbor::handleExecutionException);
    cmd.setParameterExceptionHandler(Arbor::handleParameterException);
    return cmd;
  }

  InputStream stdin() {
    return stdin;
  }

  OutputStream stdout() {
    return stdout;
  }

  /** What a load may store where its connection keeps its data ({@code import}). */
  Capacity capacity() {
    return capacity;
  }

  /** {@code arbor} alone: the usage, on stderr. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return EXIT_USAGE;
  }

  private static int handleExecutionException(Exception e, CommandLine cmd,
      ParseResult parseResult) {
    PrintWriter err = cmd.getErr();
    Throwable error = e instanceof CommandLine.ExecutionException && e.getCause() instanceof Error
        ? e.getCause() : e; // an OutOfMemoryError, say, from the strategy
    String message = Errors.message(error);
    if (!(error instanceof OutOfMemoryError) && lostTheServer(error) && Heap.ranFull()) {
      // perhaps in a thread of the embedded server, which the command saw only as a lost
      // connection
      message += "; " + Errors.heapRanFull(Runtime.getRuntime().maxMemory());
    } else if (storeClosed(error)) {
      message += "; the data directory's store closed when a write failed, "
          + (Heap.ranFull() ? Errors.heapRanFull(Runtime.getRuntime().maxMemory())
          : "out of heap (java -Xmx, at most " + dev.arbor.tools.Text.bytes(
              Runtime.getRuntime().maxMemory()) + " now) or of disk space")
          + "; the next command on it completes or undoes what was written";
    }
    err.println(cmd.getCommandSpec().qualifiedName() + ": " + message);
    if (wantsStackTrace(parseResult)) {
      error.printStackTrace(err);
    }
    err.flush();
    return EXIT_FAILURE;
  }

  /**
   * Whether {@code error} comes of a connection lost, a command that did not answer in time or a
   * data directory's store closed: what an embedded server out of memory looks like to its
   * client.
   */
  private static boolean lostTheServer(Throwable error) {
    return causedBy(error, t -> t instanceof com.mongodb.MongoSocketException
        || t instanceof com.mongodb.MongoTimeoutException
        || t instanceof com.mongodb.MongoOperationTimeoutException);
  }

  /** Whether {@code error} or one of its causes is one that {@code kind} tells. */
  private static boolean causedBy(Throwable error,
      java.util.function.Predicate<Throwable> kind) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (kind.test(t)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code error} comes of a data directory's store closed: H2 closes it when a write
   * fails, out of heap or of disk space (the server then answers every command "This store is
   * closed").
   */
  private static boolean storeClosed(Throwable error) {
    return causedBy(error, t -> t instanceof com.mongodb.MongoException
        && t.getMessage() != null && t.getMessage().contains("This store is closed"));
  }

  private static int handleParameterException(ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    PrintWriter err = cmd.getErr();
    String name = cmd.getCommandSpec().qualifiedName();
    String message = e.getMessage();
    if (e instanceof UnmatchedArgumentException u) {
      List<String> suggestions = u.getSuggestions();
      if (!suggestions.isEmpty()) {
        message += " (did you mean " + String.join(" or ", suggestions) + "?)";
      }
    }
    err.println(name + ": " + Text.oneLine(message) + "; see '" + name + " --help'");
    err.flush();
    return EXIT_USAGE;
  }

  private static boolean wantsStackTrace(ParseResult parseResult) {
    for (CommandLine c : parseResult.asCommandLineList()) {
      if (c.getParseResult().hasMatchedOption("--stacktrace")) {
        return true;
      }
    }
    return false;
  }
}
