package dev.arbor.cli;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;

/**
 * Whether the heap ran nearly full while a command ran: an {@link OutOfMemoryError} in a thread
 * of the embedded server (which shares the {@code arbor} process) is not thrown to the command,
 * which sees only its connection closed; the collector's own count of collections that left a
 * heap pool at least {@value #FULL_PERCENT}% full tells it why, so that its message can name the
 * heap.
 */
final class Heap {
  /** A collection that leaves a heap pool at least this full (percent of its maximum) counts. */
  static final int FULL_PERCENT = 90;

  private static volatile long baseline;

  private Heap() {}

  /**
   * Starts watching: arms the collection-usage threshold of the heap pools that have one and
   * a maximum, and remembers how often it was passed so far.
   */
  static void watch() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported()) {
        long max = pool.getUsage().getMax();
        if (max > 0 && pool.getCollectionUsageThreshold() == 0) {
          pool.setCollectionUsageThreshold(max / 100 * FULL_PERCENT);
        }
      }
    }
    baseline = passed();
  }

  /** Whether a collection left the heap nearly full since {@link #watch()}. */
  static boolean ranFull() {
    return passed() > baseline;
  }

  private static long passed() {
    long n = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported()
          && pool.getCollectionUsageThreshold() > 0) {
        n += pool.getCollectionUsageThresholdCount();
      }
    }
    return n;
  }
}
