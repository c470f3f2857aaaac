package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Tree;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every script, run and then undone on the in-memory reference store, leaves the tree exactly as
 * generated (the "fresh state per invocation" the measurements rely on), and actually changed it
 * in between when it writes.
 */
class ScriptTest {

  @ParameterizedTest
  @EnumSource(Shape.class)
  void operationsAreUndoneExactly(Shape shape) {
    Tree tree = shape.generate(500, 42);
    TreeFacts f = new TreeFacts(tree);
    Subjects s = Subjects.choose(f, 42);
    for (Operation op : Operation.values()) {
      if (op == Operation.LOAD) {
        continue;
      }
      Script script = Script.of(op, f, s);
      InMemoryTreeStore store = load(tree);
      long result = script.run(store);
      assertEquals(!op.read(), !store.snapshot().equals(tree), op + " changes the tree");
      if (op.read()) {
        assertEquals(op == Operation.ANCESTORS ? f.depth[s.deepLeaf()] : result, result);
        assertFalse(script.mutates());
        assertEquals(op.baseline(), script.read() != null, op.toString());
      } else if (script.needsReload()) {
        continue; // the runner reloads
      }
      script.undo(store);
      assertEquals(tree, store.snapshot(), op + " on " + shape + " is undone exactly");
    }
  }

  static java.util.List<Workload> workloads() {
    return java.util.List.of(Workload.BROWSE, Workload.BALANCED, Workload.REORGANISE,
        Workload.mix("33/67"));
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.MethodSource("workloads")
  void workloadsAreUndoneExactly(Workload workload) {
    for (Shape shape : Shape.values()) {
      Tree tree = shape.generate(400, 42);
      Script script = Script.of(workload, new TreeFacts(tree), 42);
      assertEquals(workload.steps(), script.length());
      InMemoryTreeStore store = load(tree);
      script.run(store);
      if (workload != Workload.BROWSE) {
        assertNotEquals(tree, store.snapshot(), workload + " on " + shape + " writes");
      }
      script.undo(store);
      assertEquals(tree, store.snapshot(), workload + " on " + shape + " is undone exactly");
      // The same script runs again from the same state: invocations are repeatable.
      script.run(store);
      script.undo(store);
      assertEquals(tree, store.snapshot());
    }
  }

  private static InMemoryTreeStore load(Tree tree) {
    InMemoryTreeStore store = new InMemoryTreeStore();
    store.load(tree);
    return store;
  }
}
