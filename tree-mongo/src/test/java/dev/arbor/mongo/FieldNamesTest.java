package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Deletion;
import dev.arbor.core.Fixtures;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Structural field names ({@link TreeOptions#withFieldName}): the defaults leave ordinary domain
 * words to the user, a collection laid out by another tool opens as it is, and options that
 * cannot work are refused when set or when the store opens, naming the option. The whole
 * contract also runs with every field renamed ({@code Scoped*ContractTest}).
 */
class FieldNamesTest {
  /** Words a user's data commonly has, which no pattern takes with the default names. */
  static final List<String> DOMAIN_WORDS =
      List.of("rank", "depth", "order", "level", "position", "sort");

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void ordinaryDomainWordsAreAttributesInEveryPattern(TreePattern pattern) {
    Map<String, Object> data = new LinkedHashMap<>();
    for (int i = 0; i < DOMAIN_WORDS.size(); i++) {
      data.put(DOMAIN_WORDS.get(i), "v" + i);
    }
    for (String word : DOMAIN_WORDS) {
      assertEquals(Optional.empty(), pattern.nameRefusal(word, true), word);
      assertFalse(pattern.reservedNames().contains(word), word);
    }
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTree tree = pattern.open(c);
    tree.load(Fixtures.categories());
    tree.insert("Team", Position.lastChildOf("Databases"), data);
    tree.insert("Other", Position.firstChildOf("Databases"), Map.of("rank", 1, "depth", 99));
    tree.move("Team", Position.firstChildOf("Languages"));
    tree.update("Team", Map.of("rank", "first", "level", 3));
    assertEquals(List.of("Team"), tree.children("Languages"));
    assertEquals(List.of("Other", "MongoDB", "dbm"), tree.children("Databases"));
    Node team = tree.find("Team").orElseThrow();
    assertEquals("first", team.attributes().get("rank"));
    assertEquals(3, team.attributes().get("level"));
    assertEquals("v1", team.attributes().get("depth"));
    assertEquals("v5", team.attributes().get("sort"));
    assertEquals(99, tree.find("Other").orElseThrow().attributes().get("depth"));
    assertEquals(List.of(), tree.check());
    tree.delete("Languages", Deletion.LIFT_CHILDREN);
    assertEquals(List.of(), tree.check());
    assertEquals("first", tree.find("Team").orElseThrow().attributes().get("rank"));
    assertEquals(List.of("Team", "Databases"), tree.children("Programming"));
  }

  @Test
  void aParentReferencesCollectionOfAnotherToolOpensAsItIs() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    c.insertMany(List.of(
        new Document("_id", "Books").append("parentId", null).append("position", 0),
        new Document("_id", "Programming").append("parentId", "Books").append("position", 0),
        new Document("_id", "Databases").append("parentId", "Programming").append("position", 1),
        new Document("_id", "Languages").append("parentId", "Programming").append("position", 0)));
    TreeOptions options = TreeOptions.defaults().withFieldName(TreeField.PARENT, "parentId")
        .withFieldName(TreeField.RANK, "position");
    assertEquals(Optional.of(TreePattern.PARENT_REFERENCES),
        TreePattern.recognise(c, options));
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(c, options);
    tree.ensureIndexes();
    assertEquals(List.of("Languages", "Databases"), tree.children("Programming"));
    assertEquals(List.of("Books", "Programming"), tree.ancestors("Databases"));
    assertEquals(List.of(), tree.check());
    tree.insert("MongoDB", Position.lastChildOf("Databases"), Map.of("rank", 5));
    tree.move("Databases", Position.firstRoot());
    assertEquals(List.of("Databases", "Books"), tree.roots());
    assertEquals(List.of(), tree.check());
    Document stored = c.find(Filters.eq("_id", "MongoDB")).first();
    assertEquals("Databases", stored.get("parentId"));
    assertTrue(stored.get("position") instanceof Number, stored.toJson());
    assertEquals(5, stored.get("rank"), "the user's rank is an attribute: " + stored.toJson());
    assertEquals(0, c.countDocuments(Filters.or(Filters.exists("parent"),
        Filters.exists("arborRank"))));
    assertEquals(List.of("Databases"), tree.ancestors("MongoDB"));
  }

  @Test
  void aNestedSetsCollectionWithLftAndRgtOpensChecksAndRepairs() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    // the usual nested-set layout of other tools: lft, rgt, parent_id, level
    c.insertMany(List.of(
        new Document("_id", "root").append("lft", 1).append("rgt", 8)
            .append("parent_id", null).append("level", 0),
        new Document("_id", "a").append("lft", 2).append("rgt", 5)
            .append("parent_id", "root").append("level", 1),
        new Document("_id", "a1").append("lft", 3).append("rgt", 4)
            .append("parent_id", "a").append("level", 2),
        new Document("_id", "b").append("lft", 6).append("rgt", 7)
            .append("parent_id", "root").append("level", 1)));
    TreeOptions options = TreeOptions.defaults().withFieldName(TreeField.LEFT, "lft")
        .withFieldName(TreeField.RIGHT, "rgt").withFieldName(TreeField.PARENT, "parent_id")
        .withFieldName(TreeField.DEPTH, "level");
    assertEquals(Optional.of(TreePattern.NESTED_SETS), TreePattern.recognise(c, options));
    MongoTree tree = TreePattern.NESTED_SETS.open(c, options);
    assertEquals(Tree.parse("root(a(a1) b)").toString(), tree.snapshot().toString());
    assertEquals(List.of("a", "a1", "b"), tree.descendants("root"));
    assertEquals(List.of("a", "b"), tree.descendants("root", 1));
    assertEquals(List.of(), tree.check());
    c.updateOne(Filters.eq("_id", "a1"), new Document("$set", new Document("level", 7)));
    assertEquals(1, tree.check().size());
    assertTrue(tree.check().get(0).toString().contains("a1"), tree.check().toString());
    tree.repair();
    assertEquals(List.of(), tree.check());
    assertEquals(2, c.find(Filters.eq("_id", "a1")).first().get("level", Number.class)
        .intValue());
    tree.move("b", Position.firstChildOf("a"));
    assertEquals(Tree.parse("root(a(b a1))").toString(), tree.snapshot().toString());
    assertEquals(0, c.countDocuments(Filters.or(Filters.exists("left"), Filters.exists("right"),
        Filters.exists("parent"), Filters.exists("arborDepth"))));
  }

  @Test
  void aCollectionReadWithTheDefaultNamesIsNotTakenForAnother() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeOptions options = TreeOptions.defaults().withFieldName(TreeField.ANCESTORS, "ancestorIds")
        .withFieldName(TreeField.PARENT, "parentId");
    TreePattern.ARRAY_OF_ANCESTORS.open(c, options).load(Fixtures.categories());
    assertEquals(Optional.of(TreePattern.ARRAY_OF_ANCESTORS), TreePattern.recognise(c, options));
    // with the default names nothing fits: no pattern is recognised, and a store that reads
    // the default names refuses to change what it cannot read as its own
    assertEquals(Optional.empty(), TreePattern.recognise(c));
    MongoTree defaults = TreePattern.ARRAY_OF_ANCESTORS.open(c);
    assertFalse(defaults.check().isEmpty());
  }

  @Test
  void namesThatCannotWorkAreRefusedWhenSetNamingTheOption() {
    for (String bad : new String[] {"", "$parent", "a.b", "_id", "arborOp", "arborLock",
        "arborJournal", "arborProbe", "x\0y"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TreeOptions.defaults().withFieldName(TreeField.PARENT, bad), bad);
      assertTrue(e.getMessage().contains("withFieldName(PARENT"), e.getMessage());
    }
    assertThrows(NullPointerException.class,
        () -> TreeOptions.defaults().withFieldName(null, "x"));
    assertThrows(NullPointerException.class,
        () -> TreeOptions.defaults().withFieldName(TreeField.PATH, null));
  }

  @Test
  void namesThatDoNotFitThePatternAreRefusedWhenTheStoreOpens() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TreePattern.PARENT_REFERENCES.open(c,
            TreeOptions.defaults().withFieldName(TreeField.PATH, "p")));
    assertTrue(e.getMessage().contains("withFieldName(PATH") && e.getMessage().contains(
        "PARENT_REFERENCES keeps no PATH"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> TreePattern.NESTED_SETS.open(c,
        TreeOptions.defaults().withFieldName(TreeField.LEFT, "bounds")
            .withFieldName(TreeField.RIGHT, "bounds")));
    assertTrue(e.getMessage().contains("cannot share a name"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> TreePattern.NESTED_SETS.open(c,
        TreeOptions.defaults().withFieldName(TreeField.LEFT, "right")));
    assertTrue(e.getMessage().contains("RIGHT is named 'right' too"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> TreePattern.MATERIALIZED_PATHS.open(c,
        TreeOptions.defaults().withFieldName(TreeField.PATH, "tenant").withScope("tenant", 1)));
    assertTrue(e.getMessage().contains("withScope(\"tenant\""), e.getMessage());
    // every pattern takes its own fields, and validator() and reservedNames() follow them
    for (TreePattern p : TreePattern.values()) {
      TreeOptions options = ScopedStoreContract.named(p);
      p.open(MongoTestServer.get().freshCollection(), options);
      List<String> renamed = new ArrayList<>();
      for (TreeField f : TreeField.of(p)) {
        renamed.add(ScopedStoreContract.NAMES.get(f));
        assertFalse(p.reservedNames(options).contains(f.defaultName()), p + " " + f);
      }
      assertTrue(p.reservedNames(options).containsAll(renamed), p.reservedNames(options)
          .toString());
      assertTrue(p.nameRefusal(renamed.get(0), true, options).isPresent());
      assertFalse(p.nameRefusal(renamed.get(0), true).isPresent());
    }
  }

  @Test
  void aTreeOfOtherNamesIsNotChangedByAStoreThatReadsTheDefaults() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeOptions options = TreeOptions.defaults().withFieldName(TreeField.PATH, "materialized");
    MongoTree named = TreePattern.MATERIALIZED_PATHS.open(c, options);
    named.load(Tree.parse("a(b c)"));
    MongoTree defaults = TreePattern.MATERIALIZED_PATHS.open(c);
    assertThrows(TreeException.class, () -> defaults.insert("x", Position.lastChildOf("a")));
    assertEquals(Tree.parse("a(b c)").toString(), named.snapshot().toString());
    assertEquals(List.of(), named.check());
  }
}
