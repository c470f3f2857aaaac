package dev.arbor.bench;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code arbor bench}: measures the five patterns side by side. */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Measure the five tree patterns side by side.")
public final class BenchCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    System.out.println("arbor bench: not implemented yet");
    return 0;
  }
}
