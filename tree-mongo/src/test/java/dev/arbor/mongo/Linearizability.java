package dev.arbor.mongo;

import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A linearizability checker for tree stores (after Wing and Gong, as Knossos and Porcupine do it):
 * a history of calls, each with its start and end on one clock and its outcome, is linearizable if
 * one order of the calls, consistent with real time (a call that ended before another started
 * comes first), explains every outcome and every read when replayed on {@link InMemoryTreeStore},
 * and ends at the stored tree.
 *
 * <p>Outcomes: a call that returned (or threw a domain exception) must be in the order, with the
 * same result; one that threw {@link ChangeInterruptedException} with {@code NOT_APPLIED} must
 * not; one with {@code COMMITTED} must be, with no end; one with {@code UNKNOWN} may be, with no
 * end.
 */
final class Linearizability {
  /** One call as it ran. */
  static final class Call {
    final int process;
    final String what;
    final Function<TreeStore, @Nullable Object> op;
    /** Whether {@link #op} only reads: it leaves the reference as it found it. */
    final boolean reads;
    final long start;
    long end = Long.MAX_VALUE;
    /** The value returned, or the exception's class. */
    @Nullable Object result;
    @Nullable Throwable thrown;

    Call(int process, String what, Function<TreeStore, @Nullable Object> op, long start) {
      this(process, what, op, false, start);
    }

    Call(int process, String what, Function<TreeStore, @Nullable Object> op, boolean reads,
        long start) {
      this.process = process;
      this.what = what;
      this.op = op;
      this.reads = reads;
      this.start = start;
    }

    @Nullable Outcome interrupted() {
      return thrown instanceof ChangeInterruptedException c ? c.outcome() : null;
    }

    boolean required() {
      Outcome o = interrupted();
      return o == null || o == Outcome.COMMITTED;
    }

    boolean excluded() {
      return interrupted() == Outcome.NOT_APPLIED;
    }

    long effectiveEnd() {
      return interrupted() != null ? Long.MAX_VALUE : end;
    }

    @Override
    public String toString() {
      return "p" + process + " " + what + " [" + start / 1_000_000 + "–"
          + (end == Long.MAX_VALUE ? "∞" : end / 1_000_000) + " ms] → "
          + (thrown != null ? thrown.getClass().getSimpleName()
              + (interrupted() != null ? " " + interrupted() : "") : shortly(result));
    }

    private static String shortly(@Nullable Object o) {
      String s = String.valueOf(o);
      return s.length() > 60 ? s.substring(0, 60) + "…" : s;
    }
  }

  /** A history of calls, logged by several threads. */
  static final class History {
    private final List<Call> calls = new ArrayList<>();
    private final java.util.function.LongSupplier clock;
    private final long origin;

    /** A history on this process's clock ({@link System#nanoTime()}). */
    History() {
      this(System::nanoTime);
    }

    /**
     * A history on {@code clock}, in nanoseconds: {@link #wallClock()} for calls made by
     * several processes.
     */
    History(java.util.function.LongSupplier clock) {
      this.clock = clock;
      this.origin = clock.getAsLong();
    }

    /** The wall clock in nanoseconds, at its precision (microseconds here): one per machine. */
    static long wallClock() {
      java.time.Instant now = java.time.Instant.now();
      return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** Runs and logs one call of {@code process} on {@code store}. */
    @Nullable Object call(int process, String what, TreeStore store,
        Function<TreeStore, @Nullable Object> op) {
      return call(process, what, store, op, false);
    }

    /**
     * Runs and logs one read of {@code process} on {@code store}: {@code op} only reads, so the
     * check replays it on the state it reached without copying it.
     */
    @Nullable Object read(int process, String what, TreeStore store,
        Function<TreeStore, @Nullable Object> op) {
      return call(process, what, store, op, true);
    }

    private @Nullable Object call(int process, String what, TreeStore store,
        Function<TreeStore, @Nullable Object> op, boolean reads) {
      Call c = new Call(process, what, op, reads, clock.getAsLong() - origin);
      try {
        c.result = op.apply(store);
        return c.result;
      } catch (RuntimeException e) {
        c.thrown = e;
        return null;
      } finally {
        c.end = clock.getAsLong() - origin;
        add(c);
      }
    }

    /** Logs a call made elsewhere, its start and end measured from {@link #origin()}. */
    synchronized void add(Call c) {
      calls.add(c);
    }

    long origin() {
      return origin;
    }

    synchronized List<Call> calls() {
      return new ArrayList<>(calls);
    }
  }

  private final Tree initial;
  private final List<Call> calls;
  private final Tree stored;
  private final Set<List<Object>> seen = new HashSet<>();
  private int explored;

