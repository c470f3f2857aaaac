package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.arbor.core.Fixtures;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Four writer threads on two separate clients do random inserts, moves and deletes on one tree
 * while a reader checks it. Afterwards {@code check()} is empty and the tree equals the reference
 * replayed in the order the operations took the lock, each with the same outcome; every read
 * during the run saw a sound tree.
 */
class ConcurrencyTest {
  private static final int THREADS = 4;
  private static final int OPS_PER_THREAD = 40;

  /** One operation as it ran: its lock version, what it did, and how it ended. */
  record Done(long version, String what, Consumer<TreeStore> op, Class<?> outcome) {}

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void concurrentWritersSerializeAndReadersSeeSoundTrees(TreePattern pattern) throws Exception {
    String name = MongoTestServer.get().freshCollection().getNamespace().getCollectionName();
    String uri = MongoTestServer.get().uri();
    String db = MongoTestServer.get().database().getName();
    Tree initial = Tree.parse("r1(a(b c) d) r2(e(f))");
    try (MongoClient one = MongoClients.create(MongoTestServer.settings(uri));
        MongoClient two = MongoClients.create(MongoTestServer.settings(uri))) {
      pattern.open(one.getDatabase(db).getCollection(name)).load(initial);
      List<String> known = new CopyOnWriteArrayList<>(initial.ids());
      List<Done> done = new CopyOnWriteArrayList<>();
      List<String> readerFailures = new CopyOnWriteArrayList<>();
      AtomicBoolean writing = new AtomicBoolean(true);
      ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
      List<Future<?>> writers = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        MongoClient client = t % 2 == 0 ? one : two;
        MongoTreeStore store = (MongoTreeStore) pattern.open(client.getDatabase(db)
            .getCollection(name));
        ThreadLocal<Long> version = new ThreadLocal<>();
        store.onSettled = version::set;
        int thread = t;
        writers.add(pool.submit(() -> {
          Random random = new Random(thread * 7919L);
          for (int i = 0; i < OPS_PER_THREAD; i++) {
            String x = known.get(random.nextInt(known.size()));
            String y = known.get(random.nextInt(known.size()));
            int kind = random.nextInt(100);
            String what;
            Consumer<TreeStore> op;
            if (kind < 45) {
              String id = "t" + thread + "-" + i;
              Position p = Fixtures.position(random.nextInt(6), y);
              what = "insert " + id + " at " + p;
              op = s -> s.insert(id, p);
              known.add(id);
            } else if (kind < 92) {
              Position p = Fixtures.position(random.nextInt(6), y);
              what = "move " + x + " to " + p;
              op = s -> s.move(x, p);
            } else {
              what = "delete " + x;
              op = s -> s.delete(x);
            }
            Class<?> outcome = null;
            try {
              op.accept(store);
            } catch (NodeNotFoundException | InvalidMoveException e) {
              outcome = e.getClass();
            }
            done.add(new Done(version.get(), what, op, outcome));
          }
          return null;
        }));
      }
      TreeStore reader = pattern.open(two.getDatabase(db).getCollection(name));
      List<Tree> seen = new CopyOnWriteArrayList<>();
      Future<?> reading = pool.submit(() -> {
        while (writing.get()) {
          List<Problem> problems = reader.check();
          if (!problems.isEmpty()) {
            readerFailures.add(problems.toString());
          }
          seen.add(reader.snapshot());
        }
        return null;
      });
      for (Future<?> w : writers) {
        w.get();
      }
      writing.set(false);
      reading.get();
      pool.shutdown();

      assertEquals(List.of(), readerFailures, "reads during the run");
      TreeStore store = pattern.open(one.getDatabase(db).getCollection(name));
      assertEquals(List.of(), store.check());
      List<Done> ordered = new ArrayList<>(done);
      ordered.sort(Comparator.comparingLong(Done::version));
      assertEquals(THREADS * OPS_PER_THREAD, ordered.size());
      List<Done> succeeded = ordered.stream().filter(d -> d.outcome() == null).toList();
      assertEquals(succeeded.size(), succeeded.stream().mapToLong(Done::version).distinct().count(),
          "every change took effect at its own version");
      InMemoryTreeStore reference = new InMemoryTreeStore();
      reference.load(initial);
      java.util.Set<Tree> existed = new java.util.HashSet<>();
      existed.add(reference.snapshot());
      for (Done d : ordered) {
        Class<?> outcome = null;
        try {
          d.op().accept(reference);
        } catch (NodeNotFoundException | InvalidMoveException e) {
          outcome = e.getClass();
        }
        assertEquals(d.outcome(), outcome, () -> "outcome of " + d.what() + " (version "
            + d.version() + ")");
        existed.add(reference.snapshot());
      }
      assertEquals(reference.snapshot(), store.snapshot());
      // Every tree a reader saw during the run is one the serial replay went through.
      for (Tree t : seen) {
        assertTrue(existed.contains(t), () -> "a read returned a tree that never existed:\n" + t);
      }
      assertTrue(seen.size() >= 2, "reads during the run: " + seen.size());
      // Deletes remove whole subtrees, so later operations often name deleted nodes (how many
      // depends on the interleaving); the run must still have done real work.
      assertTrue(succeeded.size() >= 20, "operations that succeeded: " + succeeded.size());
    }
  }
}
