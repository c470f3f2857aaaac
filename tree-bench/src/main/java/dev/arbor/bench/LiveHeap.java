package dev.arbor.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;

/**
 * The largest heap in use right after a full collection (the live data then, plus nothing
 * else), from the JVM's notifications of its collections: the client forces one after each
 * operation (untimed), and the collector runs others when the old generation fills.
 */
final class LiveHeap implements javax.management.NotificationListener {
  private final java.util.Set<String> heapPools = new java.util.HashSet<>();
  private volatile long max;

  LiveHeap() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        heapPools.add(pool.getName());
      }
    }
    for (java.lang.management.GarbageCollectorMXBean gc
        : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof javax.management.NotificationEmitter e) {
        e.addNotificationListener(this, null, null);
      }
    }
  }

  @Override
  public void handleNotification(javax.management.Notification n, Object handback) {
    if (!n.getType().equals(com.sun.management.GarbageCollectionNotificationInfo
        .GARBAGE_COLLECTION_NOTIFICATION)) {
      return;
    }
    var info = com.sun.management.GarbageCollectionNotificationInfo.from(
        (javax.management.openmbean.CompositeData) n.getUserData());
    if (!info.getGcAction().contains("major")) {
      return;
    }
    long used = 0;
    for (var e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
      if (heapPools.contains(e.getKey())) {
        used += e.getValue().getUsed();
      }
    }
    synchronized (this) {
      max = Math.max(max, used);
    }
  }

  /** Forces a full collection and waits a little for its notification. */
  void sample() {
    System.gc();
    try {
      Thread.sleep(20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  synchronized long takeMax() {
    long m = max;
    max = 0;
    return m;
  }
}
