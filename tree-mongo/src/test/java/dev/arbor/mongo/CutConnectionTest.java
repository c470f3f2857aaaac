package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.connection.ClusterType;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Deletion;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Cuts the connection of a store under every structural change at every write command it sends,
 * before the command reaches the server and after the server ran it (its reply lost), and holds
 * what the call then says to docs/guarantees.md, "What a call's outcome means": a call that
 * returns made its change; a {@link ChangeInterruptedException} says truly what became of it
 * ({@code NOT_APPLIED}: the tree before; {@code COMMITTED}: the tree after, once the next access
 * completes it; {@code UNKNOWN}: either); nothing else is thrown for a valid call — no domain
 * error, no raw driver exception, no {@link LockLostException} where nobody else holds the lock.
 * Whatever the call says, the stored tree is then the tree before or the tree after (never a mix),
 * {@code check()} finds nothing, and the next writer gets the tree within a few leases.
 *
 * <p>The matrix: every pattern × every change (insert, move of a subtree, delete of a subtree,
 * delete lifting the children, update of attributes, load, graft) × a store that claims
 * optimistically, one whose view was forgotten (so that it takes the lock first) and one that has
 * not yet probed the server ({@link View}) × {@code retryWrites} on and off × a cut before and
 * after × the k-th write command for every k up to the number an uncut run sends (counted through
 * the same proxy; a lease renewal that a slow run sends is counted too, so a cut may fall on it or
 * never fire, which the summary counts). The cuts are made by a {@link CuttingProxy} between the
 * store's own client and the server; the tree is set up and read back through the test server's
 * direct client. (On a standalone server, such as the embedded one, the driver never retries a
 * write, whatever {@code retryWrites} says, and sends the same commands either way: retryable
 * writes need a replica set or a sharded cluster, which {@code -Darbor.mongo.uri} can name. There
 * the run with {@code retryWrites} on would repeat every point of the run with it off, so it is
 * made on a replica set or a sharded cluster only.)
 *
 * <p>Every violation is collected; the test fails at the end with a summary (counts per pattern,
 * change and cut, per kind of violation, and the first violations). The default run takes the
 * optimistic store for every change, the locked and cold ones for the insert only, and the lane
 * one for the move (about 400 points on
 * the embedded server, 710 on a replica set); {@code -Darbor.cuts.full=true} takes them for every
 * change too (about 954 and 1908 points). {@code -Darbor.cuts.report=FILE} writes every violation
 * to FILE. {@code -Darbor.cuts.stall=true} also stalls each point ({@link CuttingProxy.Cut#STALL}:
 * the reply withheld on a connection left open, which the client's 3 s socket timeout ends).
 *
 * <p>Each pattern has a proxy of its own (its points one after another, as the proxy arms one cut
 * at a time), so that {@code -Darbor.cuts.threads=N} can run N patterns side by side: much of a
 * point is waiting, on the cut connection's answer or on an orphaned lock's lease, which is
 * judged by the server's clock. The default is one: side by side on a loaded machine, commands
 * outlast the stores' time limits.
 */
class CutConnectionTest {
  private static final String FIXTURE = "r1(a(b c) d) r2(e(f))";
  private static final long LEASE = 500;
  private static final long WAIT = 5_000;
  /** How long the next writer may take to get the tree after a cut. */
  private static final long USABLE_WITHIN = 4 * LEASE;
  private static final int FIRST_SHOWN = 30;
  /**
   * The changes the default run makes with a {@link View#LOCKED} and a {@link View#COLD} store
   * too (loads and grafts take the lock whatever the store saw).
   */
  private static final List<String> DEFAULT_OTHER_VIEWS = List.of("insert");

  /** The changes the default run makes with a {@link View#LANE} store too. */
  private static final List<String> DEFAULT_LANE_CHANGES = List.of("move");

  /** A change made through a store: {@code fromEmpty} ones start from an empty tree. */
  record Change(String name, boolean fromEmpty, Consumer<TreeStore> run) {
    Tree before() {
      return fromEmpty ? Tree.empty() : Tree.parse(FIXTURE);
    }

    Tree after() {
      InMemoryTreeStore reference = new InMemoryTreeStore();
      Tree before = before();
      if (before.size() > 0) {
        reference.load(before);
      }
      run.accept(reference);
      return reference.snapshot();
    }

    @Override
    public String toString() {
      return name;
    }
  }

  static final List<Change> CHANGES = List.of(
      new Change("insert", false, s -> s.insert("n", Position.firstChildOf("a"))),
      new Change("move", false, s -> s.move("a", Position.lastChildOf("e"))),
      new Change("delete subtree", false, s -> s.delete("a", Deletion.SUBTREE)),
      new Change("delete lifting", false, s -> s.delete("a", Deletion.LIFT_CHILDREN)),
      new Change("update", false, s -> s.update("b", Map.of("x", 1))),
      new Change("load", true, s -> s.load(Tree.parse(FIXTURE))),
      new Change("graft", false, s -> s.graft("d", Tree.parse("x(y) z"))));

  /**
   * The store under test before the change. Each has read the tree once; an {@code OPTIMISTIC}
   * and a {@code LOCKED} one have also made their probes of the server (pipeline updates, ordered
   * bulk writes), which a store makes on its first change, so that the cuts fall on the change
   * itself. A {@code LOCKED} store has forgotten the version it saw, so that its change takes the
   * lock first instead of claiming it (its lanes are off: with them on, a store that saw no
   * version reads the lock document and claims); a {@code COLD} one probes during the change, and
   * its cuts fall on the probes' writes too. A {@code LANE} store runs a change of a subtree in a
   * lane ({@link dev.arbor.mongo.internal.protocol.LaneProtocol}: its marks, gate, journal, steps
   * and release are cut; nested sets take the tree's lock), as a store does once it met other
   * writers.
   */
  enum View { OPTIMISTIC, LOCKED, COLD, LANE }

  /** One cut point. */
  record Point(TreePattern pattern, Change change, View view, boolean retryWrites,
      CuttingProxy.Cut cut, int k, int of) {
    @Override
    public String toString() {
      return pattern + " " + change + " (" + view.name().toLowerCase() + ", retryWrites "
          + retryWrites + "), cut " + cut.name().toLowerCase() + " write " + k + " of " + of;
    }
  }

  /** A violation of the guarantees at one point. */
  record Violation(Point at, String kind, String exception) {}

  /** The proxy of each pattern: the patterns' points run side by side. */
  private static final Map<TreePattern, CuttingProxy> PROXIES =
      new java.util.EnumMap<>(TreePattern.class);
  private static ExecutorService calls;
  private final List<Violation> violations = new ArrayList<>();
  /** Per "pattern / change / cut": {points, points with a violation}. */
  private final Map<String, int[]> tally = new TreeMap<>();
  private final Map<String, Integer> byKind = new TreeMap<>();
  /** Per "view / retryWrites / cut": {points, points with a violation}. */
  private final Map<String, int[]> byRun = new TreeMap<>();
  private final Map<String, Integer> outcomes = new TreeMap<>();
  private int unfired;
  /** Points by how long they took (setup, change and checks): under 0.1 s, 0.5 s, 1 s, more. */
  private final int[] durations = new int[4];

  @BeforeAll
  static void startProxy() throws Exception {
    for (TreePattern pattern : TreePattern.values()) {
      PROXIES.put(pattern, new CuttingProxy(MongoTestServer.get().uri()));
    }
    calls = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "cut-connection-call");
      t.setDaemon(true);
      return t;
    });
  }

  @AfterAll
  static void stopProxy() {
    calls.shutdownNow();
    PROXIES.values().forEach(CuttingProxy::close);
  }

  /** A client of the store under test, through the proxy, with short timeouts. */
  private static MongoClient throughProxy(CuttingProxy proxy, boolean retryWrites) {
    MongoClientSettings base = MongoTestServer.settings("mongodb://127.0.0.1:" + proxy.port());
    return MongoClients.create(MongoClientSettings.builder(base)
        .retryWrites(retryWrites)
        .applyToClusterSettings(b -> b.serverSelectionTimeout(3, TimeUnit.SECONDS))
        .applyToSocketSettings(b -> b.connectTimeout(2, TimeUnit.SECONDS)
            .readTimeout(3, TimeUnit.SECONDS))
        .applyToServerSettings(b -> b.minHeartbeatFrequency(10, TimeUnit.MILLISECONDS))
        .build());
  }

  /** A store over {@code c} as another process would open it, on the direct client. */
  private static MongoTreeStore direct(TreePattern pattern, MongoCollection<Document> c) {
    return (MongoTreeStore) pattern.open(c,
        ServerCapabilities.probing(c).lease(LEASE, USABLE_WITHIN));
  }

  /** A store that sets the tree up, with the default lease (it is not under test). */
  private static MongoTreeStore setUp(TreePattern pattern, MongoCollection<Document> c) {
    return (MongoTreeStore) pattern.open(c);
  }

  @Test
  void everyCutConnectionLeavesTheTreeBeforeOrAfterAndSaysWhich() throws Exception {
    boolean full = Boolean.getBoolean("arbor.cuts.full");
    long start = System.nanoTime();
    int points = 0;
    boolean[] retryWritesRuns = serverRetriesWrites() ? new boolean[] {false, true}
        : new boolean[] {false};
    // One pattern at a time by default: side by side, on a machine loaded by others, commands
    // slowed past the stores' time limits (1 s and 2.5 s per command here), which the run
    // reports as violations (two at a time failed so at load 40, five at load 50).
    ExecutorService patterns = Executors.newFixedThreadPool(Integer.getInteger(
        "arbor.cuts.threads", 1));
    List<Future<Integer>> runs = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      runs.add(patterns.submit(() -> cutEverywhere(pattern, full, retryWritesRuns)));
    }
    patterns.shutdown();
    for (Future<Integer> run : runs) {
      try {
        points += run.get();
      } catch (ExecutionException e) {
        throw new AssertionError("a pattern's run failed", e.getCause());
      }
    }
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
    String summary;
    synchronized (this) {
      summary = summary(points, seconds);
    }
    System.out.println(summary);
    String report = System.getProperty("arbor.cuts.report");
    if (report != null) {
      java.nio.file.Files.write(java.nio.file.Path.of(report), violations.stream()
          .map(v -> v.at() + ": " + v.kind() + " — " + v.exception()).toList());
    }
    if (!violations.isEmpty()) {
      fail(summary);
    }
  }

  /** Every point of one pattern, through its own proxy; the number of points. */
  private int cutEverywhere(TreePattern pattern, boolean full, boolean[] retryWritesRuns)
      throws InterruptedException {
    CuttingProxy proxy = PROXIES.get(pattern);
    int points = 0;
    // stalls (each write's reply withheld on a connection left open, until the client's socket
    // timeout) take a few seconds a point: on request only
    List<CuttingProxy.Cut> cuts = Boolean.getBoolean("arbor.cuts.stall")
        ? List.of(CuttingProxy.Cut.values())
        : List.of(CuttingProxy.Cut.BEFORE, CuttingProxy.Cut.AFTER);
    {
      for (Change change : CHANGES) {
        for (View view : View.values()) {
          if (!full && view != View.OPTIMISTIC && !(view == View.LANE
              ? DEFAULT_LANE_CHANGES : DEFAULT_OTHER_VIEWS).contains(change.name())) {
            continue;
          }
          // The commands are the same either way (retryWrites adds a transaction number only).
          int total;
          try {
            total = countWrites(proxy, pattern, change, view, false);
          } catch (RuntimeException | AssertionError e) {
            Point uncut = new Point(pattern, change, view, false, CuttingProxy.Cut.BEFORE, 0, 0);
            record(uncut, List.of("the uncut run fails"), e.getClass().getSimpleName() + ": "
                + e.getMessage());
            continue;
          }
          for (boolean retryWrites : retryWritesRuns) {
            for (CuttingProxy.Cut cut : cuts) {
              for (int k = 1; k <= total; k++) {
                cutAt(proxy, new Point(pattern, change, view, retryWrites, cut, k, total));
                points++;
              }
            }
          }
        }
      }
    }
    return points;
  }

  /**
   * Whether the driver may retry a write on this server: on a replica set or a sharded cluster.
   * On a standalone server (the embedded one among them) it never does, and sends the very same
   * commands with {@code retryWrites} on or off, so a run with it on would repeat every point of
   * the run with it off.
   */
  private static boolean serverRetriesWrites() {
    MongoClient client = MongoTestServer.get().client();
    client.getDatabase("admin").runCommand(new Document("ping", 1)); // the cluster is known
    return client.getClusterDescription().getType() != ClusterType.STANDALONE;
  }

  /** The write commands an uncut run of the change sends through the proxy. */
  private static int countWrites(CuttingProxy proxy, TreePattern pattern, Change change,
      View view, boolean retryWrites) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    if (!change.fromEmpty()) {
      setUp(pattern, c).load(change.before());
    }
    try (MongoClient client = throughProxy(proxy, retryWrites)) {
      MongoTreeStore store = open(pattern, client, c, view);
      proxy.count();
      change.run().accept(store);
      int total = proxy.counted();
      Tree now = direct(pattern, c).snapshot();
      if (!now.equals(change.after()) || total == 0) {
        throw new AssertionError(pattern + " " + change + ": the uncut run sent " + total
            + " writes and left " + now);
      }
      return total;
    }
  }

  /** The store under test, through {@code client}, having read the tree once. */
  private static MongoTreeStore open(TreePattern pattern, MongoClient client,
      MongoCollection<Document> direct, View view) {
    MongoCollection<Document> c = client.getDatabase(direct.getNamespace().getDatabaseName())
        .getCollection(direct.getNamespace().getCollectionName());
    MongoTreeStore store = (MongoTreeStore) pattern.open(c,
        ServerCapabilities.probing(c).lease(LEASE, WAIT).subtreeLocks(view != View.LOCKED)
            .optimisticChanges(view != View.LANE));
    store.size(); // sees the tree quiet: the next change claims optimistically
    if (view != View.COLD) {
      store.capabilities.pipelineUpdates();
      store.lock.ordered();
    }
    if (view == View.LOCKED) {
      store.forget(); // the next change takes the lock first
    }
    return store;
  }

  private void cutAt(CuttingProxy proxy, Point at) throws InterruptedException {
    long started = System.nanoTime();
    try {
      cutAtTimed(proxy, at);
    } finally {
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      synchronized (this) {
        durations[ms < 100 ? 0 : ms < 500 ? 1 : ms < 1000 ? 2 : 3]++;
      }
    }
  }

  private void cutAtTimed(CuttingProxy proxy, Point at) throws InterruptedException {
    Tree before = at.change().before();
    Tree after = at.change().after();
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    if (!at.change().fromEmpty()) {
      setUp(at.pattern(), c).load(before);
    }
    List<String> found = new ArrayList<>();
    try (MongoClient client = throughProxy(proxy, at.retryWrites())) {
      MongoTreeStore store = open(at.pattern(), client, c, at.view());
      proxy.arm(at.cut(), at.k());
      Throwable thrown = call(store, at.change());
      if (!proxy.fired()) {
        synchronized (this) {
          unfired++;
        }
      }
      proxy.disarm();
      List<String> sent = proxy.commands();
      String exception = (sent.size() >= at.k() ? "[cut " + sent.get(at.k() - 1) + "] " : "")
          + (thrown == null ? "returned" : thrown.getClass().getSimpleName() + ": "
          + thrown.getMessage());
      String outcome = thrown == null ? "returned" : thrown instanceof ChangeInterruptedException ci
          ? thrown.getClass().getSimpleName() + " " + ci.outcome()
          : thrown.getClass().getSimpleName();
      synchronized (this) {
        outcomes.merge(outcome, 1, Integer::sum);
      }

      // Who holds the lock now, before anyone else touches the tree: nobody, or the store itself.
      Document lock = c.find(Filters.eq("_id", TreeLock.LOCK_ID)).first();
      Object owner = lock == null ? null : lock.get(TreeLock.STATE, Document.class).get("owner");

      // What the call said, and what the next user of the tree (another process, on the direct
      // client) finds.
      MongoTreeStore next = direct(at.pattern(), c);
      Tree now;
      try {
        now = next.snapshot();
      } catch (RuntimeException e) {
        now = null;
        found.add("tree unreadable afterwards (" + e.getClass().getSimpleName() + ": "
            + e.getMessage() + ")");
      }
      if (thrown instanceof LockLostException) {
        found.add("LockLostException though nobody else holds the lock (its owner after the call: "
            + owner + ")");
      } else if (thrown instanceof ChangeInterruptedException) {
        // judged by the tree below
      } else if (thrown instanceof TreeException) {
        found.add("domain exception for a valid call");
      } else if (thrown instanceof TimeoutException) {
        found.add("call still running after a minute");
      } else if (thrown != null) {
        found.add("exception docs/guarantees.md does not allow");
      }
      if (now != null) {
        boolean isBefore = now.equals(before);
        boolean isAfter = now.equals(after);
        if (!isBefore && !isAfter) {
          found.add("tree neither before nor after");
        } else if (thrown == null && !isAfter) {
          found.add("returned, but the change is not in the tree");
        } else if (thrown instanceof ChangeInterruptedException ci) {
          switch (ci.outcome()) {
            case NOT_APPLIED -> {
              if (!isBefore) {
                found.add("NOT_APPLIED, but the change is in the tree");
              }
            }
            case COMMITTED -> {
              if (!isAfter) {
                found.add("COMMITTED, but the change is not in the tree");
              }
            }
            default -> { }
          }
        }
        try {
          List<Problem> problems = next.check();
          if (!problems.isEmpty()) {
            found.add("check() finds problems: " + problems);
          }
        } catch (RuntimeException e) {
          found.add("check() fails (" + e.getClass().getSimpleName() + ")");
        }
      }
      // The next writer gets the tree (an orphaned lock is taken over, not waited on forever).
      long t0 = System.nanoTime();
      try {
        next.insert("zz", Position.lastRoot());
      } catch (RuntimeException e) {
        found.add("tree unusable: the next insert fails (" + e.getClass().getSimpleName() + ": "
            + e.getMessage() + ")");
      }
      long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      if (took > USABLE_WITHIN + LEASE) {
        found.add("tree unusable: the next insert took " + took + " ms");
      }
      record(at, found, exception);
    }
  }

  /** Runs the change; what it threw, or null. */
  private static Throwable call(MongoTreeStore store, Change change) throws InterruptedException {
    Future<?> f = calls.submit(() -> change.run().accept(store));
    try {
      f.get(1, TimeUnit.MINUTES);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (TimeoutException e) {
      f.cancel(true);
      return e;
    }
  }

  private synchronized void record(Point at, List<String> found, String exception) {
    int[] t = tally.computeIfAbsent(at.pattern() + " / " + at.change() + " / " + at.cut(),
        x -> new int[2]);
    int[] r = byRun.computeIfAbsent(at.view() + " / retryWrites " + at.retryWrites() + " / "
        + at.cut(), x -> new int[2]);
    t[0]++;
    r[0]++;
    if (!found.isEmpty()) {
      t[1]++;
      r[1]++;
    }
    for (String kind : found) {
      String key = kind.replaceAll(" \\(.*", "").replaceAll(": \\[.*", "");
      byKind.merge(key, 1, Integer::sum);
      violations.add(new Violation(at, kind, exception));
    }
  }

  private String summary(int points, long seconds) {
    StringBuilder s = new StringBuilder();
    long violating = tally.values().stream().filter(t -> t[1] > 0).mapToInt(t -> t[1]).sum();
    s.append(String.format("%d cut points in %d s (%d cuts never fired: the change sent fewer "
        + "writes); %d points with violations, %d violations%n", points, seconds, unfired,
        violating, violations.size()));
    s.append("Outcomes: ").append(outcomes).append('\n');
    s.append(String.format("Points taking <0.1 s: %d, <0.5 s: %d, <1 s: %d, more: %d%n",
        durations[0], durations[1], durations[2], durations[3]));
    s.append("Violations by kind:\n");
    byKind.forEach((k, v) -> s.append(String.format("  %5d  %s%n", v, k)));
    s.append(String.format("%-52s %7s %9s%n", "pattern / change / cut", "points", "violating"));
    tally.forEach((k, t) -> s.append(String.format("%-52s %7d %9d%n", k, t[0], t[1])));
    s.append(String.format("%-52s %7s %9s%n", "view / retryWrites / cut", "points", "violating"));
    byRun.forEach((k, t) -> s.append(String.format("%-52s %7d %9d%n", k, t[0], t[1])));
    s.append("First violations:\n");
    violations.stream().limit(FIRST_SHOWN).forEach(v -> s.append("  ").append(v.at())
        .append(": ").append(v.kind()).append(" — ").append(v.exception()).append('\n'));
    return s.toString();
  }
}
