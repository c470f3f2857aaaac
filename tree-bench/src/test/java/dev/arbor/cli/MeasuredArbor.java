package dev.arbor.cli;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;

/**
 * Runs the {@code arbor} command line, then prints to standard error the peak heap in use, in
 * bytes ({@code peak heap: N}, the sum of the heap pools' peaks, an upper bound), and exits with
 * the command's status.
 */
public final class MeasuredArbor {
  private MeasuredArbor() {}

  /** Runs {@code arbor args}; see the class documentation. */
  public static void main(String[] args) {
    int exit = Arbor.commandLine(System.in, System.out, System.err).execute(args);
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    System.err.println("peak heap: " + peak);
    System.exit(exit);
  }
}
