package dev.arbor.mongo;

import static dev.arbor.mongo.DoctorScript.fixture;
import static java.util.Objects.requireNonNull;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
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
import java.util.function.Predicate;
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

  private final DoctorScratch scratch;
  private final DoctorServer server;
  private final Consumer<String> progress;
  /** The checks to run, by name (tests run some). */
  private final Predicate<String> checks;
  private final List<Capability> capabilities = new ArrayList<>();

  private Doctor(DoctorScratch scratch, DoctorServer server, Consumer<String> progress,
      Predicate<String> checks) {
    this.scratch = scratch;
    this.server = server;
    this.progress = progress;
    this.checks = checks;
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
      boolean assumeGraphLookup, Predicate<String> checks) {
    requireNonNull(settings, "settings");
    requireNonNull(database, "database");
    requireNonNull(progress, "progress");
    long start = System.nanoTime();
    try (MongoClient client = MongoClients.create(settings)) {
      DoctorScratch scratch = new DoctorScratch(settings, client, database);
      DoctorServer server = DoctorServer.identify(scratch);
      Doctor d = new Doctor(scratch, server, progress, checks);
      try {
        d.runAll(assumeGraphLookup);
      } finally {
        scratch.drop();
      }
      return new Report(server.version(), server.topology(), scratch.namespace(),
          d.capabilities, Duration.ofNanos(System.nanoTime() - start));
    }
  }

  /** Runs the checks in the order of the report. */
  private void runAll(boolean assumeGraphLookup) {
    DoctorContractCheck contract = new DoctorContractCheck(scratch);
    for (TreePattern p : TreePattern.values()) {
      check("lock and journal, " + label(p), () -> contract.lockAndJournal(p));
    }
    for (TreePattern p : TreePattern.values()) {
      checkTransactional("transactions, " + label(p), () -> contract.transactions(p));
    }
    for (TreePattern p : TreePattern.values()) {
      checkTransactional("caller's session, " + label(p), () -> contract.callersSession(p));
    }
    DoctorServerPaths paths = new DoctorServerPaths(scratch, assumeGraphLookup);
    check("$graphLookup, parent and child references", paths::graphLookup);
    check("pipeline updates, ancestors and paths", paths::pipelineUpdates);
    check("collation (collection default 'en')", paths::collation);
    check("bounded regex, materialized paths", paths::boundedRegex);
    check("large $in, parent references", paths::largeIn);
    for (TreePattern p : TreePattern.values()) {
      check("concurrent writers, " + label(p), () -> concurrent(p));
    }
    for (TreePattern p : TreePattern.values()) {
      check("crash recovery, " + label(p), () -> crashRecovery(p));
    }
  }

  // ------------------------------------------------------------------ bookkeeping

  /** One check, run by {@link #check}. */
  private interface Check {
    DoctorVerdict run();
  }

  /**
   * Runs {@code check} if {@code what} is among the checks to run, telling the progress first,
   * and adds its line, timed; an exception fails it with its message.
   */
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
      if (!server.transactionsOffered()) {
        return DoctorVerdict.notOffered(server.noTransactions());
      }
      return check.run();
    });
  }

  /** A pattern as the report names it: {@code PARENT_REFERENCES}, "parent references". */
  private static String label(TreePattern p) {
    return p.name().toLowerCase(Locale.ROOT).replace('_', ' ');
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
    MongoCollection<Document> c = scratch.fresh();
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
        MongoClient own = scratch.newClient();
        clients.add(own);
        own.getDatabase("admin").runCommand(new Document("ping", 1)); // connected before the clock
        MongoTreeStore store = (MongoTreeStore) pattern.open(scratch.collection(
            own));
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
    MongoCollection<Document> c = scratch.fresh();
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
    MongoCollection<Document> c = scratch.fresh();
    dev.arbor.core.ChangeInterruptedException.Outcome outcome;
    Crashing sender;
    try (MongoClient own = scratch.newClient()) {
      MongoCollection<Document> mine = scratch.collection(own);
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
