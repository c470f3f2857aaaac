package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.arbor.core.Deletion;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Several trees in one collection ({@link TreeOptions#withScope}): the option is checked at open,
 * trees with the same ids do not see each other, each has its own lock, and every command a
 * scoped store sends carries the scope equality.
 */
class ScopedTreesTest {
  private static final String FIELD = "tenant";

  private static TreeOptions scoped(Object value) {
    return TreeOptions.defaults().withScope(FIELD, value);
  }

  // ------------------------------------------------------------------ the option

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aFieldThePatternReservesIsRefusedAtOpen(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    List<String> names = new ArrayList<>(pattern.reservedNames());
    names.addAll(List.of("_id", "arborOther", "a.b", "$tenant", "", "x\0y"));
    for (String name : names) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> pattern.open(c, TreeOptions.defaults().withScope(name, "t")), name);
      assertTrue(e.getMessage().contains("withScope"), e.getMessage());
    }
  }

  @Test
  void aValueThatCannotSelectByEqualityIsRefused() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    assertTrue(assertThrows(IllegalArgumentException.class, () -> scoped(null)).getMessage()
        .contains("withScope"));
    // a UUID cannot be encoded by a registry without a UUID representation (the default)
    for (Object bad : List.of(List.of(1, 2), Pattern.compile("a.*"), new Object(),
        new Document("$gt", 1), UUID.randomUUID(), new Document("x", new Document("$gt", 1)),
        new Document("x", List.of(new Document("$in", List.of(1)))))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TreePattern.MATERIALIZED_PATHS.open(c, scoped(bad)), String.valueOf(bad));
      assertTrue(e.getMessage().contains("withScope"), e.getMessage());
    }
    for (Object good : List.of("acme", 7, 8L, new ObjectId(), new java.util.Date(0), true,
        new Document("org", "acme"))) {
      MongoTree t = TreePattern.MATERIALIZED_PATHS.open(c, scoped(good));
      t.insert("r", Position.lastRoot());
      assertEquals(List.of("r"), t.roots(), String.valueOf(good));
    }
  }

  /**
   * A scoped {@code _id} holds the scope's value, not its field: a tree scoped by another field
   * with the same value would share the lock document and the nodes' ids. Every call of such a
   * store, opened before or after the other tree's lock exists, is refused naming the other
   * tree's field (before, every call threw a {@code NullPointerException} or met a duplicate
   * key); nothing is checked at open, where every command carries the scope equality. The other
   * tree is untouched.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aTreeScopedByAnotherFieldWithTheSameValueIsRefusedNamingTheField(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTree before = pattern.open(c, TreeOptions.defaults().withScope("org", "acme"));
    MongoTree tenant = pattern.open(c, scoped("acme"));
    tenant.load(Tree.parse("a(b c)"));
    MongoTree after = pattern.open(c, TreeOptions.defaults().withScope("org", "acme"));
    for (MongoTree other : List.of(before, after)) {
    for (java.util.function.Supplier<Object> call : List.<java.util.function.Supplier<Object>>of(
        other::size, other::roots, other::snapshot, () -> {
          other.insert("x", Position.lastRoot());
          return null;
        }, () -> {
          other.load(Tree.parse("x"));
          return null;
        })) {
      TreeException e = assertThrows(TreeException.class, call::get);
      assertTrue(e.getMessage().contains("'tenant'"), e::toString);
    }
    }
    assertEquals(Tree.parse("a(b c)"), tenant.snapshot());
    assertEquals(List.of(), tenant.check());
  }

  @Test
  void theScopeFieldIsReservedInTheScopedTree() {
    MongoTree t = TreePattern.NESTED_SETS.open(MongoTestServer.get().freshCollection(),
        scoped("t"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> t.insert("r", Position.lastRoot(), Map.of(FIELD, "other")));
    assertTrue(e.getMessage().contains("reserved"), e.getMessage());
  }

  // ------------------------------------------------------------------ isolation

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void treesWithTheSameIdsDoNotSeeEachOther(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTree a = pattern.open(c, scoped("A"));
    MongoTree b = pattern.open(c, scoped("B"));
    a.load(Tree.parse("a(b c) d"));
    assertEquals(0, b.size());
    assertTrue(b.find("a").isEmpty());
    assertThrows(dev.arbor.core.NodeNotFoundException.class, () -> b.children("a"));
    b.load(Tree.parse("d(a)")); // loads into its own, empty tree
    b.insert("b", Position.lastChildOf("a"));
    assertThrows(DuplicateNodeException.class, () -> b.insert("b", Position.lastRoot()));
    b.move("a", Position.lastRoot());
    b.update("b", Map.of("name", "B's b"));
    assertEquals(2, b.delete("a", Deletion.SUBTREE));
    assertEquals(Tree.parse("a(b c) d").toString(), a.snapshot().toString());
    assertEquals(List.of(), a.check());
    assertTrue(a.find("b").orElseThrow().attributes().isEmpty());
    assertEquals(4, a.size());
    assertEquals(List.of("d"), b.roots());
    assertEquals(List.of(), b.repair());
    assertEquals(2, c.countDocuments(Filters.eq("_id.arbor", "lock")), "one lock per tree");
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aStreamedReadOfOneTreeReturnsItsNodesOnly(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTree a = pattern.open(c, scoped("A"));
    MongoTree b = pattern.open(c, scoped("B"));
    Tree first = Tree.parse("a(b(c d) e) f(g)");
    Tree second = Tree.parse("g(f(e) d) c(b a)");
    a.load(first);
    b.load(second);
    try (java.util.stream.Stream<Node> entries = a.entries()) {
      assertEquals(first.entries(), entries.toList());
    }
    try (java.util.stream.Stream<Node> entries = b.entries()) {
      assertEquals(second.entries(), entries.toList());
    }
  }

  // ------------------------------------------------------------------ locks

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aWriterHoldingOneTreesLockDoesNotBlockAnother(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore a = (MongoTreeStore) pattern.open(c, scoped("A"));
    MongoTree b = pattern.open(c, scoped("B").withLockWait(Duration.ofSeconds(5)));
    a.insert("r", Position.lastRoot());
    b.insert("r", Position.lastRoot());
    TreeLock.Hold h = a.lock.acquire("held by the test");
    try {
      long t0 = System.nanoTime();
      b.insert("x", Position.lastChildOf("r"));
      b.move("x", Position.lastRoot());
      b.update("x", Map.of("n", 1));
      assertEquals(List.of("r", "x"), b.roots());
      b.delete("x");
      long millis = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(millis < 4_000, "tree B waited " + millis + " ms");
      // the lock is held: another store of tree A waits for it, and gives up
      MongoTree a2 = pattern.open(c, scoped("A").withLockWait(Duration.ofMillis(300)));
      assertThrows(TreeException.class, () -> a2.insert("y", Position.lastRoot()));
    } finally {
      a.lock.release(h);
      h.close();
    }
    a.insert("y", Position.lastRoot());
    assertEquals(List.of("r", "y"), a.roots());
    assertEquals(List.of("r"), b.roots());
  }

  // ------------------------------------------------------------------ commands

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void everyCommandCarriesTheScope(TreePattern pattern) {
    ConcurrentLinkedQueue<BsonDocument> commands = new ConcurrentLinkedQueue<>();
    CommandListener listener = new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent event) {
        commands.add(event.getCommand().clone());
      }
    };
    try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new com.mongodb.ConnectionString(MongoTestServer.get().uri()))
        .addCommandListener(listener).build())) {
      MongoCollection<Document> base = MongoTestServer.get().freshCollection();
      MongoCollection<Document> c = client.getDatabase(base.getNamespace().getDatabaseName())
          .getCollection(base.getNamespace().getCollectionName());
      MongoTree other = pattern.open(c, scoped(2));
      other.load(Tree.parse("a(b c) e"));
      commands.clear();
      MongoTree t = pattern.open(c, scoped("acme"));
      workload(t);
      String collection = c.getNamespace().getCollectionName();
      BsonValue value = new BsonString("acme");
      Map<String, Integer> seen = new TreeMap<>();
      for (BsonDocument command : commands) {
        String name = command.getFirstKey();
        BsonValue target = command.get(name);
        if (!target.isString() || !target.asString().getValue().equals(collection)) {
          continue; // hello, endSessions, ...
        }
        if (name.equals("killCursors") || name.equals("listIndexes")) {
          continue; // closes a cursor a scoped query opened; reads the _id index's collation
        }
        seen.merge(name, 1, Integer::sum);
        switch (name) {
          case "find" -> assertScoped(command.getDocument("filter"), value, command);
          case "count", "distinct" -> assertScoped(command.getDocument("query"), value, command);
          case "findAndModify" -> assertScoped(command.getDocument("query"), value, command);
          case "aggregate" -> assertScoped(command.getArray("pipeline").get(0).asDocument()
              .getDocument("$match"), value, command);
          case "update" -> command.getArray("updates").forEach(
              u -> assertScoped(u.asDocument().getDocument("q"), value, command));
          case "delete" -> command.getArray("deletes").forEach(
              d -> assertScoped(d.asDocument().getDocument("q"), value, command));
          case "insert" -> command.getArray("documents").forEach(
              d -> assertEquals(value, d.asDocument().get(FIELD), command.toJson()));
          case "createIndexes" -> command.getArray("indexes").forEach(
              i -> assertEquals(FIELD, i.asDocument().getDocument("key").getFirstKey(),
                  command.toJson()));
          default -> throw new AssertionError("unexpected command " + command.toJson());
        }
      }
      for (String kind : List.of("find", "aggregate", "update", "delete", "insert",
          "createIndexes")) {
        assertTrue(seen.containsKey(kind), "the workload sent no " + kind + ": " + seen);
      }
      assertEquals(Tree.parse("a(b c) e").toString(), other.snapshot().toString());
      BsonDocument filter = t.subtreeFilter("p").toBsonDocument(BsonDocument.class,
          c.getCodecRegistry());
      assertScoped(filter, value, filter);
      assertEquals(2, c.countDocuments(t.subtreeFilter("p")), "the subtree filter on the data");
    }
  }

  private static void workload(MongoTree t) {
    t.ensureIndexes();
    t.load(Tree.parse("a(b(c) d) e"));
    t.insert("f", Position.lastChildOf("a"), Map.of("name", "F"));
    t.insert("g", Position.before("f"));
    t.update("f", Map.of("name", "G"));
    t.move("b", Position.lastChildOf("e"));
    t.roots();
    t.children("a");
    t.ancestors("c");
    t.descendants("e", Integer.MAX_VALUE);
    t.descendants("e", 1);
    t.depth("c");
    t.isDescendant("c", "e");
    t.subtree("e", Integer.MAX_VALUE);
    t.descendantNodes("e", 1);
    t.descendantNodes("a", Integer.MAX_VALUE, Filters.eq("name", "G"));
    t.childNodes("a");
    t.childNodes("a", "d", 10);
    t.ancestorNodes("c");
    t.childCount("a");
    t.descendantCount("e");
    t.isLeaf("c");
    t.siblings("d");
    t.previousSibling("d");
    t.nextSibling("d");
    t.find("c");
    t.find("missing");
    t.subtreeFilter("e");
    t.size();
    t.snapshot();
    t.check();
    t.repair();
    t.delete("f");
    t.delete("b", Deletion.LIFT_CHILDREN);
    t.delete("g", Deletion.LEAF_ONLY);
    t.delete("e");
    t.insert("p", Position.lastRoot());
    t.insert("q", Position.lastChildOf("p"));
  }

  /** {@code filter} selects by the scope equality: at its top, or in a top-level {@code $and}. */
  private static void assertScoped(BsonDocument filter, BsonValue value, BsonDocument command) {
    assertTrue(carries(filter, value), "no scope equality in " + command.toJson());
  }

  private static boolean carries(BsonDocument filter, BsonValue value) {
    if (value.equals(filter.get(FIELD))) {
      return true;
    }
    if (filter.isArray("$and")) {
      for (BsonValue each : filter.getArray("$and")) {
        if (each.isDocument() && carries(each.asDocument(), value)) {
          return true;
        }
      }
    }
    return false;
  }

  /** A node type of the typed view. */
  public record Forum(@org.bson.codecs.pojo.annotations.BsonId String id, String title) {}

  @Test
  void typedTreesOfOneCollectionKeepTheirOwnNodes() {
    MongoCollection<Document> base = MongoTestServer.get().freshCollection();
    MongoCollection<Forum> c = base.withDocumentClass(Forum.class);
    TypedTree<Forum> acme = TreePattern.ARRAY_OF_ANCESTORS.openTyped(c, scoped("acme"));
    TypedTree<Forum> globex = TreePattern.ARRAY_OF_ANCESTORS.openTyped(c, scoped("globex"));
    acme.insert(new Forum("general", "Acme talk"), Position.lastRoot());
    acme.insert(new Forum("help", "Acme help"), Position.lastChildOf("general"));
    globex.insert(new Forum("general", "Globex talk"), Position.lastRoot());
    assertEquals("Acme talk", acme.find("general").orElseThrow().title());
    assertEquals("Globex talk", globex.find("general").orElseThrow().title());
    assertEquals(List.of(new Forum("general", "Acme talk")), acme.ancestorNodes("help"));
    assertTrue(globex.find("help").isEmpty());
    globex.update(new Forum("general", "Globex forum"));
    assertEquals("Acme talk", acme.find("general").orElseThrow().title());
    assertEquals(3, base.countDocuments(Filters.and(Filters.exists(FIELD),
        Filters.exists("_id.id"))), "node documents");
  }

  @Test
  void anUnscopedStoresCheckSaysWhichScopeReadsAScopedNode() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    TreePattern.MATERIALIZED_PATHS.open(c, TreeOptions.defaults().withScope(FIELD, "acme"))
        .insert("General", Position.lastRoot());
    List<dev.arbor.core.Problem> problems = TreePattern.MATERIALIZED_PATHS.open(c).check();
    assertEquals(1, problems.size(), problems::toString);
    assertEquals("_id is not a non-empty string (a node of the tree of scope \"acme\"? a store"
        + " opened with TreeOptions.withScope(\"tenant\", \"acme\") reads it; do not mix"
        + " scoped and unscoped stores in one collection)", problems.get(0).message());
  }

  @Test
  void anUnscopedStoreKeepsItsLayout() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTree t = TreePattern.MATERIALIZED_PATHS.open(c, TreeOptions.defaults());
    t.insert("r", Position.lastRoot());
    Document d = c.find(Filters.eq("_id", "r")).first();
    assertFalse(d == null || d.containsKey(FIELD));
  }
}
