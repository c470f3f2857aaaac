package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The checker the linearizability tests rest on ({@link Linearizability}), on small histories
 * written by hand: it accepts those that one order consistent with real time explains, and
 * refuses each kind of history it must refuse (a read that missed a change that had returned, a
 * stored tree without a change that returned or was told committed, a change told not applied
 * that took effect, an order against real time). Reads are replayed without copying the state
 * they read, so several of these histories mix reads and changes.
 */
class LinearizabilityCheckerTest {
  private static final Tree INITIAL = Tree.parse("a(b c)");

  private final List<Linearizability.Call> calls = new ArrayList<>();

  /** A change of process {@code p} that ran from {@code start} to {@code end} and returned. */
  private Linearizability.Call change(int p, String what, Function<TreeStore, @Nullable Object> op,
      long start, long end) {
    Linearizability.Call c = new Linearizability.Call(p, what, op, start);
    c.end = end;
    calls.add(c);
    return c;
  }

  /** A read of process {@code p} that ran from {@code start} to {@code end} and returned it. */
  private void read(int p, String what, Function<TreeStore, @Nullable Object> op, long start,
      long end, @Nullable Object returned) {
    Linearizability.Call c = new Linearizability.Call(p, what, op, true, start);
    c.end = end;
    c.result = returned;
    calls.add(c);
  }

  private static Function<TreeStore, @Nullable Object> insert(String id, String parent) {
    return s -> {
      s.insert(id, Position.lastChildOf(parent));
      return null;
    };
  }

  private static Function<TreeStore, @Nullable Object> move(String id, String parent) {
    return s -> {
      s.move(id, Position.lastChildOf(parent));
      return null;
    };
  }

  private @Nullable String check(String stored) {
    return Linearizability.check(INITIAL, calls, Tree.parse(stored));
  }

  /**
   * A long history is decided, not overflowed: a reader's 30 000 reads beside changes of two
   * processes (stop 60: a stress run whose writers stalled for minutes while the reader read
   * every 20 ms ended in a {@code StackOverflowError} of the recursive search).
   */
  @Test
  void aHistoryOfThirtyThousandReadsIsDecided() {
    change(0, "insert x", insert("x", "b"), 0, 10);
    for (int i = 0; i < 30_000; i++) {
      long t = 20 + 2L * i;
      read(1, "children b", s -> s.children("b"), t, t + 1, List.of("x"));
    }
    change(2, "move x", move("x", "c"), 60_100, 60_200);
    assertNull(check("a(b c(x))"));
  }

  @Test
  void aReadAfterAChangeReturnedMustSeeIt() {
    change(0, "insert x", insert("x", "b"), 0, 10);
    read(1, "children b", s -> s.children("b"), 20, 30, List.of());
    assertNotNull(check("a(b(x) c)"), "a read that began after the insert returned missed it");
  }

  @Test
  void aReadBesideAChangeMaySeeItOrNot() {
    change(0, "insert x", insert("x", "b"), 0, 30);
    read(1, "children b", s -> s.children("b"), 10, 20, List.of());
    read(1, "children b", s -> s.children("b"), 21, 25, List.of("x"));
    assertNull(check("a(b(x) c)"));
  }

  @Test
  void readsSeeOneOrder() {
    change(0, "insert x", insert("x", "b"), 0, 100);
    read(1, "children b", s -> s.children("b"), 10, 20, List.of("x"));
    read(1, "children b", s -> s.children("b"), 30, 40, List.of());
    assertNotNull(check("a(b(x) c)"), "the second read cannot see the insert undone");
  }

  @Test
  void aWholeTreeReadIsComparedWhole() {
    change(0, "move b", move("b", "c"), 0, 10);
    read(1, "snapshot", TreeStore::snapshot, 20, 30, Tree.parse("a(b c)"));
    assertNotNull(check("a(c(b))"));
    calls.clear();
    change(0, "move b", move("b", "c"), 0, 10);
    read(1, "snapshot", TreeStore::snapshot, 20, 30, Tree.parse("a(c(b))"));
    assertNull(check("a(c(b))"));
  }

