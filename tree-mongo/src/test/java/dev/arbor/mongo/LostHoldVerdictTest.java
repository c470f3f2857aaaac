package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A change planned under the tree's lock gives its planner's verdict (no such node, a cycle,
 * numbers that do not nest) only if the lock was still its own once the verdict was reached: a
 * holder slower than its lease may have been taken over while it read, and its reads then met
 * another holder's change half-way, a tree that never existed. It is told {@link
 * LockLostException} instead (nothing of it was written), as a change planned optimistically or in
 * a lane already was. Before, the verdict stood: under load (the suite's classes side by side,
 * stop 59), {@code ConcurrencyTest}'s nested-set holders slower than their 100 ms lease were told
 * "its interval [8, 17] holds 4 nodes where 5 fit: the nested-set numbers overlap" of a sound
 * tree.
 */
class LostHoldVerdictTest {
  private static final long LEASE = 150;

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aVerdictReachedAfterTheLockWasTakenOverIsToldLockLost(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Tree initial = Tree.parse("r(a b)");
    pattern.open(c).load(initial);
    MongoTreeStore slow = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).keepAlive(false) // a paused process: nothing renews its lease
        .subtreeLocks(false));
    TreeStore other = pattern.open(c);
    slow.forget(); // no quiet version known: planned under the lock
    assertThrows(LockLostException.class, () -> slow.change("probe", null, null, change -> {
      sleep(3 * LEASE); // its lease runs out by the server's clock
      other.insert("x", Position.lastChildOf("a")); // takes the expired lock over
      throw new TreeException("a verdict on what it read");
    }));
    assertEquals(Tree.parse("r(a(x) b)"), other.snapshot());
    assertEquals(java.util.List.of(), other.check());

    // a no-op (a move to where the node is) is a verdict too
    slow.forget();
    assertThrows(LockLostException.class, () -> slow.change("probe", null, null, change -> {
      sleep(3 * LEASE);
      other.insert("y", Position.lastChildOf("b"));
    }));
    assertEquals(Tree.parse("r(a(x) b(y))"), other.snapshot());
    slow.move("x", Position.lastChildOf("b")); // the slow store's next change is its own
    assertEquals(Tree.parse("r(a b(y x))"), other.snapshot());
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
