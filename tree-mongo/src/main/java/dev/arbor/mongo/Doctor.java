package dev.arbor.mongo;

import static dev.arbor.mongo.DoctorComparisons.apply;
import static dev.arbor.mongo.DoctorComparisons.compareReads;
import static dev.arbor.mongo.DoctorComparisons.compareTrees;
import static dev.arbor.mongo.DoctorComparisons.same;
import static dev.arbor.mongo.DoctorScript.fixture;
import static dev.arbor.mongo.DoctorScript.op;
import static java.util.Objects.requireNonNull;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CreateCollectionOptions;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.DoctorScript.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.bson.Document;

/**
 * Checks what Arbor does against a server of the caller's: every operation of the contract in
 * every pattern, compared with {@link InMemoryTreeStore} after each, through every protocol the
 * server offers (the lock and journal, Arbor's own transactions, the caller's session), the
 * server paths the stores use where the server has them ({@code $graphLookup}, pipeline
 * updates, a collection with a locale collation, bounded regexes, a large {@code $in}), a short
 * run of concurrent writers and the recovery of a change interrupted half-way (its holder dead,
 * or its client closed). {@code arbor doctor} prints its {@link Report}; the test suite runs it
 * against its own server.
 *
 * <pre>{@code
 * Doctor.Report report = Doctor.run(settings, "arbor_doctor", System.err::println);
 * report.lines().forEach(System.out::println);
 * if (!report.passed()) { ... }
 * }</pre>
 *
 * <p>Everything happens in one scratch collection, {@code arbor_doctor_<random>} in the given
 * database, created, emptied between the runs and dropped at the end (also after a failure);
 * no other collection is read or written. A capability the server does not offer (transactions
 * on a standalone server, pipeline updates on an old or emulated server) is reported as not
 * offered, never as a failure. A run takes 10 to 20 s on the embedded server.
 */
public final class Doctor {
  /** The number of checks (lines of a report). */
  static final int CHECKS = 6 * 5;
  /** How long the concurrent writers run per pattern. */
  static final Duration CONCURRENT_RUN = Duration.ofMillis(400);
  /** Operations each writer makes at least, however long they take. */
  static final int MIN_OPS = 6;
  /** Writers of the concurrent run, each on a client of its own. */
  static final int WRITERS = 3;
  /** The lease of the store that crashes in the recovery run. */
  static final long CRASH_LEASE_MILLIS = 300;

  private static final org.slf4j.Logger QUIET = org.slf4j.helpers.NOPLogger.NOP_LOGGER;

  /** How a capability ended. */
  public enum Status {
    /** Used, and every comparison passed. */
    PASSED,
    /** Used, and something differed from the reference or failed; the detail says what. */
    FAILED,
    /** The server does not offer it; nothing was run (not a failure). */
    NOT_OFFERED
  }

  /**
   * One line of the report.
   *
   * @param name what was checked, such as {@code "lock and journal, nested sets"}
   * @param status how it ended
   * @param detail what was run, why it failed, or why the server does not offer it; one line
   * @param took how long the check took
   */
  public record Capability(String name, Status status, String detail, Duration took) {
    /** Validates the components. */
    public Capability {
      requireNonNull(name, "name");
      requireNonNull(status, "status");
      requireNonNull(detail, "detail");
      requireNonNull(took, "took");
    }

    /** The line {@code arbor doctor} prints: name, used or not offered, verdict, detail. */
    public String line() {
      String used = status == Status.NOT_OFFERED ? "not offered" : "used";
      String verdict = switch (status) {
        case PASSED -> "passed";
        case FAILED -> "FAILED";
        case NOT_OFFERED -> "-";
      };
      return String.format(Locale.ROOT, "%-42s %-11s %-6s %5.1f s  %s", name, used, verdict,
          took.toMillis() / 1e3, detail);
    }
  }