  private Linearizability(Tree initial, List<Call> history, Tree stored) {
    this.initial = initial;
    this.calls = history.stream().filter(c -> !c.excluded()).toList();
    this.stored = stored;
  }

  /**
   * Returns null if the history is linearizable from {@code initial} to {@code stored}, else why
   * not.
   */
  static @Nullable String check(Tree initial, List<Call> history, Tree stored) {
    Linearizability l = new Linearizability(initial, history, stored);
    if (l.searchWithRoom(initial)) {
      return null;
    }
    StringBuilder b = new StringBuilder("No order of the calls, consistent with real time,"
        + " explains every outcome and the stored tree (" + l.explored + " states explored):");
    for (Call c : l.calls) {
      b.append("\n  ").append(c);
    }
    b.append("\nThe stored tree against the changes replayed in the order they ended (those that"
        + " did not end, applied last; what differs points at the change not explained):");
    InMemoryTreeStore replay = new InMemoryTreeStore();
    replay.load(initial);
    List<Tree> states = new ArrayList<>(List.of(initial));
    l.calls.stream().filter(c -> !(c.result instanceof Tree) && c.thrown == null
            || c.interrupted() != null)
        .sorted(java.util.Comparator.comparingLong(Call::effectiveEnd))
        .forEach(c -> {
          try {
            c.op.apply(replay);
            states.add(replay.snapshot());
          } catch (RuntimeException e) {
            b.append("\n  (replayed, ").append(c.what).append(" threw ").append(e).append(')');
          }
        });
    for (Call c : l.calls) {
      if (c.result instanceof Tree t && !states.contains(t)) {
        b.append("\n  ").append(c.what).append(" [").append(c.start / 1_000_000).append('–')
            .append(c.end / 1_000_000).append(" ms] saw a tree no replayed state is; against the"
                + " closest:");
        Tree closest = states.stream().min(java.util.Comparator.comparingInt(
            x -> differences(x, t).size())).orElseThrow();
        differences(closest, t).stream().limit(10).forEach(d -> b.append("\n    ").append(d));
      }
    }
    Tree replayed = replay.snapshot();
    java.util.Map<String, dev.arbor.core.Node> want = new java.util.HashMap<>();
    replayed.entries().forEach(n -> want.put(n.id(), n));
    java.util.Map<String, dev.arbor.core.Node> got = new java.util.HashMap<>();
    stored.entries().forEach(n -> got.put(n.id(), n));
    int shown = 0;
    java.util.Set<String> ids = new java.util.TreeSet<>(want.keySet());
    ids.addAll(got.keySet());
    for (String id : ids) {
      dev.arbor.core.Node w = want.get(id);
      dev.arbor.core.Node g = got.get(id);
      boolean same = w != null && g != null && java.util.Objects.equals(w.parentId(),
          g.parentId()) && w.attributes().equals(g.attributes());
      if (!same && shown++ < 30) {
        b.append("\n  ").append(id).append(": replayed ").append(w == null ? "absent"
            : "under " + w.parentId() + " " + w.attributes()).append(", stored ")
            .append(g == null ? "absent" : "under " + g.parentId() + " " + g.attributes());
      }
    }
    if (shown == 0 && !replayed.equals(stored)) {
      b.append("\n  (same parents and data: the order of some siblings differs)");
    }
    return b.toString();
  }

  private static String classes(dev.arbor.core.Node n) {
    StringBuilder b = new StringBuilder(n.attributes().getClass().getSimpleName()).append('{');
    n.attributes().forEach((k, v) -> b.append(k).append('=')
        .append(v == null ? "null" : v.getClass().getSimpleName()).append(' '));
    return b.append('}').toString();
  }

  /** The nodes whose parent or data differ between {@code want} and {@code got}. */
  private static List<String> differences(Tree want, Tree got) {
    java.util.Set<String> ids = new java.util.TreeSet<>(want.ids());
    ids.addAll(got.ids());
    List<String> out = new ArrayList<>();
    for (String id : ids) {
      dev.arbor.core.Node w = want.contains(id) ? want.get(id) : null;
      dev.arbor.core.Node g = got.contains(id) ? got.get(id) : null;
      if (w == null || g == null || !Objects.equals(w.parentId(), g.parentId())
          || !w.attributes().equals(g.attributes())) {
        out.add(id + ": expected " + (w == null ? "absent" : "under " + w.parentId() + " "
            + w.attributes()) + ", read " + (g == null ? "absent" : "under " + g.parentId()
            + " " + g.attributes()));
      }
    }
    if (out.isEmpty() && !want.equals(got)) {
      List<dev.arbor.core.Node> w = want.entries();
      List<dev.arbor.core.Node> g = got.entries();
      for (int i = 0; i < Math.min(w.size(), g.size()); i++) {
        if (!w.get(i).equals(g.get(i))) {
          out.add("(same parents and data; in preorder, entry " + i + " is " + w.get(i)
              + " " + classes(w.get(i)) + ", read " + g.get(i) + " " + classes(g.get(i)) + ")");
          break;
        }
      }
    }
    return out;
  }

