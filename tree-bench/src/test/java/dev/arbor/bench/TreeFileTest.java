package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import dev.arbor.mongo.TreePattern;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tree of {@code --tree}: its profile, the files it refuses, and the benchmark's scripts on
 * trees no generated shape makes (forests, a single node, ids the benchmark's own new nodes would
 * take), run and undone exactly on the in-memory reference.
 */
class TreeFileTest {
  private static final List<TreePattern> ALL = List.of(TreePattern.values());

  @TempDir
  Path dir;

  /** The repository's example: Books > Programming > {Languages, Databases > {MongoDB, dbm}}. */
  static Path categories() {
    return Path.of("..", "examples", "categories.json");
  }

  @Test
  void theProfileOfTheExampleTree() {
    TreeFile file = TreeFile.read(categories(), ALL);
    TreeFacts.Profile p = file.profile();
    assertEquals(new TreeFacts.Profile(6, 1, 3, 3, 11 / 6.0, 2, 5 / 3.0), p);
    assertEquals("6 nodes, 1 root, 3 leaves; depth max 3, mean 1.83 (roots at 0); fan-out max 2,"
        + " mean 1.67 children per inner node", p.describe());
    assertEquals("categories.json", file.label());
    assertEquals(6, file.size());
    assertEquals(file.tree(6, 1), file.tree(6, 2), "the seed does not change a file's tree");
  }

  @Test
  void aForestOfLeavesHasNoFanOut() {
    TreeFacts.Profile p = new TreeFacts(Tree.parse("a\nb\nc")).profile();
    assertEquals(new TreeFacts.Profile(3, 3, 3, 0, 0, 0, 0), p);
    assertTrue(p.describe().startsWith("3 nodes, 3 roots, 3 leaves; depth max 0"), p.describe());
  }

  @Test
  void refusesWhatCannotBeMeasuredInOneLineNamingTheFile() throws Exception {
    Path missing = dir.resolve("missing.json");
    assertEquals("cannot read --tree " + missing + ": no such file: " + missing,
        refusal(missing, ALL));
    Path empty = write("empty.json", "[]");
    assertEquals("--tree " + empty + " holds no node (an empty array): there is nothing to"
        + " measure", refusal(empty, ALL));
    Path malformed = write("malformed.json", "[\n  {\"id\": \"a\", \"kids\": []}\n]");
    assertEquals("--tree " + malformed + ": line 2, column 15: unknown field 'kids' in node 'a'"
        + " (a node has only 'id', 'attributes' and 'children')", refusal(malformed, ALL));
    Path reserved = write("reserved.json", "[{\"id\": \"a\", \"attributes\": {\"left\": 1}}]");
    String message = refusal(reserved, ALL);
    assertTrue(message.startsWith("--tree " + reserved + ": line 1, column "), message);
    assertTrue(message.contains("attribute 'left' of node 'a': reserved by nested-sets"), message);
    assertTrue(message.endsWith("(--patterns can leave nested-sets out)"), message);
    assertEquals(1, TreeFile.read(reserved, List.of(TreePattern.PARENT_REFERENCES)).size(),
        "the other patterns hold it");
  }

  private static String refusal(Path file, List<TreePattern> patterns) {
    return assertThrows(TreeFile.Unusable.class, () -> TreeFile.read(file, patterns))
        .getMessage();
  }

  private Path write(String name, String json) throws Exception {
    return Files.writeString(dir.resolve(name), json);
  }

  static List<Tree> oddTrees() throws Exception {
    return List.of(
        TreeJson.read(Files.newInputStream(categories())),
        Tree.parse("a"),
        Tree.parse("a\nb\nc"),
        Tree.parse("a\n  b\nc\n  d\n    e"),
        // the ids the benchmark gives the nodes it inserts: it must pick others
        Tree.builder().add("bench-new", null).add("bench-w1", "bench-new")
            .add("bench2-x", "bench-new").add("x", null, Map.of("name", "x")).build());
  }

  @ParameterizedTest
  @MethodSource("oddTrees")
  void everyScriptRunsAndIsUndoneExactlyOnTreesNoShapeMakes(Tree tree) {
    TreeFacts f = new TreeFacts(tree);
    Subjects s = Subjects.choose(f, 42);
    for (Operation op : Operation.values()) {
      if (op == Operation.LOAD) {
        continue;
      }
      Script script = Script.of(op, f, s);
      InMemoryTreeStore store = load(tree);
      script.run(store);
      if (script.needsReload()) {
        continue;
      }
      script.undo(store);
      assertEquals(tree, store.snapshot(), op + " on " + tree + " is undone exactly");
    }
    for (Workload w : Workload.BUILT_IN) {
      Script script = Script.of(w, f, 42);
      assertEquals(w.steps(), script.length());
      InMemoryTreeStore store = load(tree);
      script.run(store);
      script.undo(store);
      assertEquals(tree, store.snapshot(), w.name() + " on " + tree + " is undone exactly");
    }
  }

  @Test
  void newNodesTakeIdsTheTreeDoesNotHave() {
    assertEquals("bench-", new TreeFacts(Shape.RANDOM.generate(50, 42)).newIdPrefix());
    TreeFacts f = new TreeFacts(Tree.builder().add("bench-new", null).add("bench2-", null)
        .build());
    assertEquals("bench3-", f.newIdPrefix());
    assertFalse(Script.of(Operation.INSERT_LEAF, f, Subjects.choose(f, 42)).subject().isEmpty());
  }

  private static InMemoryTreeStore load(Tree tree) {
    InMemoryTreeStore store = new InMemoryTreeStore();
    store.load(tree);
    return store;
  }
}
