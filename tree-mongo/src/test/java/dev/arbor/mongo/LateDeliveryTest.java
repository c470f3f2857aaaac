package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every command of a change, lost on its way and delivered late at every later point of the
 * same change, after which another caller takes the change over: a systematic sweep of the kind
 * of fault that {@code LinearizabilityProcessesTest} found three times (a late undo journal, a
 * late replay's completion, a late lease), each a command whose sending reached the server after
 * its writer had sent it again and gone on.
 *
 * <p>The scene: holder H deletes {@code b} and stops right after its commit; caller A deletes
 * {@code a} (or moves, inserts, grafts: {@link Scene}), which first takes H over
 * (it completes H's journal: under the tree's lock, or as the heir of H's lane). A's command
 * number k is lost on its way (an I/O error) and reaches the server right after A's command
 * number k + d (or after A's change returned); then A pauses, and caller B inserts {@code x}
 * under the root, taking A over once A's lease has run out. For every k and d: H's delete is in
 * the tree (if its commit landed: a lane's may not, on a busy machine; H's outcome then tells),
 * A's outcome is the truth (returned or {@code COMMITTED}: its change is in the tree;
 * {@code NOT_APPLIED}: it is not), B's insert is in the tree, the tree is the reference with
 * exactly those changes, and {@code check()} finds nothing. Also with the order turned round:
 * B takes A over first and A's lost command lands once B's change is done. On the code before
 * the late completion's fix it fails (nested sets, the delete: command 2 delivered after 2
 * more), and on the code before the late undo's (nested sets, the graft: command 3 after 3 more).
 *
 * <p>By default nested sets (the delete and the graft, and the delete in the other order) and
 * parent references (the delete) on the embedded server, every change in line (no optimistic
 * claim: H's change in a lane on parent references), each command delivered 1, 2, 3, 4, 6, 9,
 * ... commands later; {@code -Darbor.lateDelivery.all=true} sweeps every later point, every
 * pattern, both orders, on both server behaviours, with optimistic changes and without; {@code
 * -Darbor.lateDelivery.patterns=NESTED_SETS,...} only those patterns.
 */
class LateDeliveryTest {
  private static final Tree FIXTURE = Tree.parse("r(a(b(c d) e) f(g) h)");
  private static final long LEASE = 30;
  private static final boolean ALL = Boolean.getBoolean("arbor.lateDelivery.all");

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void everyCommandDeliveredLateAtEveryLaterPointLeavesEveryOutcomeTrue(TreePattern pattern) {
    boolean all = ALL;
    String only = System.getProperty("arbor.lateDelivery.patterns");
    org.junit.jupiter.api.Assumptions.assumeTrue(only != null
        ? List.of(only.split(",")).contains(pattern.name())
        : all || pattern == TreePattern.NESTED_SETS || pattern == TreePattern.PARENT_REFERENCES,
        "-Darbor.lateDelivery.all=true or -Darbor.lateDelivery.patterns=" + pattern);
    for (boolean ordered : all ? new boolean[] {false, true} : new boolean[] {false}) {
      for (boolean optimistic : all ? new boolean[] {false, true} : new boolean[] {false}) {
        for (Scene scene : Scene.values()) {
          if (all || scene == Scene.DELETE
              || scene == Scene.GRAFT && pattern == TreePattern.NESTED_SETS) {
            sweep(scene, pattern, ordered, optimistic, false);
          }
          if (all || scene == Scene.DELETE && pattern == TreePattern.NESTED_SETS) {
            sweep(scene, pattern, ordered, optimistic, true);
          }
        }
      }
    }
  }

  /** What caller A does. */
  enum Scene {
    /** Deletes {@code a}, whose subtree held H's change: a journaled change. */
    DELETE(s -> s.delete("a"), t -> !t.contains("a")),
    /** Moves {@code e} under {@code f}: from the subtree H's change held, into another. */
    MOVE(s -> s.move("e", Position.lastChildOf("f")), t -> t.children("f").contains("e")),
    /** Inserts {@code y} under {@code a}: one document, without a journal on most patterns. */
    INSERT(s -> s.insert("y", Position.lastChildOf("a")), t -> t.contains("y")),
    /** Grafts {@code p(q s)} under {@code e}: an undo journal, inserts, then a commit. */
    GRAFT(s -> s.graft("e", Tree.parse("p(q s)")), t -> t.contains("p"));

    private final java.util.function.Consumer<TreeStore> change;
    private final java.util.function.Predicate<Tree> applied;

    Scene(java.util.function.Consumer<TreeStore> change,
        java.util.function.Predicate<Tree> applied) {
      this.change = change;
      this.applied = applied;
    }

    void apply(TreeStore s) {
      change.accept(s);
    }

    /** Whether the change is in {@code stored}. */
    boolean applied(Tree stored) {
      return applied.test(stored);
    }
  }

  /**
   * Every command k of A, delivered after every d more (until A ends first): before B takes A
   * over or, {@code afterTakeover}, once B's change is done.
   */
  private static void sweep(Scene scene, TreePattern pattern, boolean ordered,
      boolean optimistic, boolean afterTakeover) {
    int swept = 0;
    for (int k = 0; ; k++) {
      boolean reached = false;
      // every later point with -Darbor.lateDelivery.all=true, else 1, 2, 3, 4, 6, 9, 13, ...
      // commands later (a change's commit comes a few commands after what precedes it)
      for (int d = 1; ; d += ALL ? 1 : Math.max(1, d / 2)) {
        Run r = run(scene, pattern, ordered, optimistic, afterTakeover, k, d);
        swept++;
        reached |= r.lost;
        if (!r.lost || !r.deliveredInTheChange) {
          break; // no command k, or A ended before k + d: later points are the same
        }
      }
      if (!reached) {
        break;
      }
    }
    assertTrue(swept > 5, "the sweep ran: " + swept);
    System.out.println("LateDeliveryTest: " + scene + ", " + pattern + ", ordered " + ordered
        + ", optimistic " + optimistic + (afterTakeover ? ", after the takeover" : "") + ": "
        + swept + " runs");
  }

  /** What one run of the scene did. */
  private record Run(boolean lost, boolean deliveredInTheChange) {}

  private static Run run(Scene scene, TreePattern pattern, boolean ordered, boolean optimistic,
      boolean afterTakeover, int k, int d) {
    String where = scene + ", " + pattern + ", ordered " + ordered + ", optimistic " + optimistic
        + ", command " + k + " delivered after " + d + " more"
        + (afterTakeover ? " and after the takeover" : "");
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    pattern.open(c).load(FIXTURE);
    StoppedHolder h = StoppedHolder.deleting(pattern, c, capabilities(c, optimistic), "b",
        where);
    TreeStore b = pattern.open(c, capabilities(c, optimistic));
    LateSender sender = new LateSender(k, d, b, afterTakeover);
    TreeStore a = pattern.open(c, capabilities(c, optimistic).sender(sender));
    Outcome outcome = null;
    boolean returned = false;
    try {
      try {
        scene.apply(a);
        returned = true;
      } catch (ChangeInterruptedException e) {
        outcome = e.outcome();
      }
      if (sender.lost != null && !sender.delivered) {
        sender.deliver(); // after the change ended
      }
    } finally {
      h.resume();
    }
    if (!sender.bInserted) {
      b.insert("x", Position.lastChildOf("r"));
    }
    Tree stored = pattern.open(c).snapshot();
    assertEquals(List.of(), pattern.open(c).check(), where);
    boolean deleted = !stored.contains("b");
    Object held = h.outcome.get();
    if (h.committed) {
      assertTrue(deleted, "the holder's committed delete: " + held + ", " + where);
    }
    if (held instanceof ChangeInterruptedException e) {
      assertTrue(deleted || e.outcome() != Outcome.COMMITTED, "the holder's delete said "
          + e.outcome() + ", yet b is in the tree: " + where);
      assertTrue(!deleted || e.outcome() != Outcome.NOT_APPLIED, "the holder's delete said"
          + " NOT_APPLIED, yet b is gone: " + where);
    } else if (held instanceof LockLostException) {
      assertFalse(deleted, "the holder's delete said its lock was lost, yet b is gone: " + where);
    } else {
      assertTrue(held instanceof Long && deleted, "the holder's delete returned " + held
          + (deleted ? "" : ", yet b is in the tree") + ": " + where);
    }
    boolean applied = scene.applied(stored);
    assertTrue(applied || !returned && outcome != Outcome.COMMITTED, "A's change "
        + (returned ? "returned" : "said " + outcome) + ", yet it is not in the tree: " + where);
    assertTrue(!applied || outcome != Outcome.NOT_APPLIED, "A's change said NOT_APPLIED, yet it"
        + " is in the tree: " + where);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(FIXTURE);
    if (deleted) {
      expected.delete("b");
    }
    if (applied) {
      scene.apply(expected);
    }
    expected.insert("x", Position.lastChildOf("r"));
    assertEquals(expected.snapshot(), stored, where);
    return new Run(sender.lost != null, sender.deliveredInTheChange);
  }

  /**
   * Loses command {@code k} of its caller on its way and delivers it right after command {@code
   * k + d} landed; then the other caller takes over (it waits out this caller's lease: this
   * caller is held in its sender meanwhile), or, {@code afterTakeover}, the other caller takes
   * over first and the lost command arrives once its change is done.
   */
  private static final class LateSender implements TreeLock.Sender {
    private final int k;
    private final int d;
    private final TreeStore other;
    private final boolean afterTakeover;
    private int sent;
    @Nullable Supplier<?> lost;
    boolean delivered;
    boolean deliveredInTheChange;
    boolean bInserted;

    LateSender(int k, int d, TreeStore other, boolean afterTakeover) {
      this.k = k;
      this.d = d;
      this.other = other;
      this.afterTakeover = afterTakeover;
    }

    private <T> T command(Supplier<T> command) {
      int n = sent++;
      if (n == k) {
        lost = command;
        throw new MongoSocketWriteException("injected: the connection was cut after the command"
            + " left", new ServerAddress("127.0.0.1", 1), null);
      }
      T answer = command.get();
      if (lost != null && !delivered && n == k + d) {
        deliveredInTheChange = true;
        deliver();
      }
      return answer;
    }

    /** Delivers the lost command and has the other caller take over, in the order asked. */
    void deliver() {
      delivered = true;
      if (afterTakeover) {
        other.insert("x", Position.lastChildOf("r"));
        bInserted = true;
      }
      try {
        lost.get();
      } catch (MongoException e) {
        // refused late: a fence taken, a key met
      }
      if (!afterTakeover) {
        other.insert("x", Position.lastChildOf("r"));
        bInserted = true;
      }
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
      return command(() -> TreeLock.BULK.send(coll, batch));
    }

    @Override
    public BsonDocument fence(MongoCollection<BsonDocument> coll, Bson filter, Bson update) {
      return command(() -> TreeLock.Sender.super.fence(coll, filter, update));
    }

    @Override
    public @Nullable BsonDocument exchange(MongoCollection<BsonDocument> coll, Bson filter,
        Bson update, FindOneAndUpdateOptions options) {
      return command(() -> TreeLock.Sender.super.exchange(coll, filter, update, options));
    }
  }

  private static ServerCapabilities capabilities(MongoCollection<Document> c,
      boolean optimistic) {
    return ServerCapabilities.probing(c).lease(LEASE, 20_000).keepAlive(false)
        .optimisticChanges(optimistic);
  }
}