  /**
   * What a run found.
   *
   * @param version the server's version, from {@code buildInfo}
   * @param topology standalone, replica set (with its name), sharded cluster, or the embedded
   *     mongo-java-server
   * @param collection the scratch collection, {@code database.name}, dropped at the end
   * @param capabilities one line per capability, in the order they ran
   * @param took how long the run took
   */
  public record Report(String version, String topology, String collection,
      List<Capability> capabilities, Duration took) {
    /** Copies the capabilities. */
    public Report {
      capabilities = List.copyOf(capabilities);
    }

    /** Whether everything that was used passed (capabilities not offered do not count). */
    public boolean passed() {
      return capabilities.stream().noneMatch(c -> c.status() == Status.FAILED);
    }

    /** The capabilities that failed. */
    public List<Capability> failures() {
      return capabilities.stream().filter(c -> c.status() == Status.FAILED).toList();
    }

    /** The header line: server version, topology and scratch collection. */
    public String header() {
      return "server: " + (topology.contains("mongo-java-server") ? version
          + " (buildInfo, no gitVersion)" : "MongoDB " + version + " (buildInfo)")
          + "; topology: " + topology + "; scratch collection " + collection + " (dropped)";
    }

    /** The header, one line per capability, and a summary line. */
    public List<String> lines() {
      List<String> out = new ArrayList<>();
      out.add(header());
      for (Capability c : capabilities) {
        out.add(c.line());
      }
      long used = capabilities.stream().filter(c -> c.status() != Status.NOT_OFFERED).count();
      out.add(String.format(Locale.ROOT, "%s: %d used, %d passed, %d FAILED, %d not offered,"
              + " in %.1f s", passed() ? "healthy" : "NOT healthy", used,
          used - failures().size(), failures().size(), capabilities.size() - used,
          took.toMillis() / 1e3));
      return out;
    }
  }

  private final MongoClientSettings settings;
  private final MongoClient client;
  private final MongoDatabase database;
  private final String name;
  private final Consumer<String> progress;
  private final List<Capability> capabilities = new ArrayList<>();
  private String topology = "unknown topology";
  private boolean embedded;
  /** Whether Arbor's transactions run on this server (probed with the first such store). */
  private boolean transactions;
  private String noTransactions = "";
  /** Whether the {@code $graphLookup} check runs whatever the probe says (tests). */
  private boolean assumeGraphLookup;
  /** The checks to run, by name (tests run some). */
  private java.util.function.Predicate<String> checks = name -> true;

  private Doctor(MongoClientSettings settings, MongoClient client, String database,
      Consumer<String> progress) {
    this.settings = settings;
    this.client = client;
    this.database = client.getDatabase(database);
    this.name = "arbor_doctor_" + Long.toHexString(new Random().nextLong() & 0xffffffffffL);
    this.progress = progress;
  }

  /**
   * Runs every check against the server {@code settings} reach, in a scratch collection of
   * {@code database}, and returns what it found. The concurrent run opens clients of its own
   * with these settings, one per writer.
   *
   * @param progress told one line as each check starts (for a long run on a slow server)
   * @throws MongoException if the server cannot be reached or refuses the first commands
   *     (buildInfo, creating and dropping the scratch collection); a check that fails later is
   *     reported in its line instead
   */
  public static Report run(MongoClientSettings settings, String database,
      Consumer<String> progress) {
    return run(settings, database, progress, false, name -> true);
  }

  /**
   * As {@link #run(MongoClientSettings, String, Consumer)}, running only the checks whose names
   * {@code checks} accepts; with {@code assumeGraphLookup}, the {@code $graphLookup} check runs
   * whatever the probe says (tests show that a server whose {@code $graphLookup} is wrong fails
   * it).
   */
  static Report run(MongoClientSettings settings, String database, Consumer<String> progress,
      boolean assumeGraphLookup, java.util.function.Predicate<String> checks) {
    requireNonNull(settings, "settings");
    requireNonNull(database, "database");
    requireNonNull(progress, "progress");
    long start = System.nanoTime();
    try (MongoClient client = MongoClients.create(settings)) {
      Doctor d = new Doctor(settings, client, database, progress);
      d.assumeGraphLookup = assumeGraphLookup;
      d.checks = checks;
      String version = d.identify();
      try {
        d.runAll();
      } finally {
        d.database.getCollection(d.name).drop();
      }
      return new Report(version, d.topology, d.database.getName() + "." + d.name,
          d.capabilities, Duration.ofNanos(System.nanoTime() - start));
    }
  }

