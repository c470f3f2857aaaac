package dev.arbor.bench;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CommandMeter;
import dev.arbor.tools.ServerConnection;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.Document;

/**
 * Writers on different trees of one collection against writers on one tree, in the same run: one
 * writer on one scoped tree (the baseline), W writers on one scoped tree, then W writers each on a
 * tree of its own ({@link TreeOptions#withScope}), in a fresh collection each, every writer making
 * changes (insert a leaf, move it, delete it) for the same time. Reports changes per second and
 * the time the writers spent waiting for locks.
 *
 * <p>The lock wait is measured from outside Arbor: a caller that finds a tree locked sleeps
 * between polls of the lock document, and the JVM's thread contention monitoring adds up the time
 * each writer thread spent sleeping or parked ({@link ThreadMXBean}, waited time); a writer that
 * never waits for a lock spends no time so.
 *
 * <pre>{@code
 * java -jar tree-bench/target/arbor.jar scope [--patterns all] [--seconds 5] [--writers 4]
 *     [--nodes 200] [--uri mongodb://...]
 * }</pre>
 *
 * <p>The options are {@link ScopeCommand}'s. Defaults: all five patterns, 5 s, 4 writers, 200
 * nodes per tree, an embedded mongo-java-server.
 */
final class ScopeBench {
  private ScopeBench() {}

  /** The figures of one configuration. */
  record Figures(TreePattern pattern, int trees, int writers, long changes, double seconds,
      long waitedMillis, long failures, RuntimeException firstFailure) {
    double perSecond() {
      return changes / seconds;
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%-18s %d tree%s x %d writer%s: %7.1f changes/s,"
          + " %6d ms waiting for locks (%4.1f%% of writer time), %d failed%s", pattern, trees,
          trees == 1 ? " " : "s", writers, writers == 1 ? " " : "s", perSecond(), waitedMillis,
          100.0 * waitedMillis / (seconds * 1000 * writers), failures,
          firstFailure == null ? "" : " (first: " + firstFailure + ")");
    }
  }

  /**
   * Runs three configurations for each pattern: the baseline (one writer on one tree), then
   * {@code writers} writers on one tree, then {@code writers} writers each on a tree of its own.
   */
  static List<Figures> run(List<TreePattern> patterns, double seconds, int writers, int nodes,
      String uri) throws InterruptedException {
    List<Figures> out = new ArrayList<>();
    try (ServerConnection server = ServerConnection.open(uri, null, new CommandMeter())) {
      MongoDatabase db = server.client().getDatabase("arbor_scope_bench_" + System.nanoTime());
      try {
        int n = 0;
        for (TreePattern pattern : patterns) {
          out.add(measure(pattern, db.getCollection("c" + n++), 1, 1, seconds, nodes));
          out.add(measure(pattern, db.getCollection("c" + n++), 1, writers, seconds, nodes));
          out.add(measure(pattern, db.getCollection("c" + n++), writers, writers, seconds,
              nodes));
        }
      } finally {
        db.drop();
      }
    }
    return out;
  }

  /** {@code writers} writers spread round-robin over {@code trees} trees of one collection. */
  static Figures measure(TreePattern pattern, MongoCollection<Document> collection, int trees,
      int writers, double seconds, int nodes) throws InterruptedException {
    List<TreeStore> stores = new ArrayList<>();
    Tree tree = tree(nodes);
    for (int t = 0; t < trees; t++) {
      TreeStore s = pattern.open(collection, TreeOptions.defaults().withScope("tree", t));
      if (t == 0) {
        s.ensureIndexes();
      }
      s.load(tree);
      stores.add(s);
    }
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    if (mx.isThreadContentionMonitoringSupported()) {
      mx.setThreadContentionMonitoringEnabled(true);
    }
    AtomicLong changes = new AtomicLong();
    AtomicLong waited = new AtomicLong();
    AtomicLong failures = new AtomicLong();
    java.util.concurrent.atomic.AtomicReference<RuntimeException> firstFailure =
        new java.util.concurrent.atomic.AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    long[] elapsed = new long[1];
    for (int w = 0; w < writers; w++) {
      // Each writer has a store of its own on its tree, as separate processes would.
      TreeStore store = w < trees ? stores.get(w)
          : pattern.open(collection, TreeOptions.defaults().withScope("tree", w % trees));
      int writer = w;
      Thread t = new Thread(() -> {
        Random random = new Random(writer);
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        long before = waitedMillis(mx);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        for (int i = 0; System.nanoTime() < end; i++) {
          String id = "w" + writer + "-" + i;
          try {
            store.insert(id, Position.lastChildOf("n" + random.nextInt(nodes)));
            store.move(id, Position.firstChildOf("n" + random.nextInt(nodes)));
            store.delete(id);
            changes.addAndGet(3);
          } catch (RuntimeException e) {
            if (failures.getAndIncrement() == 0) {
              firstFailure.compareAndSet(null, e);
            }
          }
        }
        waited.addAndGet(waitedMillis(mx) - before);
      }, "scope-bench-" + w);
      threads.add(t);
      t.start();
    }
    long t0 = System.nanoTime();
    start.countDown();
    for (Thread t : threads) {
      t.join();
    }
    elapsed[0] = System.nanoTime() - t0;
    return new Figures(pattern, trees, writers, changes.get(), elapsed[0] / 1e9, waited.get(),
        failures.get(), firstFailure.get());
  }

  /** The time the current thread has spent sleeping or parked, in ms (0 if not measured). */
  private static long waitedMillis(ThreadMXBean mx) {
    if (!mx.isThreadContentionMonitoringEnabled()) {
      return 0;
    }
    return Math.max(0, mx.getThreadInfo(Thread.currentThread().getId()).getWaitedTime());
  }

  /** A random recursive tree of {@code nodes} nodes {@code n0…}. */
  static Tree tree(int nodes) {
    Random random = new Random(42);
    Tree.Builder b = Tree.builder();
    b.add("n0", null, java.util.Map.of());
    for (int i = 1; i < nodes; i++) {
      b.add("n" + i, "n" + random.nextInt(i), java.util.Map.of());
    }
    return b.build();
  }
}
