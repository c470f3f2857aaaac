package dev.arbor.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU time spent by this JVM (every thread: the load's builder and sender, the driver, the
 * garbage collector) and by the server's process, read from {@code /proc/PID/stat} (Linux; in
 * ticks of 10 ms), so that a scale run can say where a load's time went besides waiting.
 */
final class CpuClocks {
  /** Linux's {@code USER_HZ}: the unit of {@code /proc/PID/stat}'s times. */
  private static final long NANOS_PER_TICK = 10_000_000L;

  private final java.lang.management.OperatingSystemMXBean os =
      ManagementFactory.getOperatingSystemMXBean();
  private final Path serverStat;

  /** @param serverPid the server's process id, or -1 when it is not on this machine */
  CpuClocks(long serverPid) {
    Path stat = serverPid < 0 ? null : Path.of("/proc", String.valueOf(serverPid), "stat");
    this.serverStat = stat != null && Files.isReadable(stat) ? stat : null;
  }

  /** CPU nanoseconds of this JVM so far, -1 if the JVM does not say. */
  long client() {
    return os instanceof com.sun.management.OperatingSystemMXBean sun
        ? sun.getProcessCpuTime() : -1;
  }

  /** CPU nanoseconds of the server's process so far, -1 if unknown. */
  long server() {
    if (serverStat == null) {
      return -1;
    }
    try {
      String s = Files.readString(serverStat);
      // after "pid (name) ": state is field 3; utime and stime are fields 14 and 15
      String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * NANOS_PER_TICK;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