  /**
   * The most states a check explores before it gives up ({@code
   * -Darbor.linearizability.maxExplored=N}; each holds a tree, so a stress run of many writers
   * may want fewer than the default 2 000 000).
   */
  private static final long MAX_EXPLORED = Long.getLong("arbor.linearizability.maxExplored",
      2_000_000);

  /**
   * The search, on a thread of its own with a stack of {@value #SEARCH_STACK_BYTES} bytes: it
   * recurses once a call placed, and a history of several thousand calls (a reader reading every
   * 20 ms beside writers that stalled for minutes) overflowed the default stack of the test's
   * thread (stop 60: a {@code StackOverflowError}, nothing decided).
   */
  private boolean searchWithRoom(Tree initial) {
    boolean[] found = new boolean[1];
    Throwable[] failed = new Throwable[1];
    Thread t = new Thread(null, () -> {
      try {
        found[0] = search(new BitSet(), initial);
      } catch (Throwable e) {
        failed[0] = e;
      }
    }, "linearizability-search", SEARCH_STACK_BYTES);
    t.start();
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while searching", e);
    }
    if (failed[0] instanceof RuntimeException r) {
      throw r;
    }
    if (failed[0] instanceof Error e) {
      throw e;
    }
    return found[0];
  }

  private static final long SEARCH_STACK_BYTES = 1L << 30;

  private boolean search(BitSet done, Tree state) {
    State s = new State(state);
    boolean found = search(done, s);
    s.loaded = null;
    return found;
  }

  /**
   * A state of the search: the tree, its hash computed once (it is a key of {@link #seen} at
   * every step, and reads pass it on unchanged), and the reference loaded with it, made once
   * for the reads replayed on it.
   */
  private static final class State {
    final Tree tree;
    private final int hash;
    private @Nullable InMemoryTreeStore loaded;

    State(Tree tree) {
      this.tree = tree;
      this.hash = tree.hashCode();
    }

    /** A reference holding this state, for a read (which leaves it as it is). */
    InMemoryTreeStore forReads() {
      if (loaded == null) {
        loaded = new InMemoryTreeStore();
        loaded.load(tree);
      }
      return loaded;
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof State other && hash == other.hash && tree.equals(other.tree);
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }

  private boolean search(BitSet done, State s) {
    Tree state = s.tree;
    explored++;
    if (explored > MAX_EXPLORED) {
      throw new IllegalStateException("history too large to check");
    }
    boolean allRequired = true;
    long horizon = Long.MAX_VALUE;
    for (int i = 0; i < calls.size(); i++) {
      if (!done.get(i)) {
        Call c = calls.get(i);
        if (c.required()) {
          allRequired = false;
        }
        horizon = Math.min(horizon, c.effectiveEnd());
      }
    }
    if (allRequired && state.equals(stored)) {
      return true;
    }
    if (!seen.add(List.of(done.clone(), s))) {
      return false;
    }
    // A call that leaves the tree as it was wherever it is placed (a read; a call that threw a
    // domain exception, refused all-or-nothing) goes next if it can and its outcome is explained
    // here: an order from here exists if and only if one with it next does. (Take such an order
    // and move the call to the front: it changes no state, and no call still to be placed ended
    // before it started, since it starts before every pending call's end.) Without this, the
    // reads of a history multiplied the states searched by the ways to interleave them.
    for (int i = 0; i < calls.size(); i++) {
      Call c = calls.get(i);
      if (!done.get(i) && c.start <= horizon && neverChanges(c) && explained(c, s) != null) {
        done.set(i);
        boolean found = search(done, s);
        done.clear(i);
        return found;
      }
    }
    // (every call that never changes the tree and can go next is not explained here)
    for (int i = 0; i < calls.size(); i++) {
      Call c = calls.get(i);
      if (done.get(i) || c.start > horizon || neverChanges(c)) {
        continue;
      }
      InMemoryTreeStore reference = explained(c, s);
      if (reference == null) {
        continue;
      }
      done.set(i);
      State next = new State(reference.snapshot());
      boolean found = search(done, next);
      next.loaded = null; // seen keeps the state: not the reference that read it
      if (found) {
        return true;
      }
      done.clear(i);
    }
    return false;
  }

