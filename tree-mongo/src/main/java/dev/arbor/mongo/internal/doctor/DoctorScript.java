package dev.arbor.mongo.internal.doctor;

import dev.arbor.core.Deletion;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What {@link Doctor}'s checks run: the fixture tree, with hostile ids among plain ones, and the
 * script of the contract's operations on it (every insert position, updates, moves, the three
 * deletions, grafts, and the refused forms of each), each with the ids whose reads are compared
 * after it.
 */
final class DoctorScript {
  private DoctorScript() {}

  /** One operation of the script, with the ids whose reads are compared after it. */
  record Op(String what, Consumer<TreeStore> run, List<String> focus) {}

  /** An operation comparing the reads of {@code focus} after it. */
  static Op op(String what, Consumer<TreeStore> run, String... focus) {
    return new Op(what, run, List.of(focus));
  }

  /** The fixture's hostile id: path separators and regex metacharacters. */
  static final String D = "d.$,/|\\(x)";

  /** The fixture: hostile ids among plain ones (path separators, regex metacharacters). */
  static Tree fixture() {
    return Tree.builder()
        .add("a", null, Map.of("title", "A", "n", 1))
        .add("b", "a").add("c", "b").add(D, "b").add("e", D).add("f", D)
        .add("g", "a").add("h", "g")
        .add("i", null, Map.of("tags", List.of("x", "y")))
        .add("j", "i").add("k", "i")
        .build();
  }

  /** The contract's operations, in order, on the {@link #fixture()}. */
  static List<Op> script() {
    return List.of(
        op("insert n1 firstRoot", s -> s.insert("n1", Position.firstRoot(),
            Map.of("title", "n1", "n", 1)), "n1"),
        op("insert n2 lastRoot", s -> s.insert("n2", Position.lastRoot()), "n2"),
        op("insert n3 firstChildOf(d)", s -> s.insert("n3", Position.firstChildOf(D)), "n3", D),
        op("insert n4 lastChildOf(b)", s -> s.insert("n4", Position.lastChildOf("b")), "n4", "b"),
        op("insert n5 before(c)", s -> s.insert("n5", Position.before("c")), "n5", "b"),
        op("insert n6 after(j)", s -> s.insert("n6", Position.after("j")), "n6", "i"),
        op("insert a again (refused)", s -> s.insert("a", Position.lastRoot()), "a"),
        op("insert under a missing node (refused)",
            s -> s.insert("n7", Position.lastChildOf("nope")), "a"),
        op("update n1", s -> s.update("n1", Map.of("title", "N1", "tags", List.of("p"))), "n1"),
        op("update n1 removing n", s -> s.update("n1", nullValue("n")), "n1"),
        op("move d lastChildOf(i)", s -> s.move(D, Position.lastChildOf("i")), D, "e", "i", "b"),
        op("move b firstRoot", s -> s.move("b", Position.firstRoot()), "b", "c", "a"),
        op("move h before(c)", s -> s.move("h", Position.before("c")), "h", "b", "g"),
        op("move i into its own subtree (refused)", s -> s.move("i", Position.firstChildOf("f")),
            "i", "f"),
        op("move g after(k)", s -> s.move("g", Position.after("k")), "g", "i"),
        op("move c before(c) (no-op)", s -> s.move("c", Position.before("c")), "c"),
        op("move n2 firstChildOf(n1)", s -> s.move("n2", Position.firstChildOf("n1")), "n2",
            "n1"),
        op("move a lastRoot", s -> s.move("a", Position.lastRoot()), "a"),
        op("delete b leaf-only (refused)", s -> s.delete("b", Deletion.LEAF_ONLY), "b"),
        op("delete b lifting its children", s -> s.delete("b", Deletion.LIFT_CHILDREN), "c",
            "h"),
        op("delete n6 leaf-only", s -> s.delete("n6", Deletion.LEAF_ONLY), "i"),
        op("delete d with its subtree", s -> s.delete(D), "i", "e"),
        op("delete a missing node (refused)", s -> s.delete("nope"), "i"),
        op("graft x(y z) w under i", s -> s.graft("i", Tree.parse("x(y z) w")), "x", "y", "i"),
        op("graft r(s) as roots, streamed",
            s -> s.graft(null, Tree.parse("r(s)").entries().iterator()), "r", "s"),
        op("graft an existing id (refused)", s -> s.graft("i", Tree.parse("q(k)")), "i"));
  }

  private static Map<String, Object> nullValue(String key) {
    Map<String, Object> m = new HashMap<>();
    m.put(key, null);
    return m;
  }
}
