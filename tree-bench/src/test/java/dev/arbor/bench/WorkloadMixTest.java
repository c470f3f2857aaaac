package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every workload's realised mix is its label, on every shape and size: the calls a script makes
 * on a store, counted as they are made, are exactly the stated share of reads.
 */
class WorkloadMixTest {
  private static final Set<String> READS = Set.of("children", "ancestors", "descendants");
  private static final Set<String> EDITS = Set.of("insert", "move", "delete");

  static List<Workload> workloads() {
    List<Workload> all = new ArrayList<>(Workload.BUILT_IN);
    for (String mix : List.of("70/30", "33/67", "0/100", "100/0", "1/99")) {
      all.add(Workload.mix(mix));
    }
    return all;
  }

  @ParameterizedTest
  @MethodSource("workloads")
  void theRealisedShareOfReadsIsTheLabelOnEveryShapeAndSize(Workload workload) {
    for (Shape shape : Shape.values()) {
      for (int size : List.of(10, 30, 300, 1_000)) {
        Tree tree = shape.generate(size, 42);
        Script script = Script.of(workload, new TreeFacts(tree), 7);
        int[] calls = new int[2]; // reads, edits
        script.run(counting(tree, calls));
        String where = workload.name() + " on " + shape + " at " + size;
        assertEquals(workload.steps(), calls[0] + calls[1], where);
        assertEquals(workload.readPercent() * (calls[0] + calls[1]), 100 * calls[0],
            where + ": " + calls[0] + " reads, " + calls[1] + " edits");
        assertEquals(calls[0], script.reads(), where);
        assertTrue(script.subject().startsWith(workload.steps() + " ops, " + calls[0] + " reads"
            + " and " + calls[1] + " edits:"), script.subject());
      }
    }
  }

  @Test
  void theLengthIsTheShortestFromTwentyThatHoldsTheRatio() {
    assertEquals(20, Workload.BROWSE.steps());
    assertEquals(19, Workload.BROWSE.readSteps());
    assertEquals(10, Workload.BALANCED.readSteps());
    assertEquals(4, Workload.REORGANISE.readSteps());
    assertEquals(20, Workload.mix("70/30").steps());
    assertEquals(100, Workload.mix("33/67").steps());
    assertEquals("your mix 70/30", Workload.mix("70/30").description());
    assertEquals("read-heavy browsing 95/5", Workload.BROWSE.description());
  }

  @Test
  void mixesAreParsedAndMalformedOnesNamed() {
    assertEquals(List.of(Workload.mix("70/30")), Workload.parse(null, List.of("70/30")));
    assertEquals(List.of(Workload.BROWSE, Workload.mix("70/30")),
        Workload.parse(List.of("browse"), List.of(" 70 / 30 ")));
    assertEquals(Workload.BUILT_IN, Workload.parse(null, null));
    for (String bad : List.of("70", "70/20", "a/b", "-10/110", "70/30/0")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Workload.mix(bad));
      assertTrue(e.getMessage().startsWith("invalid --mix '" + bad + "'"), e.getMessage());
    }
  }

  /** The reference store over {@code tree}, counting the reads and edits called on it. */
  private static TreeStore counting(Tree tree, int[] calls) {
    InMemoryTreeStore store = new InMemoryTreeStore();
    store.load(tree);
    return (TreeStore) Proxy.newProxyInstance(TreeStore.class.getClassLoader(),
        new Class<?>[] {TreeStore.class}, (proxy, method, args) -> {
          if (READS.contains(method.getName())) {
            calls[0]++;
          } else if (EDITS.contains(method.getName())) {
            calls[1]++;
          }
          try {
            return method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }
}
