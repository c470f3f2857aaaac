package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import dev.arbor.core.Fixtures;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The raw documents of each pattern: the manual's category tree gives the manual's documents;
 * corrupting a document's structural fields is reported by {@code check()} naming the node;
 * reserved or unstorable attributes are refused before anything is written.
 */
class PatternDocumentsTest {
  private MongoCollection<Document> collection;

  private TreeStore open(TreePattern pattern) {
    collection = MongoTestServer.get().freshCollection();
    TreeStore store = pattern.open(collection);
    store.ensureIndexes();
    return store;
  }

  /** Fields Arbor adds to the manual's shape. */
  private static final Set<String> EXTRA = Set.of("arborRank", "arborDepth", "arborOp");

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void manualCategoryTreeGivesTheManualsDocuments(TreePattern pattern) {
    TreeStore store = open(pattern);
    // The manual's child-references example lists Databases before Languages; the others
    // (nested-set numbers) put Languages first.
    String outline = pattern == TreePattern.CHILD_REFERENCES
        ? "Books(Programming(Databases(MongoDB dbm) Languages))" : Fixtures.CATEGORIES;
    Fixtures.insertAll(store, Tree.parse(outline));
    for (String line : ManualDocuments.AS_WRITTEN.get(pattern).split("\n")) {
      Document expected = Document.parse(line);
      if (Integer.valueOf(0).equals(expected.get("parent"))) {
        expected.put("parent", null); // the manual's nested-set root; Arbor writes null
      }
      Document actual = collection.find(Filters.eq("_id", expected.getString("_id"))).first();
      actual.keySet().removeAll(EXTRA);
      expected.replaceAll((k, v) -> v instanceof Integer i ? Long.valueOf(i) : v);
      actual.replaceAll((k, v) -> v instanceof Integer i ? Long.valueOf(i) : v);
      assertEquals(expected, actual, pattern.toString());
    }
    assertEquals(List.of(), store.check());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void loadGivesTheSameDocumentsAsInserts(TreePattern pattern) {
    TreeStore inserted = open(pattern);
    Fixtures.insertAll(inserted, Fixtures.categories());
    List<Document> byInserts = collection.find(MongoTreeStore.NODES).sort(new Document("_id", 1))
        .into(new ArrayList<>());
    TreeStore loaded = open(pattern);
    loaded.load(Fixtures.categories());
    List<Document> byLoad = collection.find(MongoTreeStore.NODES).sort(new Document("_id", 1))
        .into(new ArrayList<>());
    for (Document d : byInserts) {
      d.keySet().removeAll(EXTRA);
    }
    for (Document d : byLoad) {
      d.keySet().removeAll(EXTRA);
    }
    assertEquals(byInserts, byLoad);
  }

  // ---------------------------------------------------------------- corruption

  private void assertReported(TreeStore store, String nodeId, Bson corruption, String what) {
    collection.updateOne(Filters.eq("_id", nodeId), corruption);
    List<Problem> problems = store.check();
    assertTrue(problems.stream().anyMatch(p -> p.nodeId().equals(nodeId)),
        what + ": expected a problem naming '" + nodeId + "', got " + problems);
  }

  private TreeStore corruptible(TreePattern pattern) {
    TreeStore store = open(pattern);
    store.load(Fixtures.categories());
    assertEquals(List.of(), store.check());
    return store;
  }

  @Test
  void parentReferencesCorruption() {
    TreePattern p = TreePattern.PARENT_REFERENCES;
    assertReported(corruptible(p), "MongoDB", Updates.set("parent", "ghost"), "orphan");
    assertReported(corruptible(p), "Books", Updates.set("parent", "dbm"), "cycle");
    TreeStore store = corruptible(p);
    long rank = collection.find(Filters.eq("_id", "Languages")).first().getLong("arborRank");
    assertReported(store, "Databases", Updates.set("arborRank", rank), "duplicated sibling order");
    assertReported(corruptible(p), "dbm", Updates.set("parent", 7), "wrong type");
  }

  @Test
  void childReferencesCorruption() {
    TreePattern p = TreePattern.CHILD_REFERENCES;
    assertReported(corruptible(p), "Databases", Updates.push("children", "ghost"),
        "lists a missing node");
    TreeStore store = corruptible(p);
    collection.updateOne(Filters.eq("_id", "Databases"), Updates.pull("children", "dbm"));
    assertTrue(store.check().stream().anyMatch(x -> x.nodeId().equals("dbm")),
        "a node no children array lists and without a root rank");
    store = corruptible(p);
    collection.updateOne(Filters.eq("_id", "Languages"), Updates.push("children", "MongoDB"));
    assertTrue(store.check().stream().anyMatch(x -> x.nodeId().equals("MongoDB")
        && x.message().contains("Languages")), "listed under two parents");
    assertReported(corruptible(p), "dbm", Updates.push("children", "Books"), "cycle");
  }

  @Test
  void arrayOfAncestorsCorruption() {
    TreePattern p = TreePattern.ARRAY_OF_ANCESTORS;
    assertReported(corruptible(p), "MongoDB",
        Updates.set("ancestors", List.of("Books", "Databases")), "ancestors disagree");
    assertReported(corruptible(p), "dbm", Updates.set("parent", "Languages"),
        "parent disagrees with ancestors");
    assertReported(corruptible(p), "Books", Updates.unset("arborRank"), "missing rank");
  }

  @Test
  void materializedPathsCorruption() {
    TreePattern p = TreePattern.MATERIALIZED_PATHS;
    assertReported(corruptible(p), "MongoDB", Updates.set("path", ",Books,Databases,"),
        "path disagrees with its ancestors' paths");
    assertReported(corruptible(p), "dbm", Updates.set("path", "Books,Programming"), "malformed");
    assertReported(corruptible(p), "Languages", Updates.set("path", ",ghost,"), "orphan");
  }

  @Test
  void nestedSetsCorruption() {
    TreePattern p = TreePattern.NESTED_SETS;
    assertReported(corruptible(p), "Languages", Updates.set("left", 6), "number used twice");
    assertReported(corruptible(p), "MongoDB", Updates.set("right", 11), "overlap");
    assertReported(corruptible(p), "dbm", Updates.set("parent", "Programming"),
        "parent disagrees with the intervals");
    assertReported(corruptible(p), "dbm", Updates.set("arborDepth", 1), "depth disagrees");
    assertReported(corruptible(p), "Books", Updates.set("right", 20), "gap");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aDocumentWhoseIdIsNotAStringIsReported(TreePattern pattern) {
    TreeStore store = corruptible(pattern);
    org.bson.types.ObjectId stray = new org.bson.types.ObjectId();
    collection.insertOne(new Document("_id", stray));
    assertTrue(store.check().stream().anyMatch(p -> p.nodeId().equals(stray.toString())),
        () -> "expected a problem naming " + stray + ": " + store.check());
    assertEquals(Fixtures.categories(), store.snapshot(), "the nodes are unaffected");
  }

  // ---------------------------------------------------------------- bad attributes

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void reservedAndUnstorableAttributesAreRefused(TreePattern pattern) {
    MongoTreeStore store = (MongoTreeStore) open(pattern);
    store.load(Fixtures.categories());
    Tree before = store.snapshot();
    List<String> names = new ArrayList<>(store.structuralFields());
    names.addAll(List.of("_id", "$set", "a.b", ""));
    for (String name : names) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> store.insert("new", Position.lastChildOf("Books"), Map.of(name, 1)));
      assertTrue(e.getMessage().contains("'" + name + "'") && e.getMessage().contains("'new'"),
          e.getMessage());
      e = assertThrows(IllegalArgumentException.class,
          () -> store.update("dbm", Map.of(name, 1)));
      assertTrue(e.getMessage().contains("'" + name + "'") && e.getMessage().contains("'dbm'"),
          e.getMessage());
      Map<String, Object> removal = new java.util.HashMap<>();
      removal.put(name, null);
      removal.put("fine", 1);
      e = assertThrows(IllegalArgumentException.class, () -> store.update("dbm", removal));
      assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class,
        () -> store.update("dbm", Map.of("thing", new Object())));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> store.insert("new", Position.lastRoot(), Map.of("thing", new Object())));
    assertTrue(e.getMessage().contains("'thing'"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> store.load(Tree.builder()
        .add("x", null, Map.of(names.get(0), 1)).build()));
    assertEquals(before, store.snapshot());
    assertEquals(List.of(), store.check());
  }
}
