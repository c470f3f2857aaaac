package dev.arbor.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * The equivalence property: any sequence of inserts, moves, deletes and updates leaves a store in
 * the same state as the {@link InMemoryTreeStore} reference, step by step (every step's outcome
 * compared, the trees every {@link #checkEvery()} steps and at the end), and every read answers
 * the same. A store's test extends this class and returns fresh stores from {@link #newStore()}.
 *
 * <p>Operations are generated as small integers that index into the reference's current node list,
 * so every generated sequence is valid whatever came before it, and QuickTheories can shrink a
 * failing sequence to a short one by dropping and simplifying operations. A failure prints the
 * shrunk sequence. The number of sequences is {@link #examples()} (system property {@code
 * arbor.qt.examples} overrides it), each up to {@link #maxOperations()} long.
 */
public abstract class TreeStoreProperties {

  /** Returns a new, empty store; called once per generated sequence. */
  protected abstract TreeStore newStore();

  /** How many sequences to generate. */
  protected int examples() {
    return Integer.getInteger("arbor.qt.examples", 100);
  }

  /** The longest sequence generated. */
  protected int maxOperations() {
    return 80;
  }

  /**
   * Every how many steps of a sequence the store's snapshot is compared with the reference's and
   * {@link TreeStore#check()} is run; they are always compared after the last step, and every
   * step's outcome (and a delete's count) always is. 1 by default (system property {@code
   * arbor.qt.checkEvery} overrides it): a store whose snapshot and check cost round trips may
   * check less often, since a divergence stays in the store until the next comparison finds it,
   * and a failing sequence is then shrunk to the shortest that still ends in one.
   */
  protected int checkEvery() {
    return Integer.getInteger("arbor.qt.checkEvery", 1);
  }

  /**
   * Ids of inserted nodes are a counter between one of these prefixes and one of the suffixes, to
   * mix in hostile ids: path separators and regex metacharacters, ids that read as aggregation
   * field paths or variables, ids ending with an escape character.
   */
  private static final List<String> ID_PREFIXES =
      List.of("n", "a,", "\\", ".$", "^(", " ", "é", "n,\\,", "$", "$$ROOT.", "a-");
  private static final List<String> ID_SUFFIXES = List.of("", "", "\\", "-", ",");

  /**
   * The id of the {@code counter}-th inserted node; a subclass may give ids of another form (a
   * store of typed ids takes their canonical strings).
   */
  protected String nodeId(int counter) {
    return idFor(counter);
  }

  /** The default id of the {@code counter}-th inserted node. */
  private static String idFor(int counter) {
    return ID_PREFIXES.get(counter % ID_PREFIXES.size()) + counter
        + ID_SUFFIXES.get(counter % ID_SUFFIXES.size());
  }

  /**
   * One generated step. {@code kind} picks the operation, {@code a} and {@code b} pick nodes by
   * index into the current preorder of the reference (modulo its size), {@code where} picks the
   * position kind.
   */
  public record Op(int kind, int a, int b, int where) {}

  static Gen<Op> ops() {
    return integers().between(0, 99).zip(integers().between(0, 999), integers().between(0, 999),
        integers().between(0, 5), Op::new);
  }

  /** What the generated sequences exercised, to prove they reach the interesting cases. */
  static final class Coverage {
    int sequences;
    int operations;
    int inserts;
    int subtreeMoves; // moves of a node with descendants that changed its parent
    int rootMoves; // moves to a root position
    int deepMoves; // moves of a node at depth >= 3 or to a parent at depth >= 3
    int refusedMoves; // moves into the node's own subtree
    int subtreeDeletes; // deletes that removed more than one node
    int updates;
    int lifts; // deletes that lifted children into the node's place
    int refusedDeletes; // leaf-only deletes of a node with children
    int maxDepth;

    @Override
    public String toString() {
      return sequences + " sequences, " + operations + " operations: " + inserts + " inserts, "
          + subtreeMoves + " subtree moves, " + rootMoves + " moves to root positions, "
          + deepMoves + " deep moves, " + refusedMoves + " refused moves, " + subtreeDeletes
          + " subtree deletes, " + lifts + " lifts, " + refusedDeletes + " refused deletes, "
          + updates + " updates, max depth " + maxDepth;
    }
  }

  /** Counts of the last run of {@link #equivalentToTheReference()}. */
  final Coverage coverage = new Coverage();

  @Test
  void equivalentToTheReference() {
    qt().withExamples(examples())
        .withShrinkCycles(200)
        .forAll(lists().of(ops()).ofSizeBetween(1, maxOperations()))
        .checkAssert(this::replay);
    System.out.println(getClass().getSimpleName() + ": " + coverage);
    if (examples() >= 50) {
      // The generator must reach the cases that break stores, or the property proves little.
      org.junit.jupiter.api.Assertions.assertTrue(coverage.subtreeMoves >= 20
          && coverage.rootMoves >= 20 && coverage.deepMoves >= 20 && coverage.refusedMoves >= 5
          && coverage.subtreeDeletes >= 10 && coverage.lifts >= 3 && coverage.maxDepth >= 5,
          coverage::toString);
    }
  }

  /**
   * Replays {@code ops} on a fresh store and a fresh reference, comparing every step's outcome,
   * and the trees every {@link #checkEvery()} steps and after the last.
   */
  protected void replay(List<Op> ops) {
    TreeStore store = newStore();
    store.ensureIndexes();
    InMemoryTreeStore reference = new InMemoryTreeStore();
    List<String> log = new ArrayList<>();
    int counter = 0;
    int steps = 0;
    coverage.sequences++;
    for (Op op : ops) {
      steps++;
      coverage.operations++;
      Tree before = reference.snapshot();
      List<String> ids = before.ids();
      Supplier<String> deepest = () -> before.entries().stream()
          .max(java.util.Comparator.comparingInt(Node::depth)).orElseThrow().id();
      String step = describe(op, ids, nodeId(counter), deepest);
      log.add(step);
      Supplier<String> where = () -> "after " + String.join("; ", log);
      Throwable expected = null;
      Throwable actual = null;
      if (op.kind() < 40 || ids.isEmpty()) { // insert
        String id = nodeId(counter);
        counter++;
        Position p = position(op.where(), ids, op.b(), deepest);
        Map<String, Object> attributes = counter % 3 == 0 ? Map.of("n", counter) : Map.of();
        coverage.inserts++;
        expected = attempt(() -> reference.insert(id, p, attributes));
        actual = attempt(() -> store.insert(id, p, attributes));
      } else if (op.kind() < 80) { // move
        String id = ids.get(op.a() % ids.size());
        Position p = position(op.where(), ids, op.b(), deepest);
        String parentBefore = reference.find(id).orElseThrow().parentId();
        int depthBefore = reference.depth(id);
        boolean hasChildren = !reference.children(id).isEmpty();
        expected = attempt(() -> reference.move(id, p));
        actual = attempt(() -> store.move(id, p));
        if (expected instanceof InvalidMoveException) {
          coverage.refusedMoves++;
        } else if (expected == null) {
          int depthAfter = reference.depth(id);
          if (hasChildren && !java.util.Objects.equals(parentBefore,
              reference.find(id).orElseThrow().parentId())) {
            coverage.subtreeMoves++;
          }
          if (p instanceof Position.Root) {
            coverage.rootMoves++;
          }
          if (depthBefore >= 3 || depthAfter >= 3) {
            coverage.deepMoves++;
          }
        }
      } else if (op.kind() < 90) { // delete
        String id = ids.get(op.a() % ids.size());
        long[] counts = new long[2];
        Deletion how = deletion(op);
        if (how == null) {
          expected = attempt(() -> counts[0] = reference.delete(id));
          actual = attempt(() -> counts[1] = store.delete(id));
        } else {
          boolean hasChildren = !reference.children(id).isEmpty();
          expected = attempt(() -> counts[0] = reference.delete(id, how));
          actual = attempt(() -> counts[1] = store.delete(id, how));
          if (how == Deletion.LIFT_CHILDREN && hasChildren) {
            coverage.lifts++;
          } else if (expected instanceof NodeHasChildrenException) {
            coverage.refusedDeletes++;
          }
        }
        assertEquals(counts[0], counts[1], () -> "delete count " + where.get());
        if (counts[0] > 1) {
          coverage.subtreeDeletes++;
        }
      } else if (op.kind() < 95) { // update
        String id = ids.get(op.a() % ids.size());
        Map<String, Object> set = update(op);
        coverage.updates++;
        expected = attempt(() -> reference.update(id, set));
        actual = attempt(() -> store.update(id, set));
      } else { // reads
        String x = ids.get(op.a() % ids.size());
        String y = ids.get(op.b() % ids.size());
        assertEquals(reference.descendants(x, op.where()), store.descendants(x, op.where()),
            () -> "descendants(" + x + ", " + op.where() + ") " + where.get());
        assertEquals(reference.isDescendant(x, y), store.isDescendant(x, y),
            () -> "isDescendant(" + x + ", " + y + ") " + where.get());
        assertEquals(reference.ancestors(x), store.ancestors(x),
            () -> "ancestors(" + x + ") " + where.get());
        TreeStoreContract.assertNodeReadsAgree(store, before, x);
      }
      Throwable got = actual;
      assertEquals(
          expected == null ? null : expected.getClass(),
          got == null ? null : got.getClass(),
          () -> "outcome " + where.get() + (got == null ? "" : ": " + got));
      Tree now = reference.snapshot();
      for (Node e : now.entries()) {
        coverage.maxDepth = Math.max(coverage.maxDepth, e.depth());
      }
      if (steps % checkEvery() == 0 || steps == ops.size()) {
        assertEquals(now, store.snapshot(), where);
        assertEquals(List.of(), store.check(), where);
      }
    }
    TreeStoreContract.assertReadsAgree(store, reference.snapshot());
  }

  private static String describe(Op op, List<String> ids, String newId,
      Supplier<String> deepest) {
    if (op.kind() < 40 || ids.isEmpty()) {
      return "insert " + newId + " at "
          + position(op.where(), ids, op.b(), deepest);
    } else if (op.kind() < 80) {
      return "move " + ids.get(op.a() % ids.size()) + " to "
          + position(op.where(), ids, op.b(), deepest);
    } else if (op.kind() < 90) {
      Deletion how = deletion(op);
      return "delete " + ids.get(op.a() % ids.size()) + (how == null ? "" : " " + how);
    } else if (op.kind() < 95) {
      return "update " + ids.get(op.a() % ids.size()) + " set " + update(op);
    }
    return "read " + ids.get(op.a() % ids.size());
  }

  /** How a delete deletes: {@code null} for {@link TreeStore#delete(String)}. */
  private static Deletion deletion(Op op) {
    return switch (op.where()) {
      case 4 -> Deletion.LIFT_CHILDREN;
      case 5 -> Deletion.LEAF_ONLY;
      default -> null;
    };
  }

  /** The attributes an update sets: a new value of {@code n} or {@code s}, or removes {@code n}. */
  private static Map<String, Object> update(Op op) {
    Map<String, Object> set = new java.util.LinkedHashMap<>();
    switch (op.where() % 3) {
      case 0 -> set.put("n", op.b());
      case 1 -> set.put("n", null);
      default -> {
        set.put("s", "v" + op.b());
        set.put("gone", null);
      }
    }
    return set;
  }

  private static Position position(int where, List<String> ids, int b,
      Supplier<String> deepest) {
    if (ids.isEmpty()) {
      return where % 2 == 0 ? Position.firstRoot() : Position.lastRoot();
    }
    // One anchor in three is the deepest node, so that sequences grow deep chains.
    String anchor = b % 3 == 0 ? deepest.get() : ids.get(b % ids.size());
    return Fixtures.position(where, anchor);
  }

  private static Throwable attempt(Runnable call) {
    try {
      call.run();
      return null;
    } catch (TreeException | IllegalArgumentException e) {
      return e;
    }
  }
}