  /** The server's version; sets the topology. */
  private String identify() {
    Document build = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));
    Document hello;
    try {
      hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
    } catch (com.mongodb.MongoCommandException e) {
      hello = client.getDatabase("admin").runCommand(new Document("isMaster", 1));
    }
    String version = String.valueOf(build.get("version"));
    if (!build.containsKey("gitVersion")) {
      // mongod always reports the commit it was built from; mongo-java-server does not
      embedded = true;
      topology = "embedded mongo-java-server";
    } else if ("isdbgrid".equals(hello.get("msg"))) {
      topology = "sharded cluster";
    } else if (hello.get("setName") != null) {
      topology = "replica set " + hello.get("setName");
    } else {
      topology = "standalone";
    }
    return version;
  }

  private void runAll() {
    for (TreePattern p : TreePattern.values()) {
      check("lock and journal, " + label(p), () -> script(p, c -> p.open(c), false));
    }
    for (TreePattern p : TreePattern.values()) {
      checkTransactional("transactions, " + label(p), () -> script(p, c -> p.open(client, c),
          false));
    }
    for (TreePattern p : TreePattern.values()) {
      checkTransactional("caller's session, " + label(p), () -> script(p, c -> p.open(client,
          c), true));
    }
    check("$graphLookup, parent and child references", this::graphLookup);
    check("pipeline updates, ancestors and paths", this::pipelineUpdates);
    check("collation (collection default 'en')", this::collation);
    check("bounded regex, materialized paths", this::boundedRegex);
    check("large $in, parent references", this::largeIn);
    for (TreePattern p : TreePattern.values()) {
      check("concurrent writers, " + label(p), () -> concurrent(p));
    }
    for (TreePattern p : TreePattern.values()) {
      check("crash recovery, " + label(p), () -> crashRecovery(p));
    }
  }

  // ------------------------------------------------------------------ bookkeeping

  private interface Check {
    DoctorVerdict run();
  }

  private void check(String what, Check check) {
    if (!checks.test(what)) {
      return;
    }
    progress.accept("checking " + what + " (" + (capabilities.size() + 1) + " of " + CHECKS
        + ")");
    long start = System.nanoTime();
    DoctorVerdict v;
    try {
      v = check.run();
    } catch (RuntimeException e) {
      v = DoctorVerdict.failed(e);
    }
    capabilities.add(new Capability(what, v.status(), v.detail(),
        Duration.ofNanos(System.nanoTime() - start)));
  }

  /** A check that needs Arbor's transactions: not offered where the server has none. */
  private void checkTransactional(String what, Check check) {
    check(what, () -> {
      if (!transactionsOffered()) {
        return DoctorVerdict.notOffered(noTransactions);
      }
      return check.run();
    });
  }

  private boolean transactionsOffered() {
    if (noTransactions.isEmpty() && !transactions) {
      MongoCollection<Document> c = fresh();
      MongoTreeStore probe = (MongoTreeStore) TreePattern.PARENT_REFERENCES.open(client, c);
      transactions = probe.usesTransactions();
      if (!transactions) {
        noTransactions = embedded ? "the embedded server has no sessions or transactions"
            : "no transactions on a " + topology + " (they need a replica set or sharded"
                + " cluster)";
      }
    }
    return transactions;
  }

  private static String label(TreePattern p) {
    return p.name().toLowerCase(Locale.ROOT).replace('_', ' ');
  }

  /** The scratch collection, dropped and empty. */
  private MongoCollection<Document> fresh() {
    MongoCollection<Document> c = database.getCollection(name);
    c.drop();
    return c;
  }

  /** The store a script runs on, for the scratch collection. */
  private interface Opener {
    MongoTree open(MongoCollection<Document> collection);
  }

  /**
   * Loads the fixture, runs every operation of the script on the store and on the reference,
   * comparing outcomes, trees, {@code check()} and the reads of the nodes each names; then the
   * reads of every node, {@code repair()}, and a reload of the whole tree from a stream.
   *
   * @param inCallersSession whether each change runs in a transaction of a session of ours
   */
  private DoctorVerdict script(TreePattern pattern, Opener opener, boolean inCallersSession) {
    MongoCollection<Document> c = fresh();
    MongoTree tree = opener.open(c);
    tree.ensureIndexes();
    InMemoryTreeStore reference = new InMemoryTreeStore();
    Tree fixture = fixture();
    tree.load(fixture);
    reference.load(fixture);
    compareTrees("load", tree, reference);
    MongoTreeStore store = (MongoTreeStore) tree;
    String protocol = inCallersSession ? "the caller's transactions"
        : store.usesTransactions() ? "transactions"
            : "the lock and journal";
    int ops = 0;
    try (ClientSession session = inCallersSession ? client.startSession() : null) {
      MongoTree view = session == null ? tree : tree.withSession(session);
      for (Op op : DoctorScript.script()) {
        Consumer<TreeStore> run = session == null ? op.run() : s -> session.withTransaction(
            () -> {
              op.run().accept(s);
              return null;
            });
        apply(op.what(), run, op.run(), view, reference);
        compareTrees(op.what(), view, reference);
        compareReads(op.what(), view, reference, op.focus());
        ops++;
      }
      if (session != null) {
        // what the caller aborts never happened
        session.startTransaction();
        view.insert("aborted", Position.lastRoot());
        view.move("i", Position.firstRoot());
        session.abortTransaction();
        compareTrees("an aborted transaction", tree, reference);
      }
    }
    compareReads("every node", tree, reference, reference.snapshot().ids());
    List<Problem> left = tree.repair();
    if (!left.isEmpty()) {
      throw new DoctorMismatch("repair() of a sound tree left " + left);
    }
    compareTrees("repair()", tree, reference);
    Tree whole = tree.snapshot();
    for (String root : tree.roots()) {
      tree.delete(root);
    }
    if (tree.size() != 0) {
      throw new DoctorMismatch("deleting every root left " + tree.size() + " nodes");
    }
    tree.load(whole.entries().iterator());
    compareTrees("reload from a stream", tree, reference);
    return DoctorVerdict.passed(ops + " operations through " + protocol
        + ", each compared with InMemoryTreeStore; check, repair, reload");
  }

  // ------------------------------------------------------------------ real-server paths

  private DoctorVerdict graphLookup() {
    MongoCollection<Document> c = fresh();
    Tree tree = deepTree();
    TreePattern.PARENT_REFERENCES.open(c).load(tree);
    if (!assumeGraphLookup && !ServerCapabilities.probing(c).graphLookup()) {
      return DoctorVerdict.notOffered("$graphLookup ignores startWith or is missing: the stores walk"
          + " level by level with $in (checked above)");
    }
    int reads = 0;
    for (TreePattern p : List.of(TreePattern.PARENT_REFERENCES, TreePattern.CHILD_REFERENCES)) {
      c = fresh();
      MongoTreeStore store = (MongoTreeStore) p.open(c, new ServerCapabilities(c,
          ServerCapabilities.Mode.ON, ServerCapabilities.Mode.PROBE));
      store.load(tree);
      InMemoryTreeStore reference = new InMemoryTreeStore();
      reference.load(tree);
      compareReads("load", store, reference, tree.ids());
      reads += tree.size();
      apply("move c30 lastChildOf(s5)", s -> s.move("c30", Position.lastChildOf("s5")), store,
          reference);
      compareReads("a move", store, reference, tree.ids());
      compareTrees("a move", store, reference);
    }
    return DoctorVerdict.passed("ancestors, descendants and subtrees of " + reads
        + " nodes (a 40-deep chain) read with $graphLookup");
  }

  /** A chain 40 deep with a few side branches. */
  private static Tree deepTree() {
    Tree.Builder b = Tree.builder();
    String parent = null;
    for (int i = 0; i < 40; i++) {
      String id = "c" + i;
      b.add(id, parent);
      if (i % 10 == 5) {
        b.add("s" + i, id).add("t" + i, "s" + i);
      }
      parent = id;
    }
    return b.build();
  }

  private DoctorVerdict pipelineUpdates() {
    MongoCollection<Document> c = fresh();
    if (!ServerCapabilities.probing(c).pipelineUpdates()) {
      return DoctorVerdict.notOffered("updates given as pipelines are refused (MongoDB 4.2+): moves"
          + " rewrite each document of the subtree (checked above)");
    }
    int moves = 0;
    for (TreePattern p : List.of(TreePattern.ARRAY_OF_ANCESTORS,
        TreePattern.MATERIALIZED_PATHS)) {
      c = fresh();
      MongoTreeStore store = (MongoTreeStore) p.open(c, new ServerCapabilities(c,
          ServerCapabilities.Mode.PROBE, ServerCapabilities.Mode.ON));
      InMemoryTreeStore reference = new InMemoryTreeStore();
      store.load(fixture());
      reference.load(fixture());
      for (Op op : DoctorScript.script()) {
        if (op.what().startsWith("move") || op.what().startsWith("delete b lifting")) {
          apply(op.what(), op.run(), store, reference);
          compareTrees(op.what(), store, reference);
          compareReads(op.what(), store, reference, op.focus());
          moves++;
        }
      }
    }
    return DoctorVerdict.passed(moves + " subtree moves and lifts with pipeline updates in array of"
        + " ancestors and materialized paths");
  }

  /**
   * Ids that sort differently under a locale collation than by code points: case, digits,
   * punctuation and accents.
   */
  private static Tree collationTree() {
    return Tree.builder()
        .add("B", null).add("a", null).add("a/", "a").add("a-b", "a").add("A", "a")
        .add("a b", "A").add("n10", "A").add("n9", "n10").add("é", "n9").add("e", "é")
        .add("Z", "B").add("z", "Z")
        .build();
  }

  private DoctorVerdict collation() {
    MongoCollection<Document> c = fresh();
    database.createCollection(name, new CreateCollectionOptions().collation(
        Collation.builder().locale("en").build()));
    Document options = null;
    for (Document d : database.listCollections()) {
      if (name.equals(d.get("name"))) {
        options = d.get("options", Document.class);
      }
    }
    if (options == null || options.get("collation") == null) {
      c.drop();
      return DoctorVerdict.notOffered("the server ignores a collection's default collation");
    }
    int ops = 0;
    for (TreePattern p : TreePattern.values()) {
      c.deleteMany(new Document()); // keeps the collection and its collation
      MongoTree tree = p.open(c);
      InMemoryTreeStore reference = new InMemoryTreeStore();
      tree.load(collationTree());
      reference.load(collationTree());
      List<Op> ops1 = List.of(
          op("move A firstRoot", s -> s.move("A", Position.firstRoot()), "A", "a"),
          op("insert a- after(a/)", s -> s.insert("a-", Position.after("a/")), "a", "a-"),
          op("move a/ lastChildOf(z)", s -> s.move("a/", Position.lastChildOf("z")), "a/", "z"),
          op("move n10 before(B)", s -> s.move("n10", Position.before("B")), "n10", "n9"),
          op("delete é", s -> s.delete("é"), "n9"));
      for (Op op : ops1) {
        apply(op.what(), op.run(), tree, reference);
        compareTrees(op.what(), tree, reference);
        compareReads(op.what(), tree, reference, op.focus());
        ops++;
      }
      compareReads("every node", tree, reference, reference.snapshot().ids());
    }
    return DoctorVerdict.passed(ops + " operations in every pattern on ids that sort differently"
        + " under 'en' (case, digits, accents, punctuation)");
  }

  private DoctorVerdict boundedRegex() {
    MongoCollection<Document> c = fresh();
    Tree.Builder b = Tree.builder();
    String parent = null;
    for (int i = 0; i < 110; i++) {
      String id = "n" + i + ",$-\\.(" + "x".repeat(20);
      b.add(id, parent);
      parent = id;
    }
    Tree chain = b.build();
    MongoTree tree = TreePattern.MATERIALIZED_PATHS.open(c);
    tree.load(chain);
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(chain);
    List<String> ids = chain.ids();
    int reads = 0;
    for (int from : new int[] {0, 5, 105}) {
      for (int depth : new int[] {1, 2, 50, 101, 102, 1_000}) {
        String id = ids.get(from);
        same("a 110-deep chain", "descendants(n" + from + ", " + depth + ")",
            reference.descendants(id, depth), tree.descendants(id, depth));
        reads++;
      }
    }
    return DoctorVerdict.passed(reads + " depth-limited reads of a 110-deep chain of escaped ids"
        + " (regexes of at most " + MaterializedPathTreeStore.MAX_REGEX_DEPTH + " levels)");
  }

  private DoctorVerdict largeIn() {
    MongoCollection<Document> c = fresh();
    int width = 1_000;
    Tree.Builder b = Tree.builder().add("root", null);
    for (int i = 0; i < width; i++) {
      b.add("w" + i, "root");
    }
    b.add("leaf", "w" + (width - 1));
    Tree wide = b.build();
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(c, new ServerCapabilities(c,
        ServerCapabilities.Mode.OFF, ServerCapabilities.Mode.PROBE));
    tree.load(wide);
    List<String> expected = wide.ids().subList(1, wide.size());
    same("a 1 000-wide level", "descendants(root)", expected, tree.descendants("root"));
    long counted = c.countDocuments(tree.subtreeFilter("root"));
    same("a 1 000-wide level", "countDocuments(subtreeFilter(root))", (long) wide.size(),
        counted);
    return DoctorVerdict.passed("a level of " + width + " ids walked with $in, and a subtree filter"
        + " of " + wide.size() + " ids counted");
  }

  // ------------------------------------------------------------------ concurrency

  /** One operation of a writer as it ran: its lock version, what it did, how it ended. */
  private record Done(long version, String what, Consumer<TreeStore> op, Class<?> outcome) {}

  private static Position position(int kind, String anchor) {
    return switch (kind) {
      case 0 -> Position.firstRoot();
      case 1 -> Position.lastRoot();
      case 2 -> Position.firstChildOf(anchor);
      case 3 -> Position.lastChildOf(anchor);
      case 4 -> Position.before(anchor);
      default -> Position.after(anchor);
    };
  }

  private DoctorVerdict concurrent(TreePattern pattern) {
    MongoCollection<Document> c = fresh();
    Tree initial = fixture();
    pattern.open(c).load(initial);
    List<String> known = new CopyOnWriteArrayList<>(initial.ids());
    List<Done> done = new CopyOnWriteArrayList<>();
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    long[] deadline = new long[1];
    List<Thread> threads = new ArrayList<>();
    List<MongoClient> clients = new ArrayList<>();
    try {
      for (int t = 0; t < WRITERS; t++) {
        MongoClient own = MongoClients.create(settings);
        clients.add(own);
        own.getDatabase("admin").runCommand(new Document("ping", 1)); // connected before the clock
        MongoTreeStore store = (MongoTreeStore) pattern.open(own.getDatabase(database.getName())
            .getCollection(name));
        store.lock.log = QUIET;
        long[] version = new long[1];
        store.onSettled = v -> version[0] = v;
        int thread = t;
        threads.add(new Thread(() -> {
          Random random = new Random(thread * 7919L + System.nanoTime());
          for (int i = 0; i < 200 && (i < MIN_OPS || System.nanoTime() < deadline[0]); i++) {
            String x = known.get(random.nextInt(known.size()));
            String y = known.get(random.nextInt(known.size()));
            int kind = random.nextInt(100);
            String what;
            Consumer<TreeStore> op;
            if (kind < 45) {
              String id = "t" + thread + "-" + i;
              Position p = position(random.nextInt(6), y);
              what = "insert " + id + " at " + p;
              op = s -> s.insert(id, p);
              known.add(id);
            } else if (kind < 92) {
              Position p = position(random.nextInt(6), y);
              what = "move " + x + " to " + p;
              op = s -> s.move(x, p);
            } else {
              what = "delete " + x;
              op = s -> s.delete(x);
            }
            Class<?> outcome = null;
            version[0] = -1;
            try {
              op.accept(store);
            } catch (NodeNotFoundException | InvalidMoveException e) {
              outcome = e.getClass();
            } catch (RuntimeException e) {
              errors.add(new RuntimeException(what + ": " + DoctorVerdict.describe(e), e));
              return;
            }
            if (version[0] < 0) {
              errors.add(new IllegalStateException(what + ": no version settled"));
              return;
            }
            done.add(new Done(version[0], what, op, outcome));
          }
        }, "arbor-doctor-writer-" + t));
      }
      deadline[0] = System.nanoTime() + CONCURRENT_RUN.toNanos();
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DoctorMismatch("interrupted");
    } finally {
      clients.forEach(MongoClient::close);
    }
    if (!errors.isEmpty()) {
      throw new DoctorMismatch(errors.size() + " writer(s) failed, first: " + errors.get(0)
          .getMessage());
    }
    MongoTree store = pattern.open(c);
    List<Problem> problems = store.check();
    if (!problems.isEmpty()) {
      throw new DoctorMismatch("check() after the run found " + problems);
    }
    List<Done> ordered = new ArrayList<>(done);
    ordered.sort(Comparator.comparingLong(Done::version));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(initial);
    int changed = 0;
    for (Done d : ordered) {
      Class<?> outcome = null;
      try {
        d.op().accept(reference);
      } catch (NodeNotFoundException | InvalidMoveException e) {
        outcome = e.getClass();
      }
      if (!Objects.equals(d.outcome(), outcome)) {
        throw new DoctorMismatch(d.what() + " at version " + d.version() + " ended "
            + name(d.outcome()) + ", in the serial replay " + name(outcome));
      }
      changed += outcome == null ? 1 : 0;
    }
    if (!reference.snapshot().equals(store.snapshot())) {
      throw new DoctorMismatch("the tree after " + ordered.size() + " concurrent operations differs"
          + " from their serial replay");
    }
    return DoctorVerdict.passed(WRITERS + " writers on clients of their own, " + ordered.size()
        + " operations (" + changed + " changes), equal to their serial replay; check() empty");
  }

  private static String name(Class<?> outcome) {
    return outcome == null ? "normally" : "with " + outcome.getSimpleName();
  }

  // ------------------------------------------------------------------ crash recovery

  /** Thrown by {@link Crashing} where a holder stops dead. */
  private static final class Crash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Crash() {
      super("crashed half-way", null, false, false);
    }
  }

  /**
   * A sender that stops as a holder that dies half-way through a change: it sends the first
   * batch that has steps in order, as the server runs an ordered bulk write, up to its middle
   * step, of which it applies only the first half of the documents (the server applies an
   * {@code updateMany} or {@code deleteMany} document by document too), then throws, leaving the
   * lock held and the journal written.
   */
  private static final class Crashing implements TreeLock.Sender {
    /** Closes the holder's client, or null: the holder stops dead instead. */
    private final @org.jspecify.annotations.Nullable Runnable close;
    volatile boolean crashed;
    volatile String where = "";

    Crashing(@org.jspecify.annotations.Nullable Runnable close) {
      this.close = close;
    }

    /**
     * Stops the holder: dead (it throws, holding the lock), or with its client closed under it
     * (its next write fails, and the store says what became of the change).
     */
    private com.mongodb.bulk.BulkWriteResult stop(
        MongoCollection<org.bson.BsonDocument> collection, TreeLock.Batch batch) {
      if (close == null) {
        throw new Crash();
      }
      close.run();
      return TreeLock.BULK.send(collection, batch); // fails: the client is closed
    }

    @Override
    public com.mongodb.bulk.BulkWriteResult send(
        MongoCollection<org.bson.BsonDocument> collection, TreeLock.Batch batch) {
      List<TreeLock.Statement> statements = batch.statements();
      int total = 0;
      for (TreeLock.Statement s : statements) {
        total += s.isStep() ? 1 : 0;
      }
      if (crashed || total == 0) {
        return TreeLock.BULK.send(collection, batch);
      }
      int middle = (total + 1) / 2;
      int at = 0;
      for (int seen = 0; ; at++) {
        seen += statements.get(at).isStep() ? 1 : 0;
        if (seen == middle) {
          break;
        }
      }
      if (at > 0) {
        collection.bulkWrite(batch.models().subList(0, at));
      }
      crashed = true;
      com.mongodb.client.model.WriteModel<org.bson.BsonDocument> m = statements.get(at).model();
      org.bson.conversions.Bson filter = null;
      if (m instanceof com.mongodb.client.model.UpdateManyModel<org.bson.BsonDocument> u) {
        filter = u.getFilter();
      } else if (m instanceof com.mongodb.client.model.DeleteManyModel<org.bson.BsonDocument> d) {
        filter = d.getFilter();
      }
      if (filter == null) {
        collection.bulkWrite(List.of(m));
        where = "after step " + middle + " of " + total;
        return stop(collection, batch);
      }
      List<Object> ids = new ArrayList<>();
      for (org.bson.BsonDocument d : collection.find(filter).collation(Reads.SIMPLE)
          .projection(new Document("_id", 1))) {
        ids.add(d.get("_id"));
      }
      int half = (ids.size() + 1) / 2;
      for (Object id : ids.subList(0, half)) {
        org.bson.conversions.Bson one = com.mongodb.client.model.Filters.and(
            com.mongodb.client.model.Filters.eq("_id", id), filter);
        if (m instanceof com.mongodb.client.model.UpdateManyModel<org.bson.BsonDocument> u) {
          collection.bulkWrite(List.of(u.getUpdatePipeline() != null
              ? new com.mongodb.client.model.UpdateOneModel<>(one, u.getUpdatePipeline(),
                  u.getOptions())
              : new com.mongodb.client.model.UpdateOneModel<>(one, u.getUpdate(),
                  u.getOptions())));
        } else {
          collection.bulkWrite(List.of(new com.mongodb.client.model.DeleteOneModel<>(one,
              ((com.mongodb.client.model.DeleteManyModel<org.bson.BsonDocument>) m)
                  .getOptions())));
        }
      }
      where = "after " + half + " of the " + ids.size() + " documents of step " + middle + " of "
          + total;
      return stop(collection, batch);
    }
  }

  private DoctorVerdict crashRecovery(TreePattern pattern) {
    MongoCollection<Document> c = fresh();
    Tree before = fixture();
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(before);
    reference.delete("b");
    Tree after = reference.snapshot();
    MongoTreeStore crashing = (MongoTreeStore) pattern.open(c,
        ServerCapabilities.probing(c).lease(CRASH_LEASE_MILLIS, 60_000));
    crashing.load(before);
    crashing.lock.log = QUIET;
    Crashing sender = new Crashing(null);
    crashing.lock.sender = sender;
    try {
      crashing.delete("b");
    } catch (RuntimeException e) {
      if (!sender.crashed) {
        throw e;
      }
      // the holder is dead
    }
    if (!sender.crashed) {
      throw new DoctorMismatch("delete 'b' was not interrupted: it sent no step to crash in");
    }
    // Another process opens the collection, waits for the dead holder's lease, takes the lock
    // over and finishes the journal.
    MongoTreeStore next = (MongoTreeStore) pattern.open(c);
    next.lock.log = QUIET;
    long start = System.nanoTime();
    List<Problem> left = next.repair();
    long waited = (System.nanoTime() - start) / 1_000_000;
    if (!left.isEmpty()) {
      throw new DoctorMismatch("repair() after the crash left " + left);
    }
    Tree recovered = next.snapshot();
    if (!recovered.equals(before) && !recovered.equals(after)) {
      throw new DoctorMismatch("after the crash and repair the tree is neither the tree before nor"
          + " the tree after delete 'b': " + recovered);
    }
    List<Problem> problems = next.check();
    if (!problems.isEmpty()) {
      throw new DoctorMismatch("check() after recovery found " + problems);
    }
    Set<String> journals = new LinkedHashSet<>();
    for (Document d : c.find(new Document("_id.arbor", "journal"))) {
      journals.add(String.valueOf(d.get("_id")));
    }
    if (!journals.isEmpty()) {
      throw new DoctorMismatch("journal documents left after recovery: " + journals);
    }
    next.insert("z", Position.lastRoot());
    if (!next.check().isEmpty()) {
      throw new DoctorMismatch("check() after a change following the recovery is not empty");
    }
    String closed = closedClient(pattern, before, after);
    return DoctorVerdict.passed("delete 'b' stopped " + sender.where + ": dead, taken over after "
        + waited + " ms and " + (recovered.equals(after) ? "finished" : "undone") + "; "
        + closed + "; check() empty");
  }

  /**
   * Closes the client of a store half-way through {@code delete 'b'}: the call throws {@link
   * dev.arbor.core.ChangeInterruptedException} saying what became of the change, and the next
   * access (after the closed client's lease) finds the tree that outcome says.
   */
  private String closedClient(TreePattern pattern, Tree before, Tree after) {
    MongoCollection<Document> c = fresh();
    dev.arbor.core.ChangeInterruptedException.Outcome outcome;
    Crashing sender;
    try (MongoClient own = MongoClients.create(settings)) {
      MongoCollection<Document> mine = own.getDatabase(database.getName()).getCollection(name);
      MongoTreeStore closing = (MongoTreeStore) pattern.open(mine,
          ServerCapabilities.probing(mine).lease(CRASH_LEASE_MILLIS, 60_000));
      closing.load(before);
      closing.lock.log = QUIET;
      sender = new Crashing(own::close);
      closing.lock.sender = sender;
      try {
        closing.delete("b");
        throw new DoctorMismatch("delete 'b' went through although its client was closed half-way");
      } catch (dev.arbor.core.ChangeInterruptedException e) {
        outcome = e.outcome();
      } catch (DoctorMismatch e) {
        throw e;
      } catch (RuntimeException e) {
        throw new DoctorMismatch("a client closed half-way through delete 'b': " + DoctorVerdict.describe(e)
            + " instead of ChangeInterruptedException");
      }
    }
    MongoTreeStore next = (MongoTreeStore) pattern.open(c);
    next.lock.log = QUIET;
    Tree now = next.snapshot();
    boolean right = switch (outcome) {
      case NOT_APPLIED -> now.equals(before);
      case COMMITTED -> now.equals(after);
      case UNKNOWN -> now.equals(before) || now.equals(after);
    };
    if (!right) {
      throw new DoctorMismatch("a client closed half-way through delete 'b' (" + sender.where
          + ") said " + outcome + ", but the next reader found " + now);
    }
    List<Problem> problems = next.check();
    if (!problems.isEmpty()) {
      throw new DoctorMismatch("check() after a client closed half-way found " + problems);
    }
    return "its client closed: " + outcome + ", and so it was";
  }
}
