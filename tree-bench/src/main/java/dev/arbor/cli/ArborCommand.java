package dev.arbor.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** What the data subcommands share: the process's streams, progress on stderr and {@code -q}. */
abstract class ArborCommand implements Callable<Integer> {
  @ParentCommand
  Arbor arbor;

  @Spec
  CommandSpec spec;

  @Option(names = {"-q", "--quiet"},
      description = "Print no progress, notes or summary on stderr (errors still are).")
  boolean quiet;

  @Option(names = "--progress-interval", hidden = true, defaultValue = "2000",
      description = "Milliseconds between progress lines.")
  long progressMillis;

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  PrintWriter err() {
    return spec.commandLine().getErr();
  }

  Progress progress() {
    return new Progress(err(), !quiet, progressMillis);
  }
}
