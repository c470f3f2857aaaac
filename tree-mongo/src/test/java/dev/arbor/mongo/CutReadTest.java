package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Cuts or stalls the connection of a store under every read at every command it sends, and holds
 * what the read then does to docs/guarantees.md ("What an exception means", "A stalled connection
 * does not hold the tree"): a read is made again after an I/O error or a timeout until the lock
 * wait runs out, and answers as an uncut read does; a read that cannot reach the server within
 * the lock wait ends with {@link ChangeInterruptedException} {@code NOT_APPLIED} naming the tree,
 * never with a raw driver exception. (Before, a read cut once with the driver's retries off, cut
 * twice with them on, or whose lock check stalled past the lock's command limit, threw the
 * driver's {@code MongoSocketReadException} or {@code MongoOperationTimeoutException}.)
 *
 * <p>The store's client reads through a {@link CuttingProxy} with {@code retryReads} off (so that
 * one cut is not hidden by the driver's single retry) and a 300 ms socket timeout (which ends a
 * stalled query of the read itself; the lock's check carries the lock's command limit).
 */
class CutReadTest {
  private static final String FIXTURE = "r1(a(b c) d) r2(e(f))";
  private static final long LEASE = 200;
  /**
   * Long enough that a busy machine's slow answers (each bounded by the 300 ms socket timeout)
   * are made again rather than given up on: at 800 ms, a read on a machine at load 45 gave up.
   */
  private static final long WAIT = 2_000;
  /** The commands a read sends. */
  private static final Set<String> READS = Set.of("find", "aggregate", "count", "getMore",
      "distinct");
  /** The lock wait of the store whose server goes out of reach, and the reads it makes. */
  private static final long SHORT_WAIT = 600;
  private static final Set<String> UNREACHABLE = Set.of("descendants", "entries");
  /**
   * The reads stalled at each of their commands too (a stall costs a timeout): the stream, whose
   * commands are a lock check, cursors, one-shot queries and a lock check again.
   */
  private static final Set<String> STALLED = Set.of("entries");

  /** A read of the fixture, its answer made comparable. */
  record Read(String name, Function<TreeStore, Object> run) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static final List<Read> READS_MADE = List.of(
      new Read("find", s -> s.find("a").map(Node::toString)),
      new Read("children", s -> s.children("a")),
      new Read("descendants", s -> s.descendants("r1")),
      new Read("ancestors", s -> s.ancestors("b")),
      new Read("depth", s -> s.depth("c")),
      new Read("subtree", s -> s.subtree("a", 5).toString()),
      new Read("snapshot", s -> s.snapshot().toString()),
      new Read("entries", s -> s.entries().map(Node::toString).toList()),
      new Read("size", TreeStore::size),
      new Read("check", TreeStore::check));

  private static MongoClient throughProxy(CuttingProxy proxy, long selectionMillis) {
    MongoClientSettings base = MongoTestServer.settings("mongodb://127.0.0.1:" + proxy.port());
    return MongoClients.create(MongoClientSettings.builder(base)
        .retryReads(false)
        .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionMillis,
            TimeUnit.MILLISECONDS))
        .applyToSocketSettings(b -> b.connectTimeout(1, TimeUnit.SECONDS)
            .readTimeout(300, TimeUnit.MILLISECONDS))
        .applyToServerSettings(b -> b.minHeartbeatFrequency(10, TimeUnit.MILLISECONDS))
        .build());
  }

  /** The collection {@code direct} names, read through {@code client}. */
  private static MongoCollection<Document> through(MongoClient client,
      MongoCollection<Document> direct) {
    return client.getDatabase(direct.getNamespace().getDatabaseName())
        .getCollection(direct.getNamespace().getCollectionName())
        .withCodecRegistry(direct.getCodecRegistry());
  }

  private static TreeStore store(TreePattern pattern, MongoCollection<Document> c) {
    return pattern.open(c, ServerCapabilities.probing(c).lease(LEASE, WAIT));
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aReadWhoseConnectionIsCutOrStalledAtAnyCommandAnswersAsAnUncutRead(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    pattern.open(direct).load(Tree.parse(FIXTURE));
    List<String> violations = new ArrayList<>();
    int points = 0;
    try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
        MongoClient client = throughProxy(proxy, 2_000)) {
      TreeStore store = store(pattern, through(client, direct));
      for (Read read : READS_MADE) {
        Object expected = read.run().apply(store); // also settles the store's first reads
        proxy.count(READS::contains);
        assertEquals(expected, read.run().apply(store), read.name());
        int commands = proxy.counted();
        List<CuttingProxy.Cut> cuts = STALLED.contains(read.name())
            ? List.of(CuttingProxy.Cut.BEFORE, CuttingProxy.Cut.AFTER, CuttingProxy.Cut.STALL)
            : List.of(CuttingProxy.Cut.BEFORE, CuttingProxy.Cut.AFTER);
        for (CuttingProxy.Cut cut : cuts) {
          for (int k = 1; k <= commands; k++) {
            points++;
            String at = pattern + " " + read + ", cut " + cut.name().toLowerCase() + " at read"
                + " command " + k + " of " + commands;
            proxy.arm(cut, k, READS::contains);
            try {
              Object got = read.run().apply(store);
              if (!expected.equals(got)) {
                violations.add(at + ": answered " + got + " instead of " + expected);
              }
            } catch (RuntimeException e) {
              violations.add(at + ": threw " + e);
            } finally {
              proxy.disarm();
            }
          }
        }
      }
    }
    assertTrue(points > 2 * READS_MADE.size(), "points: " + points);
    if (!violations.isEmpty()) {
      fail(violations.size() + " of " + points + " points:\n  "
          + String.join("\n  ", violations.subList(0, Math.min(20, violations.size()))));
    }
  }

  /**
   * Opening a store checks the server (its version, the collection's collation): a cut or
   * stalled connection there is made again as a read is, and the store opens as over an uncut
   * connection. (Before, the driver's {@code MongoSocketReadException} or socket timeout came out
   * of {@code open}.)
   */
  @Test
  void aStoreOpenedOverACutOrStalledConnectionOpensAsOverAnUncutOne() throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    TreePattern pattern = TreePattern.PARENT_REFERENCES;
    pattern.open(direct).load(Tree.parse(FIXTURE));
    Set<String> opening = Set.of("explain", "listIndexes", "buildInfo");
    List<String> violations = new ArrayList<>();
    int points = 0;
    try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
        MongoClient client = throughProxy(proxy, 2_000)) {
      proxy.count(opening::contains);
      assertEquals(List.of("b", "c"), store(pattern, through(client, direct)).children("a"));
      int commands = proxy.counted();
      assertTrue(commands >= 2, "commands: " + commands);
      for (CuttingProxy.Cut cut : CuttingProxy.Cut.values()) {
        for (int k = 1; k <= commands; k++) {
          points++;
          String at = "cut " + cut.name().toLowerCase() + " at command " + k + " of " + commands
              + " of the opening";
          proxy.arm(cut, k, opening::contains);
          try {
            List<String> got = store(pattern, through(client, direct)).children("a");
            if (!got.equals(List.of("b", "c"))) {
              violations.add(at + ": answered " + got);
            }
          } catch (RuntimeException e) {
            violations.add(at + ": threw " + e);
          } finally {
            proxy.disarm();
          }
        }
      }
    }
    if (!violations.isEmpty()) {
      fail(violations.size() + " of " + points + " points:\n  "
          + String.join("\n  ", violations));
    }
  }

  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "PARENT_REFERENCES")
  void aReadThatCannotReachTheServerWithinTheLockWaitEndsNotAppliedNamingTheTree(
      TreePattern pattern) throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    pattern.open(direct).load(Tree.parse(FIXTURE));
    CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
    try (MongoClient client = throughProxy(proxy, 300)) {
      MongoCollection<Document> c = through(client, direct);
      TreeStore store = pattern.open(c, ServerCapabilities.probing(c).lease(100, SHORT_WAIT));
      assertEquals(List.of("a", "b", "c", "d"), store.descendants("r1"));
      proxy.close(); // the server is out of reach from now on
      for (Read read : READS_MADE) {
        if (!UNREACHABLE.contains(read.name())) {
          continue;
        }
        long start = System.nanoTime();
        ChangeInterruptedException e = assertThrows(ChangeInterruptedException.class,
            () -> read.run().apply(store), read.name());
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(ChangeInterruptedException.Outcome.NOT_APPLIED, e.outcome(), read.name());
        assertTrue(e.getMessage().contains(direct.getNamespace().getCollectionName()),
            e.getMessage());
        assertTrue(e.getCause() instanceof MongoException, read.name() + ": " + e.getCause());
        assertTrue(tookMillis >= SHORT_WAIT, read.name() + " gave up after " + tookMillis + " ms");
      }
    } finally {
      proxy.close();
    }
  }
}
