package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A unique index of the user's besides {@code _id}. Arbor keeps its own documents (the tree's
 * lock, fences, journals) in the tree's collection, without the user's fields: a unique index
 * that indexes documents without its fields (not sparse, not partial) lets only one of them
 * exist. Such an index is named in a {@link TreeException} before a change writes anything, and
 * the tree stays as it was and readable. A unique index that leaves Arbor's documents out
 * (sparse, or partial on its fields) works, and a node it refuses is named with the index; the
 * tree is not left stuck.
 */
class ForeignUniqueIndexTest {
  private static final Tree NAMED = Tree.builder()
      .add("Books", null, Map.of("name", "Books"))
      .add("Programming", "Books", Map.of("name", "Programming"))
      .add("Databases", "Programming", Map.of("name", "Databases"))
      .add("Languages", "Programming", Map.of("name", "Languages"))
      .build();

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aUniqueIndexThatWouldRefuseArborsOwnDocumentsIsNamedBeforeAnythingIsWritten(
      TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeStore store = pattern.open(c);
    store.load(NAMED);
    c.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true));
    TreeStore fresh = pattern.open(c);
    long start = System.nanoTime();
    for (TreeStore s : List.of(fresh, pattern.open(c))) {
      TreeException e = assertThrows(TreeException.class, () -> s.insert("Python",
          Position.lastChildOf("Languages"), Map.of("name", "Python")));
      assertTrue(e.getMessage().contains("name_1") && e.getMessage().contains("partial"),
          e::getMessage);
      e = assertThrows(TreeException.class, () -> s.move("Databases", Position.lastRoot()));
      assertTrue(e.getMessage().contains("name_1"), e::getMessage);
      assertThrows(TreeException.class, s::ensureIndexes);
      assertEquals(NAMED, s.snapshot(), "nothing written");
      assertEquals(List.of("Databases", "Languages"), s.children("Programming"));
    }
    assertTrue(System.nanoTime() - start < 10_000_000_000L, "refused at once, not after a lease");

    // The index made sparse: Arbor's documents, which lack its field, are left out of it. (A
    // partial index, {name: {$exists: true}}, does the same on MongoDB; the embedded server
    // keeps a partial index's filter and indexes every document.)
    c.dropIndex("name_1");
    c.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true).sparse(true));
    fresh.insert("Python", Position.lastChildOf("Languages"), Map.of("name", "Python"));
    fresh.move("Databases", Position.lastRoot());
    assertEquals(List.of("Python"), store.children("Languages"));
    assertEquals(List.of(), store.check());
  }

  /**
   * An index created while a store is in use, before the store reads the indexes again: a change
   * that meets it fails naming it, and so does every change after it until it is fixed. A
   * change without journal is told not written and is not in the tree (on the embedded server,
   * which goes on after the refused fence, its insert ran and was taken back); a journaled one
   * leaves the tree stuck, naming the index, and {@code repair()} completes it once the index is
   * fixed. Then the tree goes on, whole.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void anIndexCreatedWhileAStoreIsInUseIsNamedByTheChangesThatMeetIt(TreePattern pattern) {
    indexCreatedWhileAStoreIsInUse(pattern, false);
  }

  /**
   * The same in a lane (a writer that met others): the lane's insert fence, a document of
   * Arbor's without the field, is refused by the index; the change fails naming it, and either
   * is not in the tree or leaves it stuck until {@code repair()}.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"PARENT_REFERENCES", "CHILD_REFERENCES",
      "ARRAY_OF_ANCESTORS", "MATERIALIZED_PATHS"})
  void anIndexCreatedWhileAStoreIsInUseIsNamedByTheChangesOfALane(TreePattern pattern) {
    indexCreatedWhileAStoreIsInUse(pattern, true);
  }

  private static void indexCreatedWhileAStoreIsInUse(TreePattern pattern, boolean inALane) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    dev.arbor.mongo.internal.ServerCapabilities capabilities =
        dev.arbor.mongo.internal.ServerCapabilities.probing(c).lease(300, 20_000);
    TreeStore store = pattern.open(c, inALane
        ? capabilities.subtreeLocks(true).optimisticChanges(false) : capabilities);
    store.load(NAMED);
    c.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true));
    // MongoDB's path leads a lone insert by the lock's claim, not by an insert fence: it needs
    // no second document of Arbor's and goes through. Where a fence is needed, it is refused.
    List<String> applied = new java.util.ArrayList<>();
    boolean stuck = false;
    for (String id : List.of("Python", "Ruby")) {
      try {
        store.insert(id, Position.lastChildOf("Languages"), Map.of("name", id));
        applied.add(id);
      } catch (TreeException e) {
        assertTrue(e.getMessage().contains("name_1"), e::toString);
        if (e.getMessage().contains("is stuck")) {
          if (!stuck) {
            applied.add(id); // the stuck change, committed: repair() completes it
          }
          stuck = true;
        } else {
          assertEquals(applied, store.children("Languages"), "told not written: " + e);
        }
      }
    }
    c.dropIndex("name_1");
    c.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true).sparse(true));
    assertEquals(List.of(), store.repair());
    assertEquals(applied, store.children("Languages"),
        "a stuck change is completed by repair(), one told not written is not there");
    store.insert("Go", Position.lastChildOf("Languages"), Map.of("name", "Go"));
    store.move("Databases", Position.lastRoot());
    List<String> languages = store.children("Languages");
    assertEquals("Go", languages.get(languages.size() - 1));
    assertEquals(List.of(), store.check());
  }

  /**
   * In a scoped tree, Arbor's own documents carry the scope's field: a sparse unique index on it
   * and a field of the user's still indexes them, and is refused.
   */
  @org.junit.jupiter.api.Test
  void aSparseIndexOnTheScopesFieldIsRefusedInAScopedTree() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeStore store = TreePattern.MATERIALIZED_PATHS.open(c,
        TreeOptions.defaults().withScope("tenant", "t1"));
    store.load(NAMED);
    c.createIndex(Indexes.ascending("tenant", "name"), new IndexOptions().unique(true)
        .sparse(true));
    TreeStore fresh = TreePattern.MATERIALIZED_PATHS.open(c,
        TreeOptions.defaults().withScope("tenant", "t1"));
    TreeException e = assertThrows(TreeException.class, () -> fresh.insert("Python",
        Position.lastChildOf("Languages"), Map.of("name", "Python")));
    assertTrue(e.getMessage().contains("tenant_1_name_1")
        && e.getMessage().contains("partialFilterExpression: {name:"), e::getMessage);
    assertEquals(NAMED, fresh.snapshot(), "nothing written");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aNodeRefusedByTheUsersUniqueIndexIsNamedAndTheTreeGoesOn(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreeStore store = pattern.open(c);
    store.load(NAMED);
    c.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true).sparse(true));
    RuntimeException e = assertThrows(RuntimeException.class, () -> store.insert("Again",
        Position.lastChildOf("Languages"), Map.of("name", "Books")));
    assertTrue(e.getMessage().contains("name_1"), e::toString);
    assertEquals(NAMED, store.snapshot(), "nothing written");
    store.insert("Python", Position.lastChildOf("Languages"), Map.of("name", "Python"));
    assertEquals(List.of("Python"), store.children("Languages"));
    assertEquals(List.of(), store.check());
  }
}
