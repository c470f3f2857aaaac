package dev.arbor.cli;

import dev.arbor.bench.BenchCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code arbor} command line: {@code arbor bench|import|export|convert|check|repair}. */
@Command(
    name = "arbor",
    mixinStandardHelpOptions = true,
    version = "arbor 0.1.0-SNAPSHOT",
    description = "Trees in MongoDB in the five patterns of the MongoDB manual.",
    subcommands = {BenchCommand.class})
public final class Arbor {
  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    System.exit(new CommandLine(new Arbor()).execute(args));
  }
}
