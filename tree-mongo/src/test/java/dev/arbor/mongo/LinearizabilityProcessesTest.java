package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link LinearizabilityTest} with its writers in processes of their own
 * ({@link LinearizabilityProcess}), as the issue that found the lost nested-set moves ran them:
 * three writer JVMs on one 2 000-node tree, leases of 100 ms (shorter than a change), each
 * writer's first change a move planned from the same quiet version, the first moves 60 to 220
 * ms apart, while a reader in this JVM reads snapshots and two threads keep the machine busy.
 * The calls are timed on the wall clock, which the processes share; the history must be
 * linearizable, and the stored tree sound. {@code -Darbor.linearizability.processRounds=N} runs
 * more rounds; {@code -Darbor.linearizability.processFlaky=P} puts each writer behind a {@link
 * FlakyNetwork} losing, losing the answer of, and delaying about one command in {@code 1/P} each;
 * {@code -Darbor.linearizability.everyKind=true} has the writers make every kind of change
 * (node data, deletes that lift children or refuse a node with children, grafts), as {@link
 * LinearizabilityTest#everyKindOfChangeWithShortLeases} does in one process; {@code
 * -Darbor.linearizability.patterns=PARENT_REFERENCES,...} runs only those patterns; {@code
 * -Darbor.linearizability.processWriters=N} and {@code -Darbor.linearizability.processChanges=N}
 * set the writers and each one's changes (3 and 5); {@code -Darbor.linearizability.seed=N}
 * draws other trees and changes than the default's (0), for stress runs; {@code
 * -Darbor.linearizability.processSubtrees=true} gives each writer but the last a subtree of its
 * own (of 500 nodes, under one root) and has the last one change nodes of one subtree with
 * anchors in another (its moves cross the others' subtrees), as {@link
 * LinearizabilityTest#writersInDisjointAndOverlappingSubtreesWithShortLeases} does in one
 * process (nested sets, which keep the tree's lock, run the random tree); {@code
 * -Darbor.linearizability.processPauses=P} pauses each writer process whole ({@code SIGSTOP},
 * its lease renewals with it, the commands it sent still arriving) about P times a second at
 * random moments, each time for 1 to 10 leases, then lets it go on ({@code SIGCONT}), as a
 * garbage collection or a stopped machine would, and {@code
 * -Darbor.linearizability.processKills=true} kills one writer ({@code SIGKILL}) a random moment
 * into a random change of its: that call is open, its outcome unknown, and the writer makes no
 * more (both drawn from the seed; none by default).
 */
class LinearizabilityProcessesTest {
  static final int WRITERS = 3;
  static final int CHANGES = 5;

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void writerProcessesWithShortLeasesAreLinearizable(TreePattern pattern) throws Exception {
    assumeSelected(pattern);
    int rounds = Integer.getInteger("arbor.linearizability.processRounds", 1);
    for (int round = 0; round < rounds; round++) {
      runRound(pattern, round, Long.getLong("arbor.linearizability.lease", 100),
          Boolean.getBoolean("arbor.linearizability.processSubtrees")
              && pattern != TreePattern.NESTED_SETS);
    }
  }

  /**
   * Issue 28's crossing moves in processes: two writer processes each change a subtree of its
   * own (in lanes), a third moves nodes of each subtree under nodes of the other and inserts and
   * deletes in both, with 100 ms leases (the options above apply; nested sets keep the tree's
   * lock and run the test above).
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void writerProcessesInSubtreesWithCrossingMovesAreLinearizable(TreePattern pattern)
      throws Exception {
    assumeSelected(pattern);
    runRound(pattern, 0, Long.getLong("arbor.linearizability.lease", 100), true);
  }

  /** Skips {@code pattern} unless {@code -Darbor.linearizability.patterns} is unset or names it. */
  private static void assumeSelected(TreePattern pattern) {
    String only = System.getProperty("arbor.linearizability.patterns");
    org.junit.jupiter.api.Assumptions.assumeTrue(only == null
        || List.of(only.split(",")).contains(pattern.name()), "not among " + only);
  }

  /**
   * One round; {@code subtrees}: writers 0 … W-2 each in a subtree of its own, the last writer
   * crossing them.
   */
  private void runRound(TreePattern pattern, int round, long lease, boolean subtrees)
      throws Exception {
    int writerCount = Integer.getInteger("arbor.linearizability.processWriters", WRITERS);
    int changeCount = Integer.getInteger("arbor.linearizability.processChanges", CHANGES);
    int per = LinearizabilityTest.NODES / 4;
    long seed = Long.getLong("arbor.linearizability.seed", 0);
    Tree initial = subtrees ? subtreesTree(writerCount - 1, per, round)
        : LinearizabilityTest.randomTree(LinearizabilityTest.NODES, 101 + round + seed);
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    String name = direct.getNamespace().getCollectionName();
    String db = direct.getNamespace().getDatabaseName();
    String uri = MongoTestServer.get().uri();
    // with its indexes, as a user's tree has them (unindexed, the embedded server scans the
    // whole tree for each fenced step)
    TreeStore loader = pattern.open(direct);
    loader.ensureIndexes();
    loader.load(initial);
    Random plan = new Random(seed * 7_919L + round * 104_729L + pattern.ordinal());
    boolean everyKind = Boolean.getBoolean("arbor.linearizability.everyKind");
    List<Process> writers = new ArrayList<>();
    List<List<String>> changes = new ArrayList<>();
    AtomicBoolean busy = new AtomicBoolean(true);
    ExecutorService pool = Executors.newCachedThreadPool();
    try (MongoClient readerClient = MongoClients.create(MongoTestServer.settings(uri))) {
      for (int w = 0; w < writerCount; w++) {
        List<String> mine = new ArrayList<>();
        for (int m = 0; m < changeCount; m++) {
          int kind = m == 0 ? 0 : plan.nextInt(100);
          String x = "n" + (1 + plan.nextInt(LinearizabilityTest.NODES - 1));
          String anchor = "n" + plan.nextInt(LinearizabilityTest.NODES);
          if (subtrees) {
            int from = w < writerCount - 1 ? w : plan.nextInt(writerCount - 1);
            int to = w < writerCount - 1 ? w
                : (from + 1 + plan.nextInt(Math.max(1, writerCount - 2))) % (writerCount - 1);
            x = "s" + from + "-" + (1 + plan.nextInt(per - 1));
            anchor = "s" + to + "-" + plan.nextInt(per);
          }
          int p = plan.nextInt(3);
          String id = "p" + w + "-" + m;
          mine.add(!everyKind ? (kind < 60 ? "move|" + x + "|" + anchor + "|" + p
              : kind < 85 ? "insert|" + id + "|" + anchor + "|" + p
              : "delete|" + x)
              : kind < 30 ? "move|" + x + "|" + anchor + "|" + p
              : kind < 42 ? "insertData|" + id + "|" + anchor + "|" + p
              : kind < 56 ? "update|" + x + "|" + id
              : kind < 64 ? "delete|" + x
              : kind < 72 ? "lift|" + x
              : kind < 80 ? "leaf|" + x
              : kind < 90 ? "graft|" + anchor + "|" + id
              : "graftEntries|" + anchor + "|" + id);
        }
        changes.add(mine);
        long delay = w == 0 ? 0 : (60 + plan.nextInt(160)) * w;
        List<String> args = new ArrayList<>(List.of(uri, db, name, pattern.name(),
            String.valueOf(lease), String.valueOf(delay)));
        args.addAll(mine);
        writers.add(java(LinearizabilityProcess.class.getName(), args,
            round * 1_009L + w));
      }
      List<BufferedReader> outs = new ArrayList<>();
      for (Process p : writers) {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
            StandardCharsets.UTF_8));
        String ready = out.readLine();
        if (!"ready".equals(ready)) {
          // a writer that said something else ended or will: what it wrote to its error stream
          boolean ended = p.waitFor(10, TimeUnit.SECONDS);
          String err = ended
              ? new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8) : "";
          p.destroyForcibly().waitFor();
          throw new AssertionError("a writer did not start: " + ready + " " + err);
        }
        outs.add(out);
      }
      Linearizability.spin(pool, busy, 2);
      Linearizability.History history =
          new Linearizability.History(Linearizability.History::wallClock);
      long go = Linearizability.History.wallClock() + 300_000_000L;
      for (Process p : writers) {
        PrintStream in = new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8);
        in.println("go " + go);
      }
      MongoCollection<Document> rc = readerClient.getDatabase(db).getCollection(name);
      TreeStore reader = pattern.open(rc, ServerCapabilities.probing(rc).lease(lease, 60_000));
      AtomicBoolean writing = new AtomicBoolean(true);
      Future<?> reading = pool.submit(() -> {
        Thread.sleep(Math.max(0, (go - Linearizability.History.wallClock()) / 1_000_000));
        while (writing.get()) {
          history.read(writerCount, "snapshot", reader, TreeStore::snapshot);
          Thread.sleep(20);
        }
        return null;
      });
      // each writer's lines, read as they come (a pauser or killer acts on what they said)
      List<List<String>> saidAll = new ArrayList<>();
      List<Future<?>> listening = new ArrayList<>();
      for (int w = 0; w < writerCount; w++) {
        List<String> said = java.util.Collections.synchronizedList(new ArrayList<>());
        saidAll.add(said);
        BufferedReader out = outs.get(w);
        listening.add(pool.submit(() -> {
          for (String line = out.readLine(); line != null; line = out.readLine()) {
            said.add(line);
          }
          return null;
        }));
      }
      double pauses = Double.parseDouble(
          System.getProperty("arbor.linearizability.processPauses", "0"));
      List<String> signals = java.util.Collections.synchronizedList(new ArrayList<>());
      if (pauses > 0) {
        for (int w = 0; w < writerCount; w++) {
          Process p = writers.get(w);
          Random random = new Random(seed * 31L + round * 1_009L + w);
          pool.submit(() -> pauseNowAndThen(p, pauses, lease, random, go, signals));
        }
      }
      int victim = Boolean.getBoolean("arbor.linearizability.processKills")
          ? plan.nextInt(writerCount) : -1;
      Future<?> killing = victim < 0 ? null : pool.submit(killInAChange(writers.get(victim),
          saidAll.get(victim), plan.nextInt(changeCount), plan.nextInt((int) Math.max(50, lease * 3)),
          signals));
      for (int w = 0; w < writerCount; w++) {
        Process p = writers.get(w);
        List<String> said = saidAll.get(w);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "writer " + w + " did not end; it said "
            + said);
        listening.get(w).get(1, TimeUnit.MINUTES);
        if (killing != null && w == victim) {
          killing.get(1, TimeUnit.MINUTES);
        }
        boolean killed = w == victim && signals.stream().anyMatch(x -> x.startsWith("KILL"));
        String begun = null;
        for (String line : said) {
          if (line.startsWith("begin ")) {
            begun = line;
          } else if (line.startsWith("call ")) {
            history.add(call(w, line, history.origin()));
            begun = null;
          }
        }
        if (killed) {
          if (begun != null && !said.contains("done")) {
            // killed in a change: an open call, its outcome unknown
            String[] f = begun.split(" ");
            Linearizability.Call c = new Linearizability.Call(w, f[2].replace('|', ' '),
                LinearizabilityProcess.op(f[2]), Long.parseLong(f[1]) - history.origin());
            c.thrown = new ChangeInterruptedException("killed in " + f[2], Outcome.UNKNOWN, null);
            history.add(c);
          }
          continue;
        }
        assertEquals(0, p.exitValue(), "writer " + w + ": " + said + " "
            + new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        assertEquals(changeCount + 1, said.stream().filter(l -> !l.startsWith("begin "))
            .count(), "writer " + w + " said " + said);
      }
      writing.set(false);
      reading.get(1, TimeUnit.MINUTES);
      if (!signals.isEmpty()) {
        System.out.println(pattern + ", round " + round + ", lease " + lease + " ms, seed " + seed
            + ": " + signals.stream().filter(x -> x.startsWith("STOP")).count() + " pauses"
            + signals.stream().filter(x -> x.startsWith("KILL")).map(x -> ", " + x)
                .reduce("", String::concat) + ", " + history.calls().size() + " calls, "
            + history.calls().stream().filter(c -> c.end == Long.MAX_VALUE).count()
            + " of them open");
      }
      busy.set(false);
      TreeStore after = pattern.open(direct);
      List<?> problems = after.check();
      String verdict;
      try {
        verdict = problems.isEmpty()
            ? Linearizability.check(initial, history.calls(), after.snapshot()) : null;
      } catch (IllegalStateException e) {
        verdict = e.getMessage(); // too large to check: kept for a reader all the same
      }
      if (!problems.isEmpty() || verdict != null) {
        // what the writers were told, for the next one to read: the test ends here
        java.nio.file.Path report = java.nio.file.Path.of("target", "linearizability-failures",
            pattern + "-round" + round + "-" + System.currentTimeMillis() + ".txt");
        java.nio.file.Files.createDirectories(report.getParent());
        StringBuilder b = new StringBuilder(pattern + ", round " + round + ", lease " + lease
            + " ms\nplans: " + changes + "\nwriters said: " + saidAll + "\nsignals: " + signals
            + "\ncalls:\n");
        history.calls().forEach(c -> b.append(c).append('\n'));
        b.append("check():\n");
        problems.forEach(x -> b.append(x).append('\n'));
        b.append("verdict: ").append(verdict).append('\n');
        b.append("documents:\n");
        for (Document d : direct.find()) {
          b.append(d.toJson()).append('\n');
        }
        java.nio.file.Files.writeString(report, b);
        assertEquals(List.of(), problems, pattern + ", round " + round + ": check() (calls in "
            + report.toAbsolutePath() + ")");
        assertNull(verdict, pattern + ", round " + round + " (calls in "
            + report.toAbsolutePath() + ")");
      }
    } finally {
      busy.set(false);
      pool.shutdownNow();
      writers.forEach(Process::destroyForcibly);
    }
  }

  /**
   * Pauses {@code p} as a garbage collection or a stopped machine does, whole (its renewals
   * too), about {@code perSecond} times a second at random moments after {@code go}, each time
   * for 1 to 10 leases ({@code SIGSTOP}, then {@code SIGCONT}), until it ends; each signal is
   * noted in {@code signals} with the wall clock in ms from {@code go}.
   */
  private static Void pauseNowAndThen(Process p, double perSecond, long lease, Random random,
      long go, List<String> signals) throws Exception {
    Thread.sleep(Math.max(0, (go - Linearizability.History.wallClock()) / 1_000_000));
    while (p.isAlive()) {
      Thread.sleep((long) (-Math.log(1 - random.nextDouble()) * 1_000 / perSecond));
      long pause = (1 + random.nextInt(10)) * lease;
      if (!signal(p, "STOP", go, signals)) {
        return null;
      }
      try {
        Thread.sleep(pause);
      } finally {
        signal(p, "CONT", go, signals);
      }
    }
    return null;
  }

  /**
   * Kills {@code p} ({@code SIGKILL}, as a crash does) {@code delay} ms after it began its change
   * number {@code change} (said its {@code begin} line), or does nothing if it ended before.
   */
  private static java.util.concurrent.Callable<Void> killInAChange(Process p, List<String> said,
      int change, int delay, List<String> signals) {
    return () -> {
      while (p.isAlive()
          && said.stream().filter(l -> l.startsWith("begin ")).count() <= change) {
        Thread.sleep(1);
      }
      Thread.sleep(delay);
      // kill(1), not destroyForcibly(), which closes the streams the test still reads
      if (signal(p, "KILL", 0, new ArrayList<>())) {
        p.waitFor();
        signals.add("KILL " + p.pid() + " in change " + change + " after " + delay + " ms");
      }
      return null;
    };
  }

  /** Sends {@code kill -<name>} to {@code p} if it is alive; whether it was. */
  private static boolean signal(Process p, String name, long go, List<String> signals)
      throws Exception {
    if (!p.isAlive()) {
      return false;
    }
    new ProcessBuilder("kill", "-" + name, String.valueOf(p.pid())).start().waitFor();
    signals.add(name + " " + p.pid() + " at "
        + (Linearizability.History.wallClock() - go) / 1_000_000);
    return true;
  }

  /**
   * A root {@code r} with {@code count} subtrees {@code s0-0} … under it, each a random tree of
   * {@code per} nodes {@code s<k>-<i>}.
   */
  private static Tree subtreesTree(int count, int per, int round) {
    Tree.Builder b = Tree.builder();
    b.add("r", null);
    for (int k = 0; k < count; k++) {
      Random random = new Random(31L * (round + 1) + k);
      b.add("s" + k + "-0", "r");
      for (int i = 1; i < per; i++) {
        b.add("s" + k + "-" + i, "s" + k + "-" + random.nextInt(i));
      }
    }
    return b.build();
  }

  /** The call a writer's line reports (see {@link LinearizabilityProcess}). */
  private static Linearizability.Call call(int process, String line, long origin)
      throws ClassNotFoundException {
    String[] f = line.split(" ");
    String spec = f[3];
    Linearizability.Call c = new Linearizability.Call(process, spec.replace('|', ' '),
        LinearizabilityProcess.op(spec), Long.parseLong(f[1]) - origin);
    c.end = Long.parseLong(f[2]) - origin;
    if (f[4].equals("value")) {
      c.result = f[5].equals("null") ? null : Long.valueOf(f[5]);
    } else {
      Class<?> type = Class.forName(f[5]);
      // A ChangeInterruptedException of any kind (LockLostException is one: NOT_APPLIED) is
      // judged by the outcome it told, as in one process; another exception by its class.
      c.thrown = ChangeInterruptedException.class.isAssignableFrom(type)
          ? new ChangeInterruptedException(line, Outcome.valueOf(f[6]), null)
          : new Linearizability.Remote(type);
    }
    return c;
  }

  private static Process java(String main, List<String> args, long seed) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC", "-Xmx256m", "-cp", classpath));
    String flaky = System.getProperty("arbor.linearizability.processFlaky");
    if (flaky != null) {
      // each writer behind a FlakyNetwork of its own, seeded by its round and number
      command.add("-Darbor.flaky=" + flaky);
      command.add("-Darbor.flaky.seed=" + seed);
      for (String k : List.of("arbor.flaky.kinds", "arbor.flaky.lateMillis")) {
        if (System.getProperty(k) != null) {
          command.add("-D" + k + "=" + System.getProperty(k));
        }
      }
    }
    command.add(main);
    command.addAll(args);
    return new ProcessBuilder(command).start();
  }
}
