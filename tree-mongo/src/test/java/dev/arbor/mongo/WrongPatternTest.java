package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Fixtures;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A store opened with the wrong pattern recognises the pattern the collection is laid out in and
 * refuses, naming it, before writing anything: changes, loads and repairs throw, and so do reads
 * (a store's first looks at the collection), check reports it. For all 20 ordered pairs of
 * different patterns, on collections written by Arbor and on the manual's hand-written ones.
 */
class WrongPatternTest {

  static List<Arguments> pairs() {
    List<Arguments> pairs = new ArrayList<>();
    for (TreePattern laidOut : TreePattern.values()) {
      for (TreePattern opened : TreePattern.values()) {
        if (laidOut != opened) {
          pairs.add(Arguments.of(laidOut, opened));
        }
      }
    }
    return pairs;
  }

  @ParameterizedTest(name = "{0} opened as {1}")
  @MethodSource("pairs")
  void aStoreRefusesACollectionOfAnotherPatternBeforeWriting(TreePattern laidOut,
      TreePattern opened) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    laidOut.open(c).load(Fixtures.categories());
    assertRefused(c, laidOut, opened);
  }

  @ParameterizedTest(name = "the manual's {0} opened as {1}")
  @MethodSource("pairs")
  void aStoreRefusesTheManualsCollectionOfAnotherPattern(TreePattern laidOut,
      TreePattern opened) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    writeAsTheManualDoes(c, laidOut);
    assertRefused(c, laidOut, opened);
  }

  @ParameterizedTest(name = "{0} opened as {1}")
  @MethodSource("pairs")
  void ensureIndexesRefusesACollectionOfAnotherPatternBeforeCreatingAnIndex(
      TreePattern laidOut, TreePattern opened) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    laidOut.open(c).load(Fixtures.categories());
    List<Document> indexes = c.listIndexes().into(new ArrayList<>());
    TreeException e = assertThrows(TreeException.class, () -> opened.open(c).ensureIndexes());
    assertTrue(e.getMessage().contains("laid out in the " + laidOut + " pattern, not "
        + opened), e.getMessage());
    assertTrue(e.getMessage().contains("TreePattern." + laidOut), e.getMessage());
    assertEquals(indexes, c.listIndexes().into(new ArrayList<>()), "no index created");
  }

  /**
   * {@code recognise} with a scope in the options reads that tree's nodes: two trees of two
   * patterns in one collection are each recognised within their scope, and a scope with no node
   * is recognised as nothing. (Before stop 60 it read the collection's unscoped nodes, of which a
   * collection of scoped trees has none, and recognised nothing.)
   */
  @Test
  void aScopedTreeIsRecognisedWithinItsScope() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeOptions acme = TreeOptions.defaults().withScope("tenant", "acme");
    TreeOptions zero = TreeOptions.defaults().withScope("tenant", 0);
    TreePattern.ARRAY_OF_ANCESTORS.open(c, acme).load(Fixtures.categories());
    TreePattern.NESTED_SETS.open(c, zero).load(Tree.parse("a(b c)"));
    assertEquals(Optional.of(TreePattern.ARRAY_OF_ANCESTORS), TreePattern.recognise(c, acme));
    assertEquals(Optional.of(TreePattern.NESTED_SETS), TreePattern.recognise(c, zero));
    assertEquals(Optional.empty(), TreePattern.recognise(c,
        TreeOptions.defaults().withScope("tenant", "globex")));
    assertEquals(Optional.empty(), TreePattern.recognise(c));
  }

  private static void assertRefused(MongoCollection<Document> c, TreePattern laidOut,
      TreePattern opened) {
    assertEquals(Optional.of(laidOut), TreePattern.recognise(c));
    // The nodes: a read (check) may create the lock document of a collection that had none.
    List<Document> before = c.find(MongoTreeStore.NODES).into(new ArrayList<>());
    String named = "laid out in the " + laidOut + " pattern, not " + opened;

    List<Executable> writes = List.of(
        () -> opened.open(c).insert("new", Position.lastChildOf("Books")),
        () -> opened.open(c).insert("new", Position.lastRoot()),
        () -> opened.open(c).move("Databases", Position.firstRoot()),
        () -> opened.open(c).delete("MongoDB"),
        () -> opened.open(c).repair(),
        () -> opened.open(c).load(Tree.parse("x(y)")));
    for (Executable write : writes) {
      TreeException e = assertThrows(TreeException.class, write);
      assertTrue(e.getMessage().contains(named), e.getMessage());
      assertTrue(e.getMessage().contains("TreePattern." + laidOut), e.getMessage());
    }
    // Reads too (before, they answered a forest of roots whose structural fields were node
    // data, or nested sets' "does not nest"): each on a store whose first read it is.
    List<Executable> reads = List.of(
        () -> opened.open(c).snapshot(),
        () -> opened.open(c).roots(),
        () -> opened.open(c).children("Books"),
        () -> opened.open(c).find("Programming"),
        () -> opened.open(c).size(),
        () -> opened.open(c).subtree("Programming", 2),
        () -> {
          try (java.util.stream.Stream<dev.arbor.core.Node> nodes = opened.open(c).entries()) {
            nodes.toList();
          }
        });
    for (Executable read : reads) {
      TreeException e = assertThrows(TreeException.class, read);
      assertTrue(e.getMessage().contains(named), e.getMessage());
      assertTrue(e.getMessage().contains("TreePattern." + laidOut), e.getMessage());
    }
    List<Problem> problems = opened.open(c).check();
    assertEquals(1, problems.size(), problems::toString);
    assertTrue(problems.get(0).message().contains(named), problems::toString);
    assertEquals(before, c.find(MongoTreeStore.NODES).into(new ArrayList<>()), "nothing written");
    assertEquals(0, c.countDocuments(Filters.eq("_id.arbor", "journal")), "no journal left");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void eachPatternIsRecognisedAndAcceptedAsItself(TreePattern pattern) {
    MongoCollection<Document> manual = MongoTestServer.get().freshCollection();
    writeAsTheManualDoes(manual, pattern);
    assertEquals(Optional.of(pattern), TreePattern.recognise(manual));
    TreeStore store = pattern.open(manual);
    store.repair(); // completes the manual's collection: no refusal
    assertEquals(Fixtures.categories().size(), store.size());

    MongoCollection<Document> arbor = MongoTestServer.get().freshCollection();
    TreeStore own = pattern.open(arbor);
    own.load(SampleTree.HOSTILE);
    own.move(SampleTree.HOSTILE.roots().get(1), Position.firstRoot());
    assertEquals(Optional.of(pattern), TreePattern.recognise(arbor));
    assertEquals(List.of(), own.check());
  }

  @Test
  void emptyAndUnrecognisableCollectionsAreNotRecognised() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    assertEquals(Optional.empty(), TreePattern.recognise(c));
    c.insertOne(new Document("_id", "a").append("title", "no structure"));
    assertEquals(Optional.empty(), TreePattern.recognise(c));
  }

  @Test
  void attributesNamedLikeAnotherPatternsFieldsDoNotMakeAStoreRefuseItsOwnTree() {
    // A parent-references tree of files whose attributes include path, left and right.
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeStore files = TreePattern.PARENT_REFERENCES.open(c);
    files.insert("root", Position.lastRoot(), Map.of("path", "/", "left", 1, "right", 2));
    files.insert("etc", Position.lastChildOf("root"), Map.of("path", "/etc", "left", 3,
        "right", 4));
    files.move("etc", Position.firstRoot());
    assertEquals(Optional.of(TreePattern.PARENT_REFERENCES), TreePattern.recognise(c));
    assertEquals(List.of(), files.check());
  }

  private static void writeAsTheManualDoes(MongoCollection<Document> c, TreePattern pattern) {
    for (String line : ManualDocuments.AS_WRITTEN.get(pattern).split("\n")) {
      c.insertOne(Document.parse(line));
    }
  }

  /** A forest with hostile ids, for layouts beyond the category tree. */
  private static final class SampleTree {
    static final Tree HOSTILE = hostile();

    private static Tree hostile() {
      Tree.Builder b = Tree.builder();
      String previous = null;
      for (String id : Fixtures.HOSTILE_IDS) {
        b.add(id, previous, Map.of());
        previous = previous == null ? id : null; // pairs: a root and its child
      }
      return b.build();
    }
  }
}
