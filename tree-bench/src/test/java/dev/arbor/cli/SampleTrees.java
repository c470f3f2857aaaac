package dev.arbor.cli;

import dev.arbor.core.Fixtures;
import dev.arbor.core.Tree;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** Trees for the round-trip and conversion tests: mixed shapes, every attribute type. */
final class SampleTrees {
  private SampleTrees() {}

  /**
   * A forest of {@code size} nodes from a fixed seed: several roots, a chain {@code chain} levels
   * deep, wide and narrow parents, the hostile ids of the core fixtures, and attributes of every
   * type the JSON format keeps (ints, small and large longs, doubles, booleans, null, strings,
   * nested maps and lists) on most nodes.
   */
  static Tree mixed(long seed, int size, int chain) {
    Random random = new Random(seed);
    Tree.Builder builder = Tree.builder();
    List<String> ids = new ArrayList<>();
    String parent = null;
    for (int i = 0; i < chain; i++) {
      String id = "chain-" + i;
      builder.add(id, parent, attributes(random, i));
      ids.add(id);
      parent = id;
    }
    List<String> hostile = Fixtures.HOSTILE_IDS;
    for (int i = 0; ids.size() < size; i++) {
      String id = i < hostile.size() ? hostile.get(i) : "n" + i;
      String p = random.nextInt(10) == 0 || ids.isEmpty() ? null
          : ids.get(random.nextInt(ids.size()));
      builder.add(id, p, random.nextInt(5) == 0 ? Map.of() : attributes(random, i));
      ids.add(id);
    }
    return builder.build();
  }

  static Map<String, Object> attributes(Random random, int i) {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("name", "node " + i + " \u00e9\u65e5 \"q\"");
    a.put("count", random.nextInt(1000) - 500);
    if (random.nextBoolean()) {
      a.put("small", (long) random.nextInt(100));
      a.put("big", 1L << 40 | random.nextInt(1000));
    }
    a.put("ratio", random.nextDouble() * (random.nextBoolean() ? 1e-5 : 1e9));
    a.put("whole", (double) random.nextInt(10));
    a.put("flag", random.nextBoolean());
    if (random.nextInt(3) == 0) {
      a.put("none", null);
    }
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("tags", List.of("t" + random.nextInt(5), "x"));
    meta.put("nested", Map.of("level", 2, "values", Arrays.asList(1, 2L, 3.5, null, true)));
    a.put("meta", meta);
    return a;
  }
}
