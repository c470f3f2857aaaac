package dev.arbor.mongo.internal.doctor;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.MongoTree;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * {@link Doctor}'s check of concurrent writers in one pattern: {@value #WRITERS} writers, each on
 * a client of its own, insert, move and delete at random on the {@linkplain
 * DoctorScript#fixture() fixture} for {@link #CONCURRENT_RUN} (at least {@value #MIN_OPS}
 * operations each). Each change records the lock version it settled at; replayed in that order
 * on {@link InMemoryTreeStore}, every operation must end as it did and the trees must be equal,
 * with {@code check()} empty.
 */
public final class DoctorConcurrentWriters {
  /** How long the concurrent writers run per pattern. */
  static final Duration CONCURRENT_RUN = Duration.ofMillis(400);
  /** Operations each writer makes at least, however long they take. */
  static final int MIN_OPS = 6;
  /** Writers of the concurrent run, each on a client of its own. */
  static final int WRITERS = 3;

  private static final org.slf4j.Logger QUIET = org.slf4j.helpers.NOPLogger.NOP_LOGGER;

  /** One operation of a writer as it ran: its lock version, what it did, how it ended. */
  private record Done(long version, String what, Consumer<TreeStore> op,
      @Nullable Class<?> outcome) {}

  private final DoctorScratch scratch;

  public DoctorConcurrentWriters(DoctorScratch scratch) {
    this.scratch = scratch;
  }

  /** Position number {@code kind} (0 to 5) relative to {@code anchor}. */
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

  /** The concurrent run in {@code pattern}, on the emptied scratch collection. */
  public DoctorVerdict run(TreePattern pattern) {
    MongoCollection<Document> c = scratch.fresh();
    Tree initial = DoctorScript.fixture();
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
        MongoCollection<Document> mine = scratch.collection(own);
        long[] version = new long[1];
        MongoTreeStore store = new MongoTreeStore(pattern, mine, ServerCapabilities.probing(mine)
            .log(QUIET).onSettled(v -> version[0] = v));
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

  /** How an operation ended, for a message. */
  private static String name(@Nullable Class<?> outcome) {
    return outcome == null ? "normally" : "with " + outcome.getSimpleName();
  }
}