  /**
   * {@code c} replayed on the state {@code s}: the reference it ran on if that explains its
   * outcome, else null. A read runs on the reference that holds the state, a change on a copy.
   */
  private @Nullable InMemoryTreeStore explained(Call c, State s) {
    InMemoryTreeStore reference;
    if (c.reads) {
      reference = s.forReads();
    } else {
      reference = new InMemoryTreeStore();
      reference.load(s.tree);
    }
    Object result = null;
    Throwable thrown = null;
    try {
      result = c.op.apply(reference);
    } catch (RuntimeException e) {
      thrown = e;
    }
    return explains(c, result, thrown) ? reference : null;
  }

  /**
   * Whether {@code c} leaves the tree as it found it wherever it is placed: a read, or a call
   * whose outcome was a domain exception (explained only by a replay that threw it too, and the
   * reference refuses all-or-nothing).
   */
  private static boolean neverChanges(Call c) {
    return c.reads || c.thrown != null && c.interrupted() == null;
  }

  private static boolean explains(Call c, @Nullable Object result, @Nullable Throwable thrown) {
    if (c.interrupted() != null) {
      return thrown == null; // an applied change succeeded on the reference
    }
    if (c.thrown != null || thrown != null) {
      return c.thrown != null && thrown != null && type(c.thrown) == thrown.getClass();
    }
    return Objects.equals(c.result, result);
  }

  /**
   * Makes the machine busy: {@code threads} spinning on {@code pool} while {@code busy}, paused
   * while the machine is busy without them ({@link #busyWithoutSpinners}: everything but the
   * spinners, this JVM's other test classes and other processes included, keeps all but half a
   * core busy, as the suite's other classes do), so that they add load to an idle machine and do
   * not merely take CPU from a loaded one. {@code -Darbor.linearizability.spinners=N} spins N
   * threads without pause instead, to measure what they cost.
   */
  static void spin(java.util.concurrent.ExecutorService pool,
      java.util.concurrent.atomic.AtomicBoolean busy, int threads) {
    Integer fixed = Integer.getInteger("arbor.linearizability.spinners");
    int spinners = fixed != null ? fixed : threads;
    for (int s = 0; s < spinners; s++) {
      pool.submit(() -> {
        long id = Thread.currentThread().getId();
        SPINNERS.add(id);
        try {
          long x = 0;
          while (busy.get()) {
            if (fixed == null && busyWithoutSpinners()) {
              Thread.sleep(SPIN_SLICE_MILLIS);
              continue;
            }
            long until = System.nanoTime() + SPIN_SLICE_MILLIS * 1_000_000L;
            while (System.nanoTime() < until) {
              x += System.nanoTime() % 7;
            }
          }
          return x;
        } finally {
          SPINNERS.remove(id);
        }
      });
    }
  }

  /** How long a spinner spins, or pauses, before it looks at the machine's load again. */
  private static final long SPIN_SLICE_MILLIS = 50;
  private static final java.lang.management.OperatingSystemMXBean OS =
      java.lang.management.ManagementFactory.getOperatingSystemMXBean();
  private static final java.lang.management.ThreadMXBean THREADS =
      java.lang.management.ManagementFactory.getThreadMXBean();
  /** The ids of the threads spinning now. */
  private static final java.util.Set<Long> SPINNERS =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
  private static long loadSampled;
  private static long spinnersCpu;
  private static boolean busyWithout;

  /**
   * Whether the machine, the spinners' own CPU left out, kept all but half a core busy since the
   * last look (looked at every 200 ms at most; false where the JVM cannot tell). Everything else
   * counts: the test's writers (threads or processes) and the server, the classes that share
   * this JVM in the suite (six run side by side), other processes. Before, only the CPU of other
   * processes paused the spinners; in the suite's one JVM they then spun beside five other classes
   * and took 32 s of its CPU and 14 s of its time (tree-mongo's suite with and without them).
   */
  static synchronized boolean busyWithoutSpinners() {
    long now = System.nanoTime();
    if (loadSampled != 0 && now - loadSampled < 200_000_000L
        || !(OS instanceof com.sun.management.OperatingSystemMXBean os)
        || !THREADS.isThreadCpuTimeSupported()) {
      return busyWithout;
    }
    long spun = 0;
    for (long id : SPINNERS) {
      spun += Math.max(0, THREADS.getThreadCpuTime(id));
    }
    double cores = os.getAvailableProcessors();
    double machine = os.getCpuLoad();
    double spinning = loadSampled == 0 ? 0
        : Math.max(0, spun - spinnersCpu) / (double) (now - loadSampled);
    loadSampled = now;
    spinnersCpu = spun;
    busyWithout = machine >= 0 && machine * cores - spinning >= cores - 0.5;
    return busyWithout;
  }

  private static Class<?> type(Throwable t) {
    return t instanceof Remote r ? r.type : t.getClass();
  }

  /** An exception another process threw, standing for it by its class. */
  static final class Remote extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final Class<?> type;

    Remote(Class<?> type) {
      super(type.getName(), null, false, false);
      this.type = type;
    }
  }
}