  @Test
  void theStoredTreeMustHoldEveryChangeThatReturned() {
    change(0, "insert x", insert("x", "b"), 0, 10);
    change(1, "insert y", insert("y", "c"), 5, 15);
    assertNull(check("a(b(x) c(y))"));
    assertNotNull(check("a(b(x) c)"), "insert y returned and is not stored");
  }

  @Test
  void realTimeOrdersChangesThatDoNotOverlap() {
    change(0, "move b under c", move("b", "c"), 0, 10);
    change(1, "move c under b", s -> {
      s.move("c", Position.lastChildOf("b"));
      return null;
    }, 20, 30).thrown = new InvalidMoveException("c", Position.lastChildOf("b"));
    // Only the order "c under b, then b under c (refused: a cycle)" would store c under b.
    assertNotNull(check("a(b(c))"));
  }

  @Test
  void outcomesOfInterruptedChanges() {
    change(0, "insert x", insert("x", "b"), 0, 10).thrown = interrupted(
        ChangeInterruptedException.Outcome.NOT_APPLIED);
    assertNull(check("a(b c)"));
    assertNotNull(check("a(b(x) c)"), "told not applied, and applied");
    calls.clear();
    change(0, "insert x", insert("x", "b"), 0, 10).thrown = interrupted(
        ChangeInterruptedException.Outcome.COMMITTED);
    assertNull(check("a(b(x) c)"));
    assertNotNull(check("a(b c)"), "told committed, and not applied");
    calls.clear();
    change(0, "insert x", insert("x", "b"), 0, 10).thrown = interrupted(
        ChangeInterruptedException.Outcome.UNKNOWN);
    assertNull(check("a(b(x) c)"));
    assertNull(check("a(b c)"));
  }

  @Test
  void aDomainExceptionMustBeExplained() {
    change(0, "move z", move("z", "b"), 0, 10).thrown = new NodeNotFoundException("z");
    assertNull(check("a(b c)"));
    calls.clear();
    change(0, "move c", move("c", "b"), 0, 10).thrown = new NodeNotFoundException("c");
    assertNotNull(check("a(b c)"), "c exists: no order makes that move fail so");
  }

  /**
   * Reads beside changes whose only order is the last one the search tries: the search places
   * each read as soon as its answer is explained, instead of trying every way to interleave the
   * reads with the changes (2^25 here: before, the check gave up, "history too large").
   */
  @Test
  void readsBesideChangesAreNotInterleavedEveryWay() {
    threeInsertsUnderB();
    for (int r = 0; r < 25; r++) {
      read(3, "children a", s -> s.children("a"), 1 + r, 999 - r, List.of("b", "c"));
    }
    assertNull(check("a(b(z y x) c)"));
    // a read no order explains is still found
    read(4, "children b", s -> s.children("b"), 500, 600, List.of("y", "x"));
    assertNotNull(check("a(b(z y x) c)"));
  }

  /** Refused changes beside others are placed as reads are, and still must be explained. */
  @Test
  void refusedChangesBesideChangesAreNotInterleavedEveryWay() {
    threeInsertsUnderB();
    for (int r = 0; r < 25; r++) {
      change(3, "move q", move("q", "b"), 1 + r, 999 - r).thrown = new NodeNotFoundException("q");
    }
    assertNull(check("a(b(z y x) c)"));
    change(4, "move c", move("c", "b"), 500, 600).thrown = new NodeNotFoundException("c");
    assertNotNull(check("a(b(z y x) c)"), "c exists in every state");
  }

  /** Three inserts under b side by side, whose only order for the tree a(b(z y x) c) is z, y, x. */
  private void threeInsertsUnderB() {
    change(0, "insert x", insert("x", "b"), 0, 1_000);
    change(1, "insert y", insert("y", "b"), 0, 1_000);
    change(2, "insert z", insert("z", "b"), 0, 1_000);
  }

  private static ChangeInterruptedException interrupted(ChangeInterruptedException.Outcome o) {
    return new ChangeInterruptedException("cut", o, null);
  }
}
