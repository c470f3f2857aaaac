package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The first command carrying a change's steps is cut off (its sender sees an I/O error and sends
 * it again, which lands), and reaches the server only after the change returned, its lock or lane
 * was released, and a second writer's change rewrote the node: still within the first change's
 * lease, which only bounds how late a command may run after its holder stopped renewing, not
 * after it released. Nothing of the late command may apply. Before, a step that sets absolute
 * values on one node (a move's new parent, path or ancestors) was sent unguarded, as running it
 * twice changes nothing: run late, it put the node back where the first change had moved it and
 * undid the second change, which had returned; on nested sets it also reset the node's mark, so
 * that the second change's next step, sent again, shifted the node twice (the flaky-network run
 * of {@code LinearizabilityTest} found that: a node whose left passed its right).
 */
class LateStepAfterReleaseTest {
  private static final String FIXTURE = "a(b(c d) e) f(g)";

  static List<Arguments> cases() {
    List<Arguments> cases = new java.util.ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      cases.add(Arguments.of(pattern, false));
      if (pattern != TreePattern.NESTED_SETS) {
        cases.add(Arguments.of(pattern, true));
      }
    }
    return cases;
  }

  /** Holds back the first command that carries a step, until {@link #deliver()}. */
  static final class HeldCommand implements TreeLock.Sender {
    private final AtomicBoolean armed = new AtomicBoolean(true);
    private final AtomicReference<Runnable> held = new AtomicReference<>();

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
      if (batch.statements().stream().anyMatch(TreeLock.Statement::isStep)
          && armed.getAndSet(false)) {
        held.set(() -> {
          try {
            TreeLock.BULK.send(c, batch);
          } catch (MongoException e) {
            // refused: a fence taken, a key met
          }
        });
        throw new MongoSocketReadException("injected: the connection was cut after the command"
            + " left", new ServerAddress("127.0.0.1", 1));
      }
      return TreeLock.BULK.send(c, batch);
    }

    /** The held command reaches the server now. */
    void deliver() {
      Runnable r = held.getAndSet(null);
      if (r != null) {
        r.run();
      }
    }
  }

  @ParameterizedTest(name = "{0}, lanes {1}")
  @MethodSource("cases")
  void aMovesStepArrivingAfterTheNextChangeChangesNothing(TreePattern pattern, boolean lanes) {
    run(pattern, lanes, s -> s.move("c", Position.lastChildOf("f")),
        s -> s.move("c", Position.lastChildOf("e")));
  }

  /** The same with a subtree: the late step of the first move would move it back. */
  @ParameterizedTest(name = "{0}, lanes {1}")
  @MethodSource("cases")
  void aSubtreeMovesStepArrivingAfterTheNextChangeChangesNothing(TreePattern pattern,
      boolean lanes) {
    run(pattern, lanes, s -> s.move("b", Position.lastChildOf("f")),
        s -> s.move("b", Position.firstChildOf("g")));
  }

  private static void run(TreePattern pattern, boolean lanes, Consumer<TreeStore> first,
      Consumer<TreeStore> second) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Tree fixture = Tree.parse(FIXTURE);
    SwitchableSender sender = new SwitchableSender();
    // a lease far longer than the test: the late command arrives within it
    TreeStore writer = pattern.open(c, ServerCapabilities.probing(c).lease(20_000, 60_000)
        .subtreeLocks(lanes).sender(sender));
    writer.load(fixture);
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(20_000, 60_000)
        .subtreeLocks(lanes));
    HeldCommand held = new HeldCommand();
    sender.target = held;
    first.accept(writer); // its first command is cut off, sent again, and lands
    sender.target = TreeLock.BULK;
    second.accept(other);
    held.deliver();
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    first.accept(expected);
    second.accept(expected);
    assertEquals(List.of(), pattern.open(c).check());
    assertEquals(expected.snapshot(), pattern.open(c).snapshot(),
        "the first change's late command undid the second");
  }
}
