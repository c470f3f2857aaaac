package dev.arbor.core;

import static dev.arbor.core.Position.after;
import static dev.arbor.core.Position.before;
import static dev.arbor.core.Position.firstChildOf;
import static dev.arbor.core.Position.firstRoot;
import static dev.arbor.core.Position.lastChildOf;
import static dev.arbor.core.Position.lastRoot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link TreeStore} must have. A store passes it by extending this class and
 * returning a fresh, empty store from {@link #newStore()}:
 *
 * <pre>{@code
 * class InMemoryTreeStoreTest extends TreeStoreContract {
 *   @Override protected TreeStore newStore() { return new InMemoryTreeStore(); }
 * }
 * }</pre>
 *
 * <p>After every test, {@link #validate()} checks that {@link TreeStore#check()} reports no
 * problem, that every read ({@code roots}, {@code children}, {@code ancestors}, {@code
 * descendants}, {@code depth}, {@code find}, {@code size}) agrees with {@link
 * TreeStore#snapshot()}, and then calls {@link #verifyStoredInvariants(TreeStore)}, which a store's
 * test may override to check its own stored fields.
 */
public abstract class TreeStoreContract {

  /** The store under test, fresh and empty before each test, with its indexes ensured. */
  protected TreeStore store;

  /** Returns a new, empty store. Called once before each test. */
  protected abstract TreeStore newStore();

  /** Checks the store's own stored invariants after each test; nothing by default. */
  protected void verifyStoredInvariants(TreeStore store) {}

  @BeforeEach
  void createStore() {
    store = newStore();
    store.ensureIndexes();
  }

  /** Runs after each test: the structure is sound and all reads agree with the snapshot. */
  @AfterEach
  protected void validate() {
    assertEquals(List.of(), store.check(), "check() after the test");
    Tree tree = store.snapshot();
    assertReadsAgree(store, tree);
    verifyStoredInvariants(store);
    assertEquals(List.of(), store.repair(), "repair() of a sound store");
    assertEquals(tree, store.snapshot(), "repair() changed a sound store");
  }

  // ---------------------------------------------------------------- helpers

  /**
   * Up to how many nodes {@link #assertReadsAgree} reads every node; of a larger tree it reads
   * {@link #nodesRead a spread of about as many}.
   */
  static final int EVERY_NODE_READ_UP_TO = 40;

  /**
   * Asserts every read of {@code store} matches {@code expected}: the whole-tree reads, and the
   * reads of each node ({@link #assertNodeReadsAgree} too) for every node of a tree of up to
   * {@value #EVERY_NODE_READ_UP_TO} nodes, or for {@link #nodesRead a spread of the nodes} of a
   * larger one. (Every document of a larger tree is still checked: by the snapshot, which reads
   * them all, by {@code check()}, and by a store's {@link #verifyStoredInvariants}; the reads of a
   * node cost round trips, walks of a deep chain as many as its levels.)
   */
  public static void assertReadsAgree(TreeStore store, Tree expected) {
    assertEquals(expected.size(), store.size(), "size()");
    assertEquals(expected.roots(), store.roots(), "roots()");
    try (java.util.stream.Stream<Node> streamed = store.entries()) {
      assertEquals(expected.entries(), streamed.toList(), "entries(): the snapshot's preorder");
    }
    for (Node e : nodesRead(expected)) {
      String id = e.id();
      assertEquals(expected.children(id), store.children(id), () -> "children(" + id + ")");
      List<String> ancestors = new ArrayList<>();
      for (String p = e.parentId(); p != null; p = expected.get(p).parentId()) {
        ancestors.add(0, p);
      }
      assertEquals(ancestors, store.ancestors(id), () -> "ancestors(" + id + ")");
      assertEquals(e.depth(), store.depth(id), () -> "depth(" + id + ")");
      assertEquals(
          Optional.of(new Node(id, e.parentId(), e.depth(), e.attributes())),
          store.find(id),
          () -> "find(" + id + ")");
      List<String> descendants = expectedDescendants(expected, id, Integer.MAX_VALUE);
      assertEquals(descendants, store.descendants(id), () -> "descendants(" + id + ")");
      assertEquals(
          expectedDescendants(expected, id, 1), store.descendants(id, 1),
          () -> "descendants(" + id + ", 1)");
      assertEquals(
          expectedDescendants(expected, id, 2), store.descendants(id, 2),
          () -> "descendants(" + id + ", 2)");
      assertNodeReadsAgree(store, expected, id);
    }
  }

  /** Up to how many levels a larger tree has {@value #EVERY_NODE_READ_UP_TO} of its nodes read. */
  static final int SPREAD_FULL_UP_TO_LEVELS = 16;

  /** The fewest nodes of a spread, however deep the tree. */
  static final int SPREAD_AT_LEAST = 8;

  /**
   * The nodes whose reads {@link #assertReadsAgree} checks: every node of a tree of up to {@value
   * #EVERY_NODE_READ_UP_TO}; of a larger one, every k-th node of the preorder (k the size over the
   * spread, rounded up, so that every part and every depth of the tree has nodes read), every
   * root, the last node of the preorder, the deepest node, and the first and last child of the
   * node with the most children. The spread is {@value #EVERY_NODE_READ_UP_TO} nodes for a tree
   * of up to {@value #SPREAD_FULL_UP_TO_LEVELS} levels, and fewer for a deeper one, in proportion
   * (at least {@value #SPREAD_AT_LEAST}): a store that walks a tree level by level pays a round
   * trip per level for each ancestor and descendant read of a node, so the reads of a spread of a
   * deep chain cost about its size times its depth (with 40 nodes read, the two chains of the
   * contract, 120 and 200 deep, spent 5 of the 12 s of {@code ChildReferencesContractTest}).
   */
  static List<Node> nodesRead(Tree tree) {
    List<Node> entries = tree.entries();
    if (entries.size() <= EVERY_NODE_READ_UP_TO) {
      return entries;
    }
    Node deepest = entries.get(0);
    for (Node e : entries) {
      if (e.depth() > deepest.depth()) {
        deepest = e;
      }
    }
    int levels = deepest.depth() + 1;
    int spread = levels <= SPREAD_FULL_UP_TO_LEVELS ? EVERY_NODE_READ_UP_TO
        : Math.max(SPREAD_AT_LEAST, EVERY_NODE_READ_UP_TO * SPREAD_FULL_UP_TO_LEVELS / levels);
    int k = (entries.size() + spread - 1) / spread;
    java.util.Set<String> ids = new java.util.HashSet<>(tree.roots());
    String widest = null;
    for (int i = 0; i < entries.size(); i++) {
      Node e = entries.get(i);
      if (i % k == 0 || i == entries.size() - 1) {
        ids.add(e.id());
      }
      if (widest == null || tree.children(e.id()).size() > tree.children(widest).size()) {
        widest = e.id();
      }
    }
    ids.add(deepest.id());
    List<String> widestChildren = tree.children(widest);
    if (!widestChildren.isEmpty()) {
      ids.add(widestChildren.get(0));
      ids.add(widestChildren.get(widestChildren.size() - 1));
    }
    return entries.stream().filter(e -> ids.contains(e.id())).toList();
  }

  /**
   * Asserts the reads of node data and the counts of {@code store} for {@code id} match {@code
   * expected}.
   */
  public static void assertNodeReadsAgree(TreeStore store, Tree expected, String id) {
    Node e = expected.get(id);
    List<String> children = expected.children(id);
    assertEquals(nodes(expected, children), store.childNodes(id), () -> "childNodes(" + id + ")");
    if (!children.isEmpty()) {
      assertEquals(nodes(expected, children.subList(1, Math.min(3, children.size()))),
          store.childNodes(id, children.get(0), 2),
          () -> "childNodes(" + id + ", " + children.get(0) + ", 2)");
    }
    List<String> ancestors = new ArrayList<>();
    for (String p = e.parentId(); p != null; p = expected.get(p).parentId()) {
      ancestors.add(0, p);
    }
    assertEquals(nodes(expected, ancestors), store.ancestorNodes(id),
        () -> "ancestorNodes(" + id + ")");
    List<String> descendants = expectedDescendants(expected, id, Integer.MAX_VALUE);
    assertEquals(nodes(expected, descendants),
        store.descendantNodes(id, Integer.MAX_VALUE), () -> "descendantNodes(" + id + ")");
    assertEquals(nodes(expected, expectedDescendants(expected, id, 2)),
        store.descendantNodes(id, 2), () -> "descendantNodes(" + id + ", 2)");
    assertEquals(expectedSubtree(expected, id, Integer.MAX_VALUE),
        store.subtree(id, Integer.MAX_VALUE), () -> "subtree(" + id + ")");
    assertEquals(expectedSubtree(expected, id, 1), store.subtree(id, 1),
        () -> "subtree(" + id + ", 1)");
    assertEquals(children.size(), store.childCount(id), () -> "childCount(" + id + ")");
    assertEquals(children.isEmpty(), store.isLeaf(id), () -> "isLeaf(" + id + ")");
    assertEquals(descendants.size(), store.descendantCount(id),
        () -> "descendantCount(" + id + ")");
    List<String> group = e.parentId() == null ? expected.roots()
        : expected.children(e.parentId());
    List<String> others = new ArrayList<>(group);
    others.remove(id);
    assertEquals(others, store.siblings(id), () -> "siblings(" + id + ")");
    int at = group.indexOf(id);
    assertEquals(at > 0 ? Optional.of(group.get(at - 1)) : Optional.empty(),
        store.previousSibling(id), () -> "previousSibling(" + id + ")");
    assertEquals(at + 1 < group.size() ? Optional.of(group.get(at + 1)) : Optional.empty(),
        store.nextSibling(id), () -> "nextSibling(" + id + ")");
  }

  /** The nodes of {@code ids} as {@code tree} holds them. */
  public static List<Node> nodes(Tree tree, List<String> ids) {
    List<Node> out = new ArrayList<>();
    for (String id : ids) {
      Node e = tree.get(id);
      out.add(new Node(id, e.parentId(), e.depth(), e.attributes()));
    }
    return out;
  }

  /** The subtree of {@code id} in {@code tree} down to {@code maxDepth}, {@code id} its root. */
  public static Tree expectedSubtree(Tree tree, String id, int maxDepth) {
    Tree.Builder b = Tree.builder().add(id, null, tree.get(id).attributes());
    for (String d : expectedDescendants(tree, id, maxDepth)) {
      b.add(d, tree.get(d).parentId(), tree.get(d).attributes());
    }
    return b.build();
  }

  /** The descendants of {@code id} in {@code tree}, preorder, down to {@code maxDepth} levels. */
  public static List<String> expectedDescendants(Tree tree, String id, int maxDepth) {
    List<String> out = new ArrayList<>();
    int base = tree.get(id).depth();
    List<Node> entries = tree.entries();
    int i = entries.indexOf(tree.get(id)) + 1;
    for (; i < entries.size() && entries.get(i).depth() > base; i++) {
      if (entries.get(i).depth() - base <= maxDepth) {
        out.add(entries.get(i).id());
      }
    }
    return out;
  }

  /** Loads a fixture outline (see {@link Tree#parse}) by inserts, so inserts are what is tested. */
  protected void given(String outline) {
    Fixtures.insertAll(store, Tree.parse(outline));
    assertTree(outline);
  }

  /** Asserts the store holds exactly this outline (ids and order; attributes not compared). */
  protected void assertTree(String outline) {
    assertEquals(Tree.parse(outline).toString(), withoutAttributes(store.snapshot()).toString());
  }

  private static Tree withoutAttributes(Tree tree) {
    Tree.Builder b = Tree.builder();
    for (Node e : tree.entries()) {
      b.add(e.id(), e.parentId());
    }
    return b.build();
  }

  /** Asserts {@code call} throws {@code type} and leaves the stored tree unchanged. */
  protected <T extends Throwable> T assertRefused(Class<T> type, Executable call) {
    Tree before = store.snapshot();
    T thrown = assertThrows(type, call::run);
    assertEquals(before, store.snapshot(), "the tree changed although the call failed");
    return thrown;
  }

  /** A call that may throw. */
  @FunctionalInterface
  protected interface Executable {
    /** Runs the call. */
    void run() throws Throwable;
  }

  // ---------------------------------------------------------------- empty store

  @Test
  void emptyStore() {
    assertEquals(0, store.size());
    assertEquals(List.of(), store.roots());
    assertEquals(Optional.empty(), store.find("x"));
    assertEquals(Tree.empty(), store.snapshot());
  }

  // ---------------------------------------------------------------- inserts

  @Test
  void insertRootsAtEveryPosition() {
    store.insert("b", lastRoot());
    store.insert("d", lastRoot());
    store.insert("a", firstRoot());
    store.insert("c", before("d"));
    store.insert("e", after("d"));
    store.insert("c2", after("c"));
    store.insert("a0", before("a"));
    assertEquals(List.of("a0", "a", "b", "c", "c2", "d", "e"), store.roots());
    assertEquals(7, store.size());
  }

  @Test
  void insertChildrenAtEveryPosition() {
    given("r(x)");
    store.insert("m", lastChildOf("x"));
    store.insert("a", firstChildOf("x"));
    store.insert("z", lastChildOf("x"));
    store.insert("l", before("m"));
    store.insert("n", after("m"));
    store.insert("b", after("a"));
    store.insert("y", before("z"));
    assertEquals(List.of("a", "b", "l", "m", "n", "y", "z"), store.children("x"));
    assertEquals(Optional.of(new Node("n", "x", 2, Map.of())), store.find("n"));
  }

  @Test
  void manyInsertsAtTheSamePlaceKeepTheirOrder() {
    given("r(first last)");
    List<String> expected = new ArrayList<>();
    expected.add("first");
    for (int i = 0; i < 80; i++) {
      store.insert("b" + i, before("last"));
      expected.add("b" + i);
    }
    for (int i = 0; i < 40; i++) {
      store.insert("f" + i, firstChildOf("r"));
      expected.add(0, "f" + i);
    }
    for (int i = 0; i < 40; i++) {
      store.insert("a" + i, after("first"));
      expected.add(expected.indexOf("first") + 1, "a" + i);
    }
    expected.add("last");
    assertEquals(expected, store.children("r"));
  }

  @Test
  void manyRootInsertsAtTheFrontKeepTheirOrder() {
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 70; i++) {
      store.insert("r" + i, firstRoot());
      expected.add(0, "r" + i);
    }
    assertEquals(expected, store.roots());
  }

  @Test
  void insertDuplicateIsRefused() {
    given("a(b) c");
    DuplicateNodeException e = assertRefused(DuplicateNodeException.class,
        () -> store.insert("b", lastRoot()));
    assertTrue(e.getMessage().contains("'b'"), e.getMessage());
    assertRefused(DuplicateNodeException.class, () -> store.insert("a", firstChildOf("c")));
  }

  @Test
  void insertUnderUnknownAnchorIsRefused() {
    given("a(b)");
    for (Position p : List.of(firstChildOf("nope"), lastChildOf("nope"), before("nope"),
        after("nope"))) {
      NodeNotFoundException e = assertRefused(NodeNotFoundException.class,
          () -> store.insert("c", p));
      assertTrue(e.getMessage().contains("nope"), e.getMessage());
      assertEquals("nope", e.id());
    }
    assertEquals(Optional.empty(), store.find("c"));
  }

  // ---------------------------------------------------------------- the manual's tree

  @Test
  void manualCategoryTreeReads() {
    given(Fixtures.CATEGORIES);
    assertEquals(List.of("Books"), store.roots());
    assertEquals(List.of("Languages", "Databases"), store.children("Programming"));
    assertEquals(List.of("MongoDB", "dbm"), store.children("Databases"));
    assertEquals(List.of(), store.children("dbm"));
    assertEquals(List.of("Books", "Programming", "Databases"), store.ancestors("MongoDB"));
    assertEquals(List.of(), store.ancestors("Books"));
    assertEquals(List.of("Languages", "Databases", "MongoDB", "dbm"),
        store.descendants("Programming"));
    assertEquals(List.of("Programming", "Languages", "Databases", "MongoDB", "dbm"),
        store.descendants("Books"));
    assertEquals(List.of("Programming"), store.descendants("Books", 1));
    assertEquals(List.of("Programming", "Languages", "Databases"), store.descendants("Books", 2));
    assertEquals(List.of(), store.descendants("Books", 0));
    assertEquals(3, store.depth("dbm"));
    assertEquals(0, store.depth("Books"));
    assertTrue(store.isDescendant("dbm", "Books"));
    assertTrue(store.isDescendant("MongoDB", "Databases"));
    assertFalse(store.isDescendant("Books", "dbm"));
    assertFalse(store.isDescendant("Languages", "Databases"));
    assertFalse(store.isDescendant("Books", "Books"));
    assertEquals(Optional.of(new Node("Databases", "Programming", 2, Map.of())),
        store.find("Databases"));
    assertEquals(6, store.size());
  }

  @Test
  void manualCategoryTreeByLoad() {
    store.load(Fixtures.categories());
    assertEquals(Fixtures.categories(), store.snapshot());
    assertEquals(List.of("Books", "Programming", "Databases"), store.ancestors("dbm"));
  }

  @Test
  void descendantsWithNegativeDepthIsRefused() {
    given("a(b)");
    assertThrows(IllegalArgumentException.class, () -> store.descendants("a", -1));
  }

  // ---------------------------------------------------------------- moves

  @Test
  void moveLeafToAnotherParent() {
    given(Fixtures.CATEGORIES);
    store.move("MongoDB", lastChildOf("Languages"));
    assertTree("Books(Programming(Languages(MongoDB) Databases(dbm)))");
    assertEquals(List.of("Books", "Programming", "Languages"), store.ancestors("MongoDB"));
  }

  @Test
  void moveSubtreeToEveryRootPosition() {
    given("a(b(c(d)) e) f");
    store.move("b", firstRoot());
    assertTree("b(c(d)) a(e) f");
    assertEquals(List.of("b", "c"), store.ancestors("d"));
    assertEquals(2, store.depth("d"));
    store.move("b", lastRoot());
    assertTree("a(e) f b(c(d))");
    store.move("c", before("f"));
    assertTree("a(e) c(d) f b");
    store.move("e", after("f"));
    assertTree("a c(d) f e b");
    store.move("a", after("b"));
    assertTree("c(d) f e b a");
  }

  @Test
  void moveSubtreeDeeper() {
    given("a(b(c(d) x) e(f))");
    store.move("b", lastChildOf("f"));
    assertTree("a(e(f(b(c(d) x))))");
    assertEquals(List.of("a", "e", "f", "b", "c"), store.ancestors("d"));
    assertEquals(List.of("b", "c", "d", "x"), store.descendants("f"));
    store.move("c", before("e"));
    assertTree("a(c(d) e(f(b(x))))");
  }

  @Test
  void moveWithinSameParentToEveryPosition() {
    given("p(a b c d)");
    store.move("a", after("c"));
    assertTree("p(b c a d)");
    store.move("d", firstChildOf("p"));
    assertTree("p(d b c a)");
    store.move("d", lastChildOf("p"));
    assertTree("p(b c a d)");
    store.move("b", before("d"));
    assertTree("p(c a b d)");
    store.move("b", after("c"));
    assertTree("p(c b a d)");
    store.move("c", before("c"));
    store.move("c", after("c"));
    assertTree("p(c b a d)");
    store.move("a", before("b"));
    assertTree("p(c a b d)");
  }

  @Test
  void moveRootUnderAnotherRootAndBack() {
    given("a(x) b(y)");
    store.move("a", firstChildOf("b"));
    assertTree("b(a(x) y)");
    assertEquals(List.of("b", "a"), store.ancestors("x"));
    store.move("a", before("b"));
    assertTree("a(x) b(y)");
  }

  @Test
  void noOpMoves() {
    given(Fixtures.CATEGORIES);
    Tree before = store.snapshot();
    store.move("Databases", before("Databases"));
    store.move("Databases", after("Databases"));
    store.move("Books", before("Books"));
    store.move("Books", after("Books"));
    assertEquals(before, store.snapshot());
  }

  @Test
  void moveIntoOwnSubtreeIsRefused() {
    given(Fixtures.CATEGORIES + " other");
    for (Position p : List.of(firstChildOf("Programming"), lastChildOf("Programming"),
        firstChildOf("Databases"), lastChildOf("dbm"), before("MongoDB"), after("dbm"),
        after("Languages"), before("Databases"))) {
      InvalidMoveException e = assertRefused(InvalidMoveException.class,
          () -> store.move("Programming", p));
      assertTrue(e.getMessage().contains("Programming"), e.getMessage());
    }
    assertRefused(InvalidMoveException.class, () -> store.move("Books", firstChildOf("Books")));
    assertRefused(InvalidMoveException.class, () -> store.move("dbm", lastChildOf("dbm")));
  }

  @Test
  void moveUnknownIsRefused() {
    given("a(b) c");
    NodeNotFoundException e = assertRefused(NodeNotFoundException.class,
        () -> store.move("nope", lastChildOf("a")));
    assertEquals("nope", e.id());
    for (Position p : List.of(firstChildOf("gone"), lastChildOf("gone"), before("gone"),
        after("gone"))) {
      e = assertRefused(NodeNotFoundException.class, () -> store.move("b", p));
      assertTrue(e.getMessage().contains("gone"), e.getMessage());
    }
  }

  @Test
  void moveKeepsAttributes() {
    Map<String, Object> attributes = Map.of("name", "Databases", "count", 42);
    store.insert("a", lastRoot());
    store.insert("b", lastChildOf("a"), attributes);
    store.insert("c", lastChildOf("b"), Map.of("leaf", true));
    store.move("b", firstRoot());
    assertEquals(attributes, store.find("b").orElseThrow().attributes());
    assertEquals(Map.of("leaf", true), store.find("c").orElseThrow().attributes());
  }

  // ---------------------------------------------------------------- deletes

  @Test
  void deleteLeafSubtreeAndRoot() {
    given("a(b(c d(e)) f) g");
    assertEquals(1, store.delete("c"));
    assertTree("a(b(d(e)) f) g");
    assertEquals(3, store.delete("b"));
    assertTree("a(f) g");
    assertEquals(2, store.delete("a"));
    assertTree("g");
    assertEquals(Optional.empty(), store.find("e"));
    store.insert("b", lastRoot());
    assertTree("g b");
  }

  @Test
  void deleteUnknownIsRefused() {
    given("a(b)");
    NodeNotFoundException e = assertRefused(NodeNotFoundException.class,
        () -> store.delete("nope"));
    assertEquals("nope", e.id());
  }

  // ---------------------------------------------------------------- unknown, null and empty ids

  @Test
  void readsOfUnknownIdsAreRefused() {
    given("a(b)");
    List<Executable> calls = List.of(
        () -> store.children("nope"),
        () -> store.ancestors("nope"),
        () -> store.descendants("nope"),
        () -> store.descendants("nope", 1),
        () -> store.depth("nope"),
        () -> store.isDescendant("nope", "a"),
        () -> store.isDescendant("a", "nope"));
    for (Executable call : calls) {
      NodeNotFoundException e = assertRefused(NodeNotFoundException.class, call);
      assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
    }
    assertEquals(Optional.empty(), store.find("nope"));
  }

  @Test
  void nullAndEmptyIdsAreRefused() {
    given("a(b)");
    List<java.util.function.Function<String, Executable>> calls = List.of(
        id -> () -> store.insert(id, lastRoot()),
        id -> () -> store.insert("n", lastChildOf(id)),
        id -> () -> store.insert("n", before(id)),
        id -> () -> store.move(id, lastRoot()),
        id -> () -> store.move("b", after(id)),
        id -> () -> store.delete(id),
        id -> () -> store.find(id),
        id -> () -> store.children(id),
        id -> () -> store.ancestors(id),
        id -> () -> store.descendants(id),
        id -> () -> store.depth(id),
        id -> () -> store.isDescendant(id, "a"),
        id -> () -> store.isDescendant("a", id));
    for (var call : calls) {
      assertRefused(NullPointerException.class, call.apply(null));
      assertRefused(IllegalArgumentException.class, call.apply(""));
      // UTF-8 cannot hold an unpaired surrogate: stored, it would read back as another id.
      assertRefused(IllegalArgumentException.class, call.apply("a\uD800b"));
      assertRefused(IllegalArgumentException.class, call.apply("\uDC00"));
      assertRefused(IllegalArgumentException.class, call.apply("x\uD83D"));
    }
    assertRefused(NullPointerException.class, () -> store.insert("n", null));
    assertRefused(NullPointerException.class, () -> store.move("b", null));
    assertRefused(NullPointerException.class, () -> store.insert("n", lastRoot(), null));
  }

  // ---------------------------------------------------------------- hostile ids

  @Test
  void hostileIdsAsRootsChainAndSiblings() {
    List<String> ids = Fixtures.HOSTILE_IDS;
    String previous = null;
    for (String id : ids) {
      store.insert(id, previous == null ? lastRoot() : lastChildOf(previous));
      previous = id;
    }
    String last = ids.get(ids.size() - 1);
    assertEquals(ids.subList(0, ids.size() - 1), store.ancestors(last));
    assertEquals(ids.subList(1, ids.size()), store.descendants(ids.get(0)));
    for (int i = 0; i < ids.size(); i++) {
      assertEquals(i, store.depth(ids.get(i)), ids.get(i));
    }
    // flatten: every node becomes a child of the first, in reverse order
    for (int i = 1; i < ids.size(); i++) {
      store.move(ids.get(i), firstChildOf(ids.get(0)));
    }
    List<String> reversed = new ArrayList<>(ids.subList(1, ids.size()));
    java.util.Collections.reverse(reversed);
    assertEquals(reversed, store.children(ids.get(0)));
    // and siblings one before another, among the roots
    for (int i = 1; i < ids.size(); i++) {
      store.move(ids.get(i), before(ids.get(0)));
    }
    assertEquals(ids.subList(1, ids.size()), store.roots().subList(0, ids.size() - 1));
  }

  @Test
  void idsThatArePrefixesOfEachOther() {
    given("a(ab(abc) a,b) a\\(x) ab,(y)");
    assertEquals(List.of("ab", "abc", "a,b"), store.descendants("a"));
    assertEquals(List.of("x"), store.descendants("a\\"));
    store.move("a", lastChildOf("ab,"));
    assertEquals(List.of("y", "a", "ab", "abc", "a,b"), store.descendants("ab,"));
    assertEquals(List.of("ab,", "a", "ab"), store.ancestors("abc"));
  }

  // ---------------------------------------------------------------- attributes

  @Test
  void attributesRoundTrip() {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("en", "Databases");
    nested.put("fr", "Bases de données");
    Map<String, Object> attributes = new LinkedHashMap<>();
    attributes.put("name", "Databases");
    attributes.put("count", 42);
    attributes.put("big", 1L << 40);
    attributes.put("ratio", 0.5);
    attributes.put("active", true);
    attributes.put("labels", nested);
    attributes.put("tags", List.of("a", "b"));
    attributes.put("nothing", null);
    store.insert("db", lastRoot(), attributes);
    Node node = store.find("db").orElseThrow();
    assertEquals(attributes, node.attributes());
    assertEquals(attributes, store.snapshot().get("db").attributes());
  }

  // ---------------------------------------------------------------- update

  @Test
  void updateSetsChangesAndRemovesAttributes() {
    given(Fixtures.CATEGORIES);
    store.update("Databases", Map.of("title", "Databases", "count", 2));
    Map<String, Object> change = new LinkedHashMap<>();
    change.put("count", 3);
    change.put("title", null);
    change.put("tags", List.of("sql", Map.of("nested", true)));
    change.put("absent", null);
    store.update("Databases", change);
    assertEquals(Optional.of(new Node("Databases", "Programming", 2,
        Map.of("count", 3, "tags", List.of("sql", Map.of("nested", true))))),
        store.find("Databases"));
    assertEquals(Map.of(), store.find("MongoDB").orElseThrow().attributes());
    assertTree(Fixtures.CATEGORIES);
    store.update("Books", Map.of());
    store.move("Databases", firstRoot());
    assertEquals(3, store.find("Databases").orElseThrow().attributes().get("count"));
  }

  @Test
  void updateOfUnknownOrNullIsRefused() {
    given("a(b)");
    NodeNotFoundException e = assertRefused(NodeNotFoundException.class,
        () -> store.update("nope", Map.of("x", 1)));
    assertEquals("nope", e.id());
    assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
    assertRefused(NodeNotFoundException.class, () -> store.update("nope", Map.of()));
    assertRefused(NullPointerException.class, () -> store.update("a", null));
    assertRefused(NullPointerException.class, () -> store.update(null, Map.of("x", 1)));
    assertRefused(IllegalArgumentException.class, () -> store.update("", Map.of("x", 1)));
  }

  /**
   * Names no store takes, at the top level or as keys inside a value (MongoDB reads {@code $} as
   * an operator and {@code .} as a path; a map's keys are field names, so strings), and {@code
   * _id}: refused by {@code insert} and {@code update} with an {@link IllegalArgumentException}
   * naming the node and, for a key inside a value, the attribute; nothing written. (A user trial
   * found the in-memory store storing them, and the MongoDB stores' {@code update} throwing a
   * {@link ClassCastException} for an Integer key inside a value.)
   */
  @Test
  void attributeNamesNoStoreTakesAreRefusedNamingTheNodeAndTheAttribute() {
    given("a(b)");
    Map<Object, Object> integerKey = new LinkedHashMap<>();
    integerKey.put(1, "x");
    Map<Object, Object> nullKey = new LinkedHashMap<>();
    nullKey.put(null, "x");
    List<Map<String, Object>> refused = new ArrayList<>();
    for (String name : List.of("$x", "a.b", "", "_id", "x\ud800")) {
      refused.add(Map.of(name, 1));
    }
    // strings UTF-8 cannot hold (an unpaired surrogate): a MongoDB store would keep U+FFFD
    for (Object value : List.of(Map.of("a.b", 1), Map.of("$gt", 1), List.of(Map.of("$x", 1)),
        Map.of("in", Map.of("", 1)), integerKey, nullKey, "s\udc00t", List.of("x", "\ud800"),
        Map.of("k", "\udc00"), Map.of("k\udc00", 1))) {
      refused.add(Map.of("ok", value));
    }
    for (Map<String, Object> attributes : refused) {
      IllegalArgumentException inserted = assertRefused(IllegalArgumentException.class,
          () -> store.insert("n", lastChildOf("a"), attributes));
      IllegalArgumentException updated = assertRefused(IllegalArgumentException.class,
          () -> store.update("b", attributes));
      assertTrue(inserted.getMessage().contains("'n'"), inserted.getMessage());
      assertTrue(updated.getMessage().contains("'b'"), updated.getMessage());
      if (attributes.containsKey("ok")) {
        assertTrue(inserted.getMessage().contains("'ok'")
            && updated.getMessage().contains("'ok'"), updated.getMessage());
      }
    }
    assertTree("a(b)");
    Map<String, Object> paired = Map.of("e\ud83d\ude00", "\ud83d\ude00",
        "m", Map.of("k\ud83d\ude00", List.of("v\ud83d\ude00")));
    store.update("b", paired); // surrogate pairs are characters like any other
    assertEquals(paired, store.find("b").orElseThrow().attributes());
  }

  // ---------------------------------------------------------------- node data

  /** The manual's category tree with a title on every node and a price on the leaves. */
  private static Tree titledCategories() {
    Tree.Builder b = Tree.builder();
    for (Node e : Fixtures.categories().entries()) {
      Map<String, Object> attributes = new LinkedHashMap<>();
      attributes.put("title", e.id().toUpperCase(java.util.Locale.ROOT));
      if (Fixtures.categories().children(e.id()).isEmpty()) {
        attributes.put("price", e.id().length());
      }
      b.add(e.id(), e.parentId(), attributes);
    }
    return b.build();
  }

  @Test
  void subtreeWithAttributes() {
    Tree all = titledCategories();
    store.load(all);
    Tree programming = store.subtree("Programming", Integer.MAX_VALUE);
    assertEquals(List.of("Programming"), programming.roots());
    assertEquals(expectedSubtree(all, "Programming", Integer.MAX_VALUE), programming);
    assertEquals(expectedSubtree(all, "Programming", 1), store.subtree("Programming", 1));
    assertEquals(Tree.builder().add("dbm", null, all.get("dbm").attributes()).build(),
        store.subtree("dbm", 5));
    assertEquals(1, store.subtree("Books", 0).size());
    assertEquals(all, store.subtree("Books", Integer.MAX_VALUE));
    NodeNotFoundException e = assertRefused(NodeNotFoundException.class,
        () -> store.subtree("nope", 1));
    assertEquals("nope", e.id());
    assertRefused(IllegalArgumentException.class, () -> store.subtree("Books", -1));
    assertRefused(NullPointerException.class, () -> store.subtree(null, 1));
  }

  @Test
  void nodeReadsCarryTheData() {
    Tree all = titledCategories();
    store.load(all);
    assertEquals(List.of(new Node("Languages", "Programming", 2, Map.of("title", "LANGUAGES",
        "price", 9)), new Node("Databases", "Programming", 2, Map.of("title", "DATABASES"))),
        store.childNodes("Programming"));
    assertEquals(List.of("BOOKS", "PROGRAMMING", "DATABASES"),
        store.ancestorNodes("dbm").stream().map(n -> n.attributes().get("title")).toList());
    assertEquals(List.of(), store.ancestorNodes("Books"));
    assertEquals(List.of("Programming", "Languages", "Databases"),
        store.descendantNodes("Books", 2).stream().map(Node::id).toList());
    assertEquals(List.of(), store.descendantNodes("Books", 0));
    assertEquals(List.of(), store.childNodes("dbm"));
    for (String id : all.ids()) {
      assertNodeReadsAgree(store, all, id);
    }
    List<Executable> calls = List.of(
        () -> store.childNodes("nope"),
        () -> store.childNodes("nope", null, 3),
        () -> store.ancestorNodes("nope"),
        () -> store.descendantNodes("nope", 2),
        () -> store.childCount("nope"),
        () -> store.descendantCount("nope"),
        () -> store.isLeaf("nope"),
        () -> store.siblings("nope"),
        () -> store.previousSibling("nope"),
        () -> store.nextSibling("nope"),
        () -> store.childNodes("Books", "nope", 3));
    for (Executable call : calls) {
      NodeNotFoundException e = assertRefused(NodeNotFoundException.class, call);
      assertEquals("nope", e.id());
    }
    assertRefused(IllegalArgumentException.class, () -> store.descendantNodes("Books", -1));
    assertRefused(IllegalArgumentException.class, () -> store.childNodes("Books", null, 0));
    IllegalArgumentException e = assertRefused(IllegalArgumentException.class,
        () -> store.childNodes("Programming", "dbm", 2));
    assertTrue(e.getMessage().contains("'dbm'") && e.getMessage().contains("'Programming'"),
        e.getMessage());
  }

  @Test
  void childrenPagedBySiblingOrder() {
    store.insert("p", lastRoot());
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      store.insert("c" + i, lastChildOf("p"), Map.of("i", i));
      expected.add("c" + i);
    }
    List<String> seen = new ArrayList<>();
    List<Node> page = store.childNodes("p", null, 7);
    while (!page.isEmpty()) {
      assertTrue(page.size() <= 7);
      page.forEach(n -> seen.add(n.id()));
      String last = page.get(page.size() - 1).id();
      if (seen.size() == 7) {
        store.insert("early", firstChildOf("p")); // before the cursor: not seen, nothing repeated
        store.delete("c10"); // after the cursor: not seen
        expected.remove("c10");
      }
      page = store.childNodes("p", last, 7);
    }
    assertEquals(expected, seen);
    assertEquals(List.of("c24"), store.childNodes("p", "c23", 100).stream().map(Node::id)
        .toList());
    assertEquals(List.of(), store.childNodes("p", "c24", 1));
  }

  @Test
  void countsAndNeighbours() {
    given("a(b(c d) e f) g h");
    assertEquals(3, store.childCount("a"));
    assertEquals(5, store.descendantCount("a"));
    assertEquals(0, store.descendantCount("c"));
    assertTrue(store.isLeaf("c"));
    assertFalse(store.isLeaf("b"));
    assertEquals(List.of("b", "f"), store.siblings("e"));
    assertEquals(List.of("a", "h"), store.siblings("g"));
    assertEquals(List.of("d"), store.siblings("c"));
    assertEquals(Optional.of("b"), store.previousSibling("e"));
    assertEquals(Optional.of("f"), store.nextSibling("e"));
    assertEquals(Optional.empty(), store.previousSibling("b"));
    assertEquals(Optional.empty(), store.nextSibling("f"));
    assertEquals(Optional.of("g"), store.previousSibling("h"));
    assertEquals(Optional.empty(), store.nextSibling("h"));
    assertEquals(Optional.empty(), store.previousSibling("a"));
  }

  // ---------------------------------------------------------------- delete strategies

  @Test
  void deleteLiftingChildrenPutsThemInItsPlace() {
    store.load(titledCategories());
    assertEquals(1, store.delete("Programming", Deletion.LIFT_CHILDREN));
    assertTree("Books(Languages Databases(MongoDB dbm))");
    assertEquals(Optional.of(new Node("MongoDB", "Databases", 2, Map.of("title", "MONGODB",
        "price", 7))), store.find("MongoDB"));
    given2("x(y z) w");
    assertEquals(1, store.delete("x", Deletion.LIFT_CHILDREN));
    assertTree("Books(Languages Databases(MongoDB dbm)) y z w");
    assertEquals(1, store.delete("Databases", Deletion.LIFT_CHILDREN));
    assertTree("Books(Languages MongoDB dbm) y z w");
    assertEquals(1, store.delete("Languages", Deletion.LIFT_CHILDREN));
    assertEquals(1, store.delete("Books", Deletion.LIFT_CHILDREN));
    assertTree("MongoDB dbm y z w");
    assertEquals(1, store.delete("z", Deletion.LIFT_CHILDREN));
    assertTree("MongoDB dbm y w");
  }

  /** Adds the roots of an outline after the existing roots. */
  private void given2(String outline) {
    Fixtures.insertAll(store, Tree.parse(outline));
  }

  @Test
  void deleteLiftingChildrenInTheMiddleOfManySiblings() {
    given("p(a b(x y(z)) c) q");
    store.delete("b", Deletion.LIFT_CHILDREN);
    assertTree("p(a x y(z) c) q");
    assertEquals(List.of("p", "y"), store.ancestors("z"));
    assertEquals(2, store.depth("z"));
    store.insert("n", after("x"));
    store.move("c", before("x"));
    assertTree("p(a c x n y(z)) q");
  }

  @Test
  void deleteOnlyALeaf() {
    given("a(b(c))");
    NodeHasChildrenException e = assertRefused(NodeHasChildrenException.class,
        () -> store.delete("b", Deletion.LEAF_ONLY));
    assertEquals("b", e.id());
    assertTrue(e.getMessage().contains("'b'"), e.getMessage());
    assertEquals(1, store.delete("c", Deletion.LEAF_ONLY));
    assertEquals(1, store.delete("b", Deletion.LEAF_ONLY));
    assertEquals(1, store.delete("a", Deletion.SUBTREE));
    for (Deletion how : Deletion.values()) {
      NodeNotFoundException n = assertRefused(NodeNotFoundException.class,
          () -> store.delete("nope", how));
      assertEquals("nope", n.id());
    }
    assertRefused(NullPointerException.class, () -> store.delete("nope", null));
  }

  // ---------------------------------------------------------------- load

  @Test
  void loadIntoNonEmptyStoreIsRefused() {
    given("a");
    TreeException e = assertRefused(TreeException.class, () -> store.load(Tree.parse("b(c)")));
    assertTrue(e.getMessage().contains("not empty"), e.getMessage());
  }

  @Test
  void loadForestWithAttributesThenChangeIt() {
    Tree tree = Tree.builder()
        .add("r1", null, Map.of("title", "first"))
        .add("c1", "r1", Map.of("n", 1))
        .add("r2", null)
        .add("c2", "r1", Map.of("n", 2))
        .add("g1", "c1")
        .build();
    store.load(tree);
    assertEquals(tree, store.snapshot());
    store.insert("c0", firstChildOf("r1"));
    store.move("g1", after("c2"));
    assertTree("r1(c0 c1 c2 g1) r2");
    assertEquals(Map.of("n", 2), store.find("c2").orElseThrow().attributes());
  }

  @Test
  void loadEmptyTree() {
    store.load(Tree.empty());
    assertEquals(0, store.size());
  }

  // ---------------------------------------------------------------- shapes

  @Test
  void deepChain() {
    int depth = 120;
    store.insert("n0", lastRoot());
    for (int i = 1; i < depth; i++) {
      store.insert("n" + i, lastChildOf("n" + (i - 1)));
    }
    assertEquals(depth - 1, store.depth("n" + (depth - 1)));
    assertEquals(depth - 1, store.descendants("n0").size());
    store.move("n60", firstRoot());
    assertEquals(List.of("n60", "n0"), store.roots());
    assertEquals(depth - 61, store.depth("n" + (depth - 1)));
    assertEquals(List.of("n61", "n62", "n63"), store.descendants("n60", 3));
    assertTrue(store.isDescendant("n119", "n60"));
    assertFalse(store.isDescendant("n119", "n0"));
    assertEquals(59, store.delete("n1"));
  }

  /**
   * How deep {@link #aDeepChainWithLongIds} goes: 200 levels by default, {@code
   * -Darbor.deepChain=1000} (or more) for the long run.
   */
  protected int deepChainLevels() {
    return Integer.getInteger("arbor.deepChain", 200);
  }

  @Test
  void aDeepChainWithLongIds() {
    int depth = deepChainLevels();
    int half = depth / 2;
    Tree.Builder b = Tree.builder();
    for (int i = 0; i < depth; i++) {
      b.add(longId(i), i == 0 ? null : longId(i - 1));
    }
    store.load(b.build());
    String bottom = longId(depth - 1);
    assertEquals(depth - 1, store.depth(bottom));
    assertEquals(depth - 1, store.ancestors(bottom).size());
    for (int maxDepth : new int[] {1, 100, 101, half, depth - 1, depth, Integer.MAX_VALUE}) {
      List<String> below = store.descendants(longId(0), maxDepth);
      assertEquals(Math.min(maxDepth, depth - 1), below.size(), "maxDepth " + maxDepth);
      assertEquals(longId(1), below.get(0));
    }
    assertEquals(List.of(longId(half + 1), longId(half + 2)), store.descendants(longId(half), 2));
    store.move(longId(half), lastRoot());
    assertEquals(depth - 1 - half, store.depth(bottom));
    assertEquals(half - 1, store.delete(longId(1)));
    assertEquals(1 + depth - half, store.size());
    assertEquals(List.of(longId(0), longId(half)), store.roots());
  }

  /** An id of 24 characters that needs escaping in paths and regexes. */
  private static String longId(int i) {
    return "$n" + i + ",-\\.x" + "y".repeat(12 - String.valueOf(i).length());
  }

  @Test
  void wideFanOut() {
    store.insert("p", lastRoot());
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      store.insert("c" + i, lastChildOf("p"));
      expected.add("c" + i);
    }
    assertEquals(expected, store.children("p"));
    store.move("c0", lastChildOf("p"));
    store.move("c299", firstChildOf("p"));
    store.move("c150", after("c10"));
    expected.remove("c0");
    expected.add("c0");
    expected.remove("c299");
    expected.add(0, "c299");
    expected.remove("c150");
    expected.add(expected.indexOf("c10") + 1, "c150");
    assertEquals(expected, store.children("p"));
    assertEquals(300, store.descendants("p", 1).size());
  }

  // ---------------------------------------------------------------- loads from entries and grafts

  /** A forest with attributes, several roots and levels. */
  private static Tree streamed() {
    return Tree.builder()
        .add("r1", null, Map.of("title", "first"))
        .add("c1", "r1", Map.of("n", 1))
        .add("g1", "c1", Map.of("tags", List.of("x", "y")))
        .add("g2", "c1")
        .add("c2", "r1", Map.of("n", 2))
        .add("r2", null)
        .add("c3", "r2")
        .add("r3", null, Map.of("deep", Map.of("k", "v")))
        .build();
  }

  private static Node entry(String id, String parentId) {
    return new Node(id, parentId, 0, Map.of());
  }

  @Test
  void loadFromEntries() {
    Tree tree = streamed();
    assertEquals(tree.size(), store.load(tree.entries().iterator()));
    assertEquals(tree, store.snapshot());
    store.insert("c4", lastChildOf("r2"));
    store.move("g2", firstChildOf("r3"));
    assertTree("r1(c1(g1) c2) r2(c3 c4) r3(g2)");
  }

  @Test
  void loadFromAnotherStoresEntries() {
    Tree tree = streamed();
    TreeStore source = newStore();
    source.ensureIndexes();
    source.load(tree);
    source.insert("c5", lastChildOf("c2"));
    Tree expected = source.snapshot();
    try (java.util.stream.Stream<Node> entries = source.entries()) {
      assertEquals(expected.size(), store.load(entries.iterator()));
    }
    assertEquals(expected, store.snapshot());
  }

  @Test
  void loadFromEntriesOutOfPreorderLeavesNothing() {
    List<Node> unknownParent = List.of(entry("a", null), entry("b", "a"),
        entry("c", "nope"));
    TreeException e = assertRefused(TreeException.class,
        () -> store.load(unknownParent.iterator()));
    assertTrue(e.getMessage().contains("'c'") && e.getMessage().contains("preorder"),
        e.getMessage());
    List<Node> closedParent = List.of(entry("a", null), entry("b", "a"), entry("c", null),
        entry("d", "b"));
    assertRefused(TreeException.class, () -> store.load(closedParent.iterator()));
    assertEquals(0, store.size());
  }

  @Test
  void loadFromEntriesWithARepeatedIdLeavesNothing() {
    List<Node> repeated = List.of(entry("a", null), entry("b", "a"), entry("c", "b"),
        entry("b", null));
    DuplicateNodeException e = assertRefused(DuplicateNodeException.class,
        () -> store.load(repeated.iterator()));
    assertEquals("b", e.id());
    assertTrue(e.getMessage().contains("'b' is given twice"), e.getMessage()); // not "exists"
    assertEquals(0, store.size());
  }

  @Test
  void loadFromEntriesIntoANonEmptyStoreIsRefused() {
    given("a");
    assertRefused(TreeException.class, () -> store.load(streamed().entries().iterator()));
  }

  @Test
  void loadFromNoEntries() {
    assertEquals(0, store.load(List.<Node>of().iterator()));
    assertEquals(0, store.size());
  }

  @Test
  void graftUnderANodeWithChildrenKeepsSiblingOrder() {
    given("a(b(x) c) d");
    assertEquals(3, store.graft("b", Tree.parse("n(m) o")));
    assertTree("a(b(x n(m) o) c) d");
    Tree sub = streamed();
    assertEquals(sub.size(), store.graft("c", sub.entries().iterator()));
    assertTree("a(b(x n(m) o) c(r1(c1(g1 g2) c2) r2(c3) r3)) d");
    assertEquals(Map.of("tags", List.of("x", "y")), store.find("g1").orElseThrow().attributes());
    assertEquals(Optional.of("c1"), store.find("g1").map(Node::parentId));
    assertEquals(4, store.depth("g1"));
    assertEquals(List.of("a", "c", "r1", "c1"), store.ancestors("g1"));
    assertTrue(store.isDescendant("g2", "a"));
    assertEquals(List.of("x", "n", "m", "o"), store.descendants("b"));
    // later changes place themselves among the grafted nodes
    store.insert("p", after("o"));
    store.move("r2", firstChildOf("x"));
    store.insert("q", lastChildOf("c"));
    store.insert("s", before("n"));
    assertTree("a(b(x(r2(c3)) s n(m) o p) c(r1(c1(g1 g2) c2) r3 q)) d");
    store.delete("c1");
    assertTree("a(b(x(r2(c3)) s n(m) o p) c(r1(c2) r3 q)) d");
  }

  @Test
  void graftUnderADeepLeafAndInTheMiddle() {
    given("a(b(c(d)) e(f)) g(h)");
    store.graft("d", Tree.parse("x(y(z))"));
    store.graft("b", List.of(entry("u", null), entry("v", "u")).iterator());
    assertTree("a(b(c(d(x(y(z)))) u(v)) e(f)) g(h)");
    assertEquals(6, store.depth("z"));
    assertEquals(List.of("a", "b", "c", "d", "x", "y"), store.ancestors("z"));
    assertEquals(List.of("c", "d", "x", "y", "z", "u", "v"), store.descendants("b"));
    assertEquals(List.of("f"), store.descendants("e"));
  }

  @Test
  void graftAsNewRoots() {
    given("a(b)");
    assertEquals(2, store.graft(null, Tree.parse("x(y)").entries().iterator()));
    assertEquals(1, store.graft(null, Tree.parse("z")));
    assertTree("a(b) x(y) z");
    store.insert("w", firstRoot());
    store.move("a", lastRoot());
    assertTree("w x(y) z a(b)");
  }

  @Test
  void graftIntoAnEmptyStoreAsRoots() {
    Tree tree = streamed();
    assertEquals(tree.size(), store.graft(null, tree.entries().iterator()));
    assertEquals(tree, store.snapshot());
  }

  @Test
  void graftOfNothingChangesNothing() {
    given("a(b)");
    assertEquals(0, store.graft("a", List.<Node>of().iterator()));
    assertEquals(0, store.graft(null, Tree.builder().build()));
    assertTree("a(b)");
  }

  @Test
  void graftThatCannotBeDoneLeavesTheTree() {
    given("a(b) c");
    NodeNotFoundException n = assertRefused(NodeNotFoundException.class,
        () -> store.graft("nope", Tree.parse("x")));
    assertEquals("nope", n.id());
    n = assertRefused(NodeNotFoundException.class,
        () -> store.graft("nope", Tree.parse("x").entries().iterator()));
    assertEquals("nope", n.id());
    DuplicateNodeException d = assertRefused(DuplicateNodeException.class,
        () -> store.graft("a", Tree.parse("x(y b)")));
    assertEquals("b", d.id());
    d = assertRefused(DuplicateNodeException.class,
        () -> store.graft("c", Tree.parse("x(y c)").entries().iterator()));
    assertEquals("c", d.id());
    d = assertRefused(DuplicateNodeException.class,
        () -> store.graft(null, Tree.parse("a")));
    assertEquals("a", d.id());
    TreeException e = assertRefused(TreeException.class, () -> store.graft("a",
        List.of(entry("x", null), entry("y", "x"), entry("z", "b")).iterator()));
    assertTrue(e.getMessage().contains("'z'") && e.getMessage().contains("preorder"),
        e.getMessage());
    d = assertRefused(DuplicateNodeException.class, () -> store.graft(null,
        List.of(entry("x", null), entry("y", "x"), entry("x", null)).iterator()));
    assertEquals("x", d.id());
    assertRefused(NullPointerException.class, () -> store.graft("a", (Tree) null));
    assertTree("a(b) c");
  }
}
