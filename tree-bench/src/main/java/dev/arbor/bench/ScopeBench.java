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
 * Writers in disjoint subtrees of one tree against writers in separate trees and in one shared
 * subtree, in the same run. For each pattern, four configurations, each in a fresh collection:
 *
 * <pre>
 *   layout            trees  writers  where each writer works
 *   baseline              1        1  subtree s0 of a tree r(s0)
 *   shared subtree        1        W  all in subtree s0 of one tree r(s0 … sW-1)
 *   disjoint subtrees     1        W  writer w in subtree sw of one tree r(s0 … sW-1)
 *   separate trees        W        W  writer w in subtree sw of a tree of its own r(sw)
 *                                     ({@link TreeOptions#withScope}, one collection)
 * </pre>
 *
 * <p>Every subtree has {@code nodes} nodes; every writer makes changes (insert a leaf under a
 * random node of its subtree, move it under another, delete it) for the same time, on a store of
 * its own (as separate processes would), after a warm-up of its own in the same configuration
 * (as JMH's warm-up iterations: the JIT has compiled what the configuration runs). Reports
 * changes per second and the time the writers spent waiting for locks, and checks every tree
 * written: {@code check()} finds nothing and the tree is the one loaded (each writer's changes
 * undo each other).
 *
 * <p>The lock wait is measured from outside Arbor: a caller that finds a tree locked (or a mark
 * of another change in its way) sleeps between polls, and the JVM's thread contention monitoring
 * adds up the time each writer thread spent sleeping or parked ({@link ThreadMXBean}, waited
 * time); a writer that never waits spends no time so.
 *
 * <pre>{@code
 * java -jar tree-bench/target/arbor.jar scope [--patterns all] [--seconds 5] [--writers 4]
 *     [--nodes 200] [--uri mongodb://...]
 * }</pre>
 *
 * <p>The options are {@link ScopeCommand}'s. Defaults: all five patterns, 5 s, 4 writers, 200
 * nodes per subtree, an embedded mongo-java-server.
 */
final class ScopeBench {
  private ScopeBench() {}

  /** Where the writers of a configuration work. */
  enum Layout {
    BASELINE("baseline"),
    SHARED_SUBTREE("shared subtree"),
    DISJOINT_SUBTREES("disjoint subtrees"),
    SEPARATE_TREES("separate trees");

    final String label;

    Layout(String label) {
      this.label = label;
    }
  }

  /** The figures of one configuration. */
  record Figures(TreePattern pattern, Layout layout, int trees, int writers, long changes,
      double seconds, long waitedMillis, long roundTrips, long failures,
      RuntimeException firstFailure, boolean treesIntact) {
    double perSecond() {
      return changes / seconds;
    }

    /** The commands the writers sent per change (machine-independent, unlike the time). */
    double roundTripsPerChange() {
      return changes == 0 ? 0 : (double) roundTrips / changes;
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%-18s %-17s %d tree%s x %d writer%s: %7.1f changes/s,"
          + " %4.1f round trips per change, %6d ms waiting for locks (%4.1f%% of writer time),"
          + " %d failed%s, trees %s",
          Names.of(pattern), layout.label, trees, trees == 1 ? " " : "s", writers,
          writers == 1 ? " " : "s",
          perSecond(), roundTripsPerChange(), waitedMillis,
          100.0 * waitedMillis / (seconds * 1000 * writers), failures,
          firstFailure == null ? "" : " (first: " + firstFailure + ")",
          treesIntact ? "checked" : "NOT AS LOADED");
    }
  }

  /**
   * The throughput of disjoint subtrees over that of separate trees, for {@code pattern}: the
   * goal is at least 0.8.
   */
  static double disjointOverSeparate(List<Figures> figures, TreePattern pattern) {
    double disjoint = 0;
    double separate = 0;
    for (Figures f : figures) {
      if (f.pattern() == pattern && f.layout() == Layout.DISJOINT_SUBTREES) {
        disjoint = f.perSecond();
      } else if (f.pattern() == pattern && f.layout() == Layout.SEPARATE_TREES) {
        separate = f.perSecond();
      }
    }
    return separate == 0 ? 0 : disjoint / separate;
  }

  /** Runs the four configurations for each pattern, with no warm-up. */
  static List<Figures> run(List<TreePattern> patterns, double seconds, int writers, int nodes,
      String uri) throws InterruptedException {
    return run(patterns, 0, seconds, writers, nodes, uri, f -> { });
  }

  /**
   * Runs the four configurations for each pattern, each measured for {@code seconds} after its
   * writers made changes unmeasured for {@code warmup} seconds (the JIT compiles the code each
   * configuration runs, as a long-running application's would be); tells {@code done} the figures
   * of each configuration as it ends.
   */
  static List<Figures> run(List<TreePattern> patterns, double warmup, double seconds, int writers,
      int nodes, String uri, java.util.function.Consumer<Figures> done)
      throws InterruptedException {
    List<Figures> out = new ArrayList<>();
    try (ServerConnection server = ServerConnection.open(uri, null, new CommandMeter())) {
      MongoDatabase db = server.client().getDatabase("arbor_scope_bench_" + System.nanoTime());
      try {
        int n = 0;
        for (TreePattern pattern : patterns) {
          for (Layout layout : Layout.values()) {
            Figures f = measure(pattern, db.getCollection("c" + n++), layout,
                layout == Layout.BASELINE ? 1 : writers, warmup, seconds, nodes, server.meter());
            out.add(f);
            done.accept(f);
          }
        }
      } finally {
        db.drop();
      }
    }
    return out;
  }

  /**
   * {@code writers} writers working as {@code layout} says, in a fresh collection: unmeasured for
   * {@code warmup} seconds, then measured for {@code seconds}.
   */
  static Figures measure(TreePattern pattern, MongoCollection<Document> collection,
      Layout layout, int writers, double warmup, double seconds, int nodes, CommandMeter meter)
      throws InterruptedException {
    int trees = layout == Layout.SEPARATE_TREES ? writers : 1;
    int subtrees = layout == Layout.SHARED_SUBTREE || layout == Layout.DISJOINT_SUBTREES
        ? writers : 1;
    List<TreeStore> stores = new ArrayList<>();
    List<Tree> loaded = new ArrayList<>();
    for (int t = 0; t < trees; t++) {
      TreeStore s = pattern.open(collection, TreeOptions.defaults().withScope("tree", t));
      if (t == 0) {
        s.ensureIndexes();
      }
      Tree tree = layout == Layout.SEPARATE_TREES ? tree(t, 1, nodes) : tree(0, subtrees, nodes);
      s.load(tree);
      stores.add(s);
      loaded.add(tree);
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
    long warmEnd = System.nanoTime() + (long) (warmup * 1e9); // before the latch opens
    // the last writer to end its warm-up starts the measured time for all
    AtomicLong sent = new AtomicLong();
    AtomicLong t0 = new AtomicLong(Long.MIN_VALUE); // until the measured time starts
    java.util.concurrent.CyclicBarrier measured = new java.util.concurrent.CyclicBarrier(writers,
        () -> {
          sent.set(meter.roundTrips());
          t0.set(System.nanoTime());
        });
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      // Each writer has a store of its own on its tree, as separate processes would.
      int tree = layout == Layout.SEPARATE_TREES ? w : 0;
      TreeStore store = pattern.open(collection, TreeOptions.defaults().withScope("tree", tree));
      String subtree = "s" + (layout == Layout.SHARED_SUBTREE ? 0 : w) + "-n";
      int writer = w;
      Thread t = new Thread(() -> {
        Random random = new Random(writer);
        boolean passed = false;
        try {
          start.await();
          int i = 0;
          while (System.nanoTime() < warmEnd) {
            change(store, "w" + writer + "-" + i++, subtree, random, nodes, failures,
                firstFailure);
          }
          measured.await();
          passed = true;
          long before = waitedMillis(mx);
          long end = t0.get() + (long) (seconds * 1e9);
          while (System.nanoTime() < end) {
            if (change(store, "w" + writer + "-" + i++, subtree, random, nodes, failures,
                firstFailure)) {
              changes.addAndGet(3);
            }
          }
          waited.addAndGet(waitedMillis(mx) - before);
        } catch (InterruptedException | java.util.concurrent.BrokenBarrierException e) {
          Thread.currentThread().interrupt();
        } finally {
          if (!passed) {
            measured.reset(); // a writer stopped in its warm-up (an Error): the others end too
          }
        }
      }, "scope-bench-" + w);
      threads.add(t);
      t.start();
    }
    start.countDown();
    for (Thread t : threads) {
      t.join();
    }
    // no measured time if a writer stopped in its warm-up (the barrier never opened)
    double elapsed = t0.get() == Long.MIN_VALUE ? seconds
        : (System.nanoTime() - t0.get()) / 1e9;
    long roundTrips = meter.roundTrips() - sent.get();
    boolean intact = true;
    for (int t = 0; t < trees; t++) {
      intact &= stores.get(t).check().isEmpty() && stores.get(t).snapshot().equals(loaded.get(t));
    }
    return new Figures(pattern, layout, trees, writers, changes.get(), elapsed, waited.get(),
        roundTrips, failures.get(), firstFailure.get(), intact);
  }

  /**
   * One writer's three changes (insert a leaf {@code id} under a random node of its subtree, move
   * it under another, delete it); whether all three returned, else the failure is counted.
   */
  private static boolean change(TreeStore store, String id, String subtree, Random random,
      int nodes, AtomicLong failures,
      java.util.concurrent.atomic.AtomicReference<RuntimeException> firstFailure) {
    try {
      store.insert(id, Position.lastChildOf(subtree + random.nextInt(nodes)));
      store.move(id, Position.firstChildOf(subtree + random.nextInt(nodes)));
      store.delete(id);
      return true;
    } catch (RuntimeException e) {
      if (failures.getAndIncrement() == 0) {
        firstFailure.compareAndSet(null, e);
      }
      return false;
    }
  }

  /** The time the current thread has spent sleeping or parked, in ms (0 if not measured). */
  private static long waitedMillis(ThreadMXBean mx) {
    if (!mx.isThreadContentionMonitoringEnabled()) {
      return 0;
    }
    return Math.max(0, mx.getThreadInfo(Thread.currentThread().getId()).getWaitedTime());
  }

  /**
   * A tree {@code r} with {@code count} subtrees {@code s<first>} … under it, each a random
   * recursive tree of {@code nodes} nodes {@code s<k>-n0…}.
   */
  static Tree tree(int first, int count, int nodes) {
    Tree.Builder b = Tree.builder();
    b.add("r", null, java.util.Map.of());
    for (int k = first; k < first + count; k++) {
      Random random = new Random(42);
      String s = "s" + k + "-n";
      b.add(s + 0, "r", java.util.Map.of());
      for (int i = 1; i < nodes; i++) {
        b.add(s + i, s + random.nextInt(i), java.util.Map.of());
      }
    }
    return b.build();
  }
}
