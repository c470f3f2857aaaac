package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.Deletion;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Several writers, each on a client of its own (as separate processes are), with leases shorter
 * than their changes, on a machine made busy by spinning threads; a reader reads all along. Every
 * writer's first change is a move planned from the same quiet version. The history of calls must
 * be linearizable ({@link Linearizability}): one order of the calls, consistent with real time,
 * explains every outcome and every read, and ends at the stored tree.
 */
class LinearizabilityTest {
  static final int NODES = 2_000;
  static final int WRITERS = 3;
  static final int MOVES = 4;

  /** A random recursive tree: node i hangs under a node before it. */
  static Tree randomTree(int nodes, long seed) {
    Random random = new Random(seed);
    Tree.Builder b = Tree.builder();
    b.add("n0", null);
    for (int i = 1; i < nodes; i++) {
      b.add("n" + i, "n" + random.nextInt(i));
    }
    return b.build();
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void firstMovesFromOneQuietVersionWithShortLeases(TreePattern pattern) throws Exception {
    for (int round = 0; round < rounds(pattern); round++) {
      runRound(pattern, round, Long.getLong("arbor.linearizability.lease", 100));
    }
    // A lease far shorter than a change: holders are taken over half-way.
    runRound(pattern, rounds(pattern), 30);
  }

  /**
   * Writers in lanes ({@link LaneProtocol}): writers 0 and 1 each change a subtree of their own,
   * writer 2 moves nodes between those two subtrees and inserts and deletes in both (its moves
   * cross theirs), with leases of 100 ms and 30 ms.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void writersInDisjointAndOverlappingSubtreesWithShortLeases(TreePattern pattern)
      throws Exception {
    Tree.Builder b = Tree.builder();
    b.add("r", null);
    int per = NODES / 4;
    for (int k = 0; k < 2; k++) {
      Random random = new Random(31 + k);
      b.add("s" + k + "-0", "r");
      for (int i = 1; i < per; i++) {
        b.add("s" + k + "-" + i, "s" + k + "-" + random.nextInt(i));
      }
    }
    Tree initial = b.build();
    Chooser inSubtrees = (w, random) -> {
      int from = w == 2 ? random.nextInt(2) : w;
      int to = w == 2 ? 1 - from : w;
      return new String[] {"s" + from + "-" + (1 + random.nextInt(per - 1)),
          "s" + to + "-" + random.nextInt(per)};
    };
    runRound(pattern, 0, 100, initial, inSubtrees, true, 0);
    runRound(pattern, 1, 30, initial, inSubtrees, true, 0);
  }

  /**
   * The first test's writers behind a network that loses commands, loses answers and delivers
   * commands late ({@link FlakyNetwork}, about one command in ten each), with leases of 100 ms
   * and 30 ms, in the tree's lock and in lanes: every outcome told, every read and the stored
   * tree (once the late deliveries ran) must still be explained by one order of the calls.
   * Two rounds by default (the tree's lock, then lanes where the pattern has them); run more
   * with {@code -Darbor.linearizability.flakyRounds=N} ({@code -Darbor.flaky.kinds=...} to
   * choose the faults, {@code -Darbor.flaky.dump=ids} to print documents of a tree found
   * unsound). It found a lane's writes told {@code NOT_APPLIED} after a renewal's lost answer
   * ({@code LateLaneAnswerTest}) and a step's first sending that undid a later change ({@code
   * LateStepAfterReleaseTest}).
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void writersBehindAFlakyNetworkWithShortLeases(TreePattern pattern) throws Exception {
    alternating(pattern, Integer.getInteger("arbor.linearizability.flakyRounds", 2), 40, false,
        round -> 0.1);
  }

  /**
   * Every kind of change, not only moves, inserts and deletes of whole subtrees: inserts with
   * node data, updates of node data, deletes that lift the children or refuse a node with
   * children, and grafts of small trees (whole, and as streamed entries), with leases of 100 ms
   * and 30 ms, in the tree's lock and in lanes, behind a flaky network in the second half of the
   * rounds; the reader also reads nodes with their data. Run more rounds with {@code
   * -Darbor.linearizability.kindRounds=N}.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void everyKindOfChangeWithShortLeases(TreePattern pattern) throws Exception {
    int rounds = Integer.getInteger("arbor.linearizability.kindRounds", 2);
    alternating(pattern, rounds, 60, true, round -> round >= rounds / 2 ? 0.1 : 0);
  }

  /**
   * Rounds on random trees that alternate 100 ms leases under the tree's lock with 30 ms leases
   * in lanes (nested sets: the tree's lock always).
   */
  private void alternating(TreePattern pattern, int rounds, int first, boolean everyKind,
      java.util.function.IntToDoubleFunction flaky) throws Exception {
    for (int round = 0; round < rounds; round++) {
      boolean lanes = pattern != TreePattern.NESTED_SETS && round % 2 == 1;
      runRound(pattern, first + round, round % 2 == 0 ? 100 : 30,
          randomTree(NODES, first + 1 + round), ANY_NODES, lanes, flaky.applyAsDouble(round),
          everyKind);
    }
  }

  /** A small tree of new nodes named after {@code id}, with data: id(id.a(id.b) id.c). */
  static Tree grafted(String id) {
    return Tree.builder().add(id, null, Map.of("by", id))
        .add(id + ".a", id, Map.of("by", id)).add(id + ".b", id + ".a", Map.of())
        .add(id + ".c", id, Map.of("n", 1)).build();
  }

  /** The node changed and the node of the position, for writer {@code w}. */
  interface Chooser {
    String[] nodes(int w, Random random);
  }

  /** Any node but the first root, and any node of the position. */
  private static final Chooser ANY_NODES = (w, random) -> new String[] {
      "n" + (1 + random.nextInt(NODES - 1)), "n" + random.nextInt(NODES)};

  private static int rounds(TreePattern pattern) {
    return Integer.getInteger("arbor.linearizability.rounds",
        pattern == TreePattern.NESTED_SETS ? 4 : 2);
  }

  private void runRound(TreePattern pattern, int round, long lease) throws Exception {
    runRound(pattern, round, lease, randomTree(NODES, 17 + round), ANY_NODES, false, 0);
  }

  /**
   * One round: {@value #WRITERS} writers, a reader, and the check.
   *
   * @param flaky the share of each kind of fault of the writers' networks ({@link
   *     FlakyNetwork}), 0 for none
   */
  private void runRound(TreePattern pattern, int round, long lease, Tree initial,
      Chooser chooser, boolean lanes, double flaky) throws Exception {
    runRound(pattern, round, lease, initial, chooser, lanes, flaky, false);
  }

  /** @param everyKind whether writers make every kind of change, not only moves, inserts and deletes */
  private void runRound(TreePattern pattern, int round, long lease, Tree initial,
      Chooser chooser, boolean lanes, double flaky, boolean everyKind) throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    String name = direct.getNamespace().getCollectionName();
    String db = direct.getNamespace().getDatabaseName();
    String uri = MongoTestServer.get().uri();
    // with its indexes, as a user's tree has them (unindexed, the embedded server scans the
    // 2 000 documents for each fenced step)
    TreeStore loader = pattern.open(direct);
    loader.ensureIndexes();
    loader.load(initial);
    List<MongoClient> clients = new ArrayList<>();
    List<FlakyNetwork> networks = new ArrayList<>();
    AtomicBoolean busy = new AtomicBoolean(true);
    ExecutorService pool = Executors.newCachedThreadPool();
    try {
      List<TreeStore> writers = new ArrayList<>();
      for (int w = 0; w <= WRITERS; w++) {
        MongoClient client = MongoClients.create(MongoTestServer.settings(uri));
        clients.add(client);
        MongoCollection<Document> c = client.getDatabase(db).getCollection(name);
        ServerCapabilities capabilities = ServerCapabilities.probing(c).lease(lease, 60_000)
            .subtreeLocks(lanes);
        if (flaky > 0 && w < WRITERS) {
          FlakyNetwork network = new FlakyNetwork(round * 1_009L + w, flaky);
          networks.add(network);
          capabilities = capabilities.sender(network);
        }
        TreeStore store = pattern.open(c, capabilities);
        // every store sees the tree quiet at the same version
        store.children(initial.roots().get(0));
        writers.add(store);
      }
      TreeStore reader = writers.remove(WRITERS);
      // A busy machine: spinning threads compete with the writers and the server.
      Linearizability.spin(pool, busy, 2);
      Linearizability.History history = new Linearizability.History();
      CountDownLatch go = new CountDownLatch(1);
      Random plan = new Random(round * 7_919L + pattern.ordinal());
      List<Future<?>> running = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int process = w;
        TreeStore store = writers.get(w);
        long delay = w == 0 ? 0 : 60 + plan.nextInt(160);
        List<String[]> moves = new ArrayList<>();
        for (int m = 0; m < MOVES; m++) {
          // The first change is a move; then moves, inserts and deletes.
          int kind = m == 0 ? 0 : plan.nextInt(100);
          String op = !everyKind ? (kind < 60 ? "move" : kind < 85 ? "insert" : "delete")
              : kind < 30 ? "move" : kind < 42 ? "insert" : kind < 56 ? "update"
              : kind < 64 ? "delete" : kind < 72 ? "lift" : kind < 80 ? "leaf"
              : kind < 90 ? "graft" : "graftEntries";
          String[] nodes = chooser.nodes(w, plan);
          // A third of the inserts use an id another writer may insert too, at the same step
          // (one of them must be told DuplicateNodeException; a lane once let both succeed).
          String newId = op.equals("insert") && plan.nextInt(3) == 0 ? "s" + m : "w" + w + "-" + m;
          moves.add(new String[] {nodes[0], nodes[1], String.valueOf(plan.nextInt(3)), op,
              newId});
        }
        running.add(pool.submit(() -> {
          go.await();
          Thread.sleep(delay * process);
          for (String[] m : moves) {
            Position p = switch (m[2]) {
              case "0" -> Position.firstChildOf(m[1]);
              case "1" -> Position.lastChildOf(m[1]);
              default -> Position.after(m[1]);
            };
            switch (m[3]) {
              case "move" -> history.call(process, "move " + m[0] + " to " + p, store, s -> {
                s.move(m[0], p);
                return null;
              });
              case "insert" -> history.call(process, "insert " + m[4] + " at " + p, store,
                  s -> {
                    if (everyKind) {
                      s.insert(m[4], p, Map.of("by", m[4], "n", process));
                    } else {
                      s.insert(m[4], p);
                    }
                    return null;
                  });
              case "update" -> history.call(process, "update " + m[0] + " by " + m[4], store,
                  s -> {
                    Map<String, Object> set = new java.util.HashMap<>();
                    set.put("by", m[4]);
                    set.put("n", null); // removed
                    s.update(m[0], set);
                    return null;
                  });
              case "lift" -> history.call(process, "delete " + m[0] + " lifting its children",
                  store, s -> s.delete(m[0], Deletion.LIFT_CHILDREN));
              case "leaf" -> history.call(process, "delete " + m[0] + " if a leaf", store,
                  s -> s.delete(m[0], Deletion.LEAF_ONLY));
              case "graft" -> history.call(process, "graft " + m[4] + " under " + m[1], store,
                  s -> s.graft(m[1], grafted(m[4])));
              case "graftEntries" -> history.call(process, "graft entries " + m[4] + " under "
                  + m[1], store, s -> s.graft(m[1], grafted(m[4]).entries().iterator()));
              default -> history.call(process, "delete " + m[0], store, s -> s.delete(m[0]));
            }
          }
          return null;
        }));
      }
      AtomicBoolean writing = new AtomicBoolean(true);
      Future<?> reading = pool.submit(() -> {
        go.await();
        Random reads = new Random(round);
        for (int k = 0; writing.get(); k++) {
          // the whole tree, and the subtrees and children of nodes the writers change (reads of
          // a subtree stand beside lanes elsewhere: LaneProtocol#read(String, ...))
          String x = initial.entries().get(reads.nextInt(initial.size())).id();
          switch (k % 6) {
            case 0 -> history.read(WRITERS, "snapshot", reader, TreeStore::snapshot);
            case 1 -> history.read(WRITERS, "descendants " + x, reader, s -> s.descendants(x));
            case 2 -> history.read(WRITERS, "children " + x, reader, s -> s.children(x));
            case 3 -> history.read(WRITERS, "descendantNodes " + x, reader,
                s -> s.descendantNodes(x, Integer.MAX_VALUE));
            case 4 -> {
              if (everyKind) {
                history.read(WRITERS, "find " + x, reader, s -> s.find(x));
              } else {
                history.read(WRITERS, "ancestors " + x, reader, s -> s.ancestors(x));
              }
            }
            default -> history.read(WRITERS, "subtree " + x, reader,
                s -> s.subtree(x, Integer.MAX_VALUE));
          }
          Thread.sleep(20);
        }
        return null;
      });
      go.countDown();
      for (Future<?> f : running) {
        f.get(5, TimeUnit.MINUTES);
      }
      writing.set(false);
      reading.get(1, TimeUnit.MINUTES);
      busy.set(false);
      for (FlakyNetwork network : networks) {
        network.drain(10_000); // the late deliveries land now, or never
      }
      TreeStore after = pattern.open(direct);
      assertEquals(List.of(), after.check(), () -> pattern + ", round " + round + ", calls: "
          + history.calls().stream().filter(c -> c.process < WRITERS).toList()
          + (System.getProperty("arbor.flaky.dump") == null ? "" : "\nlock: "
              + direct.find(new Document("_id", new Document("$not",
                  new Document("$type", "string")))).into(new ArrayList<>())
              + "\ndocs: " + direct.find(new Document("_id", new Document("$in",
                  List.of(System.getProperty("arbor.flaky.dump").split(",")))))
                  .into(new ArrayList<>())));
      Tree stored = after.snapshot();
      String verdict = Linearizability.check(initial, history.calls(), stored);
      if (verdict != null) {
        StringBuilder moves = new StringBuilder(verdict).append("\nWhere the moved nodes are:");
        for (Linearizability.Call c : history.calls()) {
          String[] words = c.what.split(" ");
          String x = words.length > 1 ? words[1] : "";
          if (c.what.startsWith("move") && stored.contains(x) && initial.contains(x)) {
            moves.append("\n  ").append(c).append(": ").append(x).append(" is under ")
                .append(stored.get(x).parentId()).append(", was under ")
                .append(initial.get(x).parentId());
          }
        }
        for (Linearizability.Call c : history.calls()) {
          if (c.thrown instanceof dev.arbor.core.ChangeInterruptedException) {
            moves.append("\n  ").append(c.what).append(": ").append(c.thrown.getMessage());
          }
        }
        verdict = moves.toString();
      }
      assertNull(verdict,
          pattern + ", round " + round);
    } finally {
      busy.set(false);
      pool.shutdownNow();
      clients.forEach(MongoClient::close);
    }
  }
}
