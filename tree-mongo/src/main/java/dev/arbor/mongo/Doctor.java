package dev.arbor.mongo;

import static java.util.Objects.requireNonNull;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.mongo.internal.doctor.DoctorConcurrentWriters;
import dev.arbor.mongo.internal.doctor.DoctorContractCheck;
import dev.arbor.mongo.internal.doctor.DoctorCrashRecovery;
import dev.arbor.mongo.internal.doctor.DoctorScratch;
import dev.arbor.mongo.internal.doctor.DoctorServer;
import dev.arbor.mongo.internal.doctor.DoctorServerPaths;
import dev.arbor.mongo.internal.doctor.DoctorVerdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Checks what Arbor does against a server of the caller's: every operation of the contract in
 * every pattern, compared with {@link InMemoryTreeStore} after each, through every protocol the
 * server offers (the lock and journal, Arbor's own transactions, the caller's session), the
 * server paths the stores use where the server has them ({@code $graphLookup}, pipeline
 * updates, a collection with a locale collation, bounded regexes, a large {@code $in}), a short
 * run of concurrent writers and the recovery of a change interrupted half-way (its holder dead,
 * or its client closed) or sent late (its holder paused past its lease before its delete
 * command). {@code arbor doctor} prints its {@link Report}; the test suite runs it
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
 * offered, never as a failure. A run takes 20 to 35 s on the embedded server.
 */
public final class Doctor {
  /** The number of checks (lines of a report). */
  static final int CHECKS = 6 * 5;

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

  // Doctor holds the entry point, the report and the order of the checks; each check is a class
  // of its own, working in the DoctorScratch collection: DoctorContractCheck (the script against
  // InMemoryTreeStore, per protocol), DoctorServerPaths, DoctorConcurrentWriters and
  // DoctorCrashRecovery. DoctorServer says what the server is and whether it has transactions.

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
    DoctorConcurrentWriters writers = new DoctorConcurrentWriters(scratch);
    for (TreePattern p : TreePattern.values()) {
      check("concurrent writers, " + label(p), () -> writers.run(p));
    }
    DoctorCrashRecovery recovery = new DoctorCrashRecovery(scratch);
    for (TreePattern p : TreePattern.values()) {
      check("crash recovery, " + label(p), () -> recovery.run(p));
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
}
