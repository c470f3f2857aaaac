package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Deletion;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Node;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStoreContract;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.FieldNames;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Node ids stored as {@code ObjectId}s, UUIDs and longs ({@link TreeOptions#withIdType}): every
 * pattern and type scripted against the reference through loads, grafts, inserts at every
 * position, moves, deletes, updates and every read, the stored documents checked raw and
 * against the validator; a collection written by another tool with {@code ObjectId}s; and the
 * refusal of ids that are not canonical for the type.
 */
class IdTypesTest {
  static Stream<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    for (TreePattern p : TreePattern.values()) {
      for (NodeIdType t : List.of(NodeIdType.OBJECT_ID, NodeIdType.UUID, NodeIdType.LONG)) {
        out.add(Arguments.of(p, t));
      }
    }
    return out.stream();
  }

  private static String id(NodeIdType type, int i) {
    return IdTypesPropertiesTest.canonical(type, i);
  }

  /** The outline {@code outline} of numbers as a tree of the canonical ids of {@code type}. */
  private static Tree tree(NodeIdType type, String outline) {
    Tree numbers = Tree.parse(outline);
    Tree.Builder b = Tree.builder();
    for (Node e : numbers.entries()) {
      int n = Integer.parseInt(e.id());
      b.add(id(type, n), e.parentId() == null ? null : id(type, Integer.parseInt(e.parentId())),
          n % 2 == 0 ? Map.of("n", n) : Map.of());
    }
    return b.build();
  }

  private static void agree(TreeStore store, InMemoryTreeStore reference, String where) {
    Tree expected = reference.snapshot();
    assertEquals(expected, store.snapshot(), where);
    assertEquals(expected.entries(), store.entries().toList(), where);
    TreeStoreContract.assertReadsAgree(store, expected);
    for (String id : expected.ids()) {
      assertEquals(reference.subtree(id, 1), store.subtree(id, 1), where);
      assertEquals(reference.descendants(id, 2), store.descendants(id, 2), where);
    }
    assertEquals(List.of(), store.check(), where);
  }

  /** Every how many changes of a script {@link #both} checks every read ({@link #agree}). */
  private static final int READS_EVERY = 3;

  /** The changes made by {@link #both} in this test. */
  private int changes;

  /**
   * Makes {@code change} on both: the same outcome, the same tree and a sound store after every
   * change, and every read {@link #agree agreeing} every {@value #READS_EVERY} changes (each
   * script also ends with an {@link #agree}).
   */
  private void both(TreeStore store, InMemoryTreeStore reference,
      Consumer<TreeStore> change, String where) {
    Class<?> expected = outcome(() -> change.accept(reference));
    Class<?> actual = outcome(() -> change.accept(store));
    assertEquals(expected, actual, where);
    if (++changes % READS_EVERY == 0) {
      agree(store, reference, where);
    } else {
      assertEquals(reference.snapshot(), store.snapshot(), where);
      assertEquals(List.of(), store.check(), where);
    }
  }

  private static Class<?> outcome(Runnable r) {
    try {
      r.run();
      return null;
    } catch (TreeException | IllegalArgumentException e) {
      return e.getClass();
    }
  }

  private static BsonType bsonType(NodeIdType type) {
    return switch (type) {
      case STRING -> BsonType.STRING;
      case OBJECT_ID -> BsonType.OBJECT_ID;
      case UUID -> BsonType.BINARY;
      case LONG -> BsonType.INT64;
    };
  }

  private static void assertTyped(NodeIdType type, BsonValue v, String where) {
    assertEquals(bsonType(type), v.getBsonType(), where);
    if (type == NodeIdType.UUID) {
      assertEquals(BsonBinarySubType.UUID_STANDARD.getValue(), v.asBinary().getType(), where);
    }
  }

  /** Every node document has typed ids in {@code _id}, the parent, children and ancestors. */
  private static void assertStoredTyped(TreePattern pattern, NodeIdType type,
      MongoCollection<Document> c) {
    FieldNames names = FieldNames.DEFAULTS;
    Document validator = pattern.validator(TreeOptions.defaults().withIdType(type));
    int nodes = 0;
    for (BsonDocument d : c.withDocumentClass(BsonDocument.class).find()) {
      assertNull(SchemaCheck.problem(validator, d), () -> "validator: " + d.toJson());
      if (d.get("_id").isDocument()) {
        continue; // Arbor's own documents
      }
      nodes++;
      assertTyped(type, d.get("_id"), d.toJson());
      if (d.containsKey(names.parent) && !d.get(names.parent).isNull()) {
        assertTyped(type, d.get(names.parent), d.toJson());
      }
      for (String f : List.of(names.children, names.ancestors)) {
        if (d.containsKey(f)) {
          for (BsonValue each : d.getArray(f)) {
            assertTyped(type, each, d.toJson());
          }
        }
      }
      if (d.containsKey(names.path) && d.get(names.path).isString()) {
        String path = d.getString(names.path).getValue();
        assertTrue(path.startsWith(","), path); // canonical strings inside the path string
      }
    }
    assertTrue(nodes > 0);
  }

  @ParameterizedTest
  @MethodSource("cases")
  void everyOperationAgreesWithTheReference(TreePattern pattern, NodeIdType type) {
    TreeOptions options = TreeOptions.defaults().withIdType(type);
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    MongoTree store = pattern.open(c, options);
    store.ensureIndexes();
    InMemoryTreeStore reference = new InMemoryTreeStore();
    both(store, reference, s -> s.load(tree(type, "0(1(2 3) 4(5)) 6(7 8(9))")), "load");
    both(store, reference, s -> s.graft(id(type, 4), tree(type, "10(11 12)")), "graft tree");
    both(store, reference, s -> s.graft(null, tree(type, "13(14)").entries().iterator()),
        "graft stream as roots");
    both(store, reference, s -> s.graft(id(type, 2), tree(type, "15(16)").entries().iterator()),
        "graft stream");
    List<Position> positions = List.of(Position.firstRoot(), Position.lastRoot(),
        Position.firstChildOf(id(type, 1)), Position.lastChildOf(id(type, 1)),
        Position.before(id(type, 3)), Position.after(id(type, 3)));
    int n = 20;
    for (Position p : positions) {
      String x = id(type, n++);
      both(store, reference, s -> s.insert(x, p, Map.of("t", x)), "insert " + x + " at " + p);
    }
    both(store, reference, s -> s.insert(id(type, 1), Position.firstRoot()), "duplicate");
    both(store, reference, s -> s.move(id(type, 1), Position.lastChildOf(id(type, 8))),
        "subtree move");
    both(store, reference, s -> s.move(id(type, 8), Position.lastChildOf(id(type, 2))),
        "move into own descendant");
    both(store, reference, s -> s.move(id(type, 4), Position.firstRoot()), "move to root");
    both(store, reference, s -> s.move(id(type, 22), Position.before(id(type, 10))),
        "move before");
    both(store, reference, s -> s.move(id(type, 7), Position.after(id(type, 5))), "move after");
    both(store, reference, s -> s.update(id(type, 5), Map.of("n", 55)), "update");
    both(store, reference, s -> s.delete(id(type, 10), Deletion.LEAF_ONLY), "leaf only refused");
    both(store, reference, s -> s.delete(id(type, 10), Deletion.LIFT_CHILDREN), "lift");
    both(store, reference, s -> s.delete(id(type, 1)), "delete subtree");
    assertEquals(List.of(), store.repair());
    agree(store, reference, "after repair");
    assertStoredTyped(pattern, type, c);

    // a streamed load of the same tree into another collection stores the same
    MongoCollection<Document> other = MongoTestServer.get().scratchCollection();
    MongoTree loaded = pattern.open(other, options);
    assertEquals(reference.size(), loaded.load(reference.snapshot().entries().iterator()));
    agree(loaded, reference, "streamed load");
    assertStoredTyped(pattern, type, other);
  }

  private static void assertAllValid(Document validator, MongoCollection<Document> c,
      String where) {
    for (BsonDocument d : c.withDocumentClass(BsonDocument.class).find()) {
      assertNull(SchemaCheck.problem(validator, d), () -> where + ": " + d.toJson());
    }
  }

  /**
   * As {@code ValidatorTest}: after every change of a typed tree, and after a crash at every
   * step of it (journal and fence documents included), the collection passes the validator of
   * the options.
   */
  @ParameterizedTest
  @MethodSource("cases")
  void everyStepOfEveryChangeWritesDocumentsTheValidatorAccepts(TreePattern pattern,
      NodeIdType type) {
    TreeOptions options = TreeOptions.defaults().withIdType(type);
    Document validator = pattern.validator(options);
    Tree fixture = tree(type, "1(2(3 4) 5(6)) 7(8)");
    List<Consumer<MongoTreeStore>> changes = List.of(
        s -> s.insert(id(type, 24), Position.lastChildOf(id(type, 2)), Map.of("title", "X")),
        s -> s.move(id(type, 2), Position.lastChildOf(id(type, 7))),
        s -> s.move(id(type, 5), Position.firstRoot()),
        s -> s.update(id(type, 3), Map.of("title", "C")),
        s -> s.delete(id(type, 2)),
        s -> s.delete(id(type, 5), Deletion.LIFT_CHILDREN),
        s -> s.graft(id(type, 2), tree(type, "30(31 32) 33").entries().iterator()));
    for (int i = 0; i < changes.size(); i++) {
      Consumer<MongoTreeStore> change = changes.get(i);
      MongoCollection<Document> clean = MongoTestServer.get().scratchCollection();
      SwitchableSender countingSender = new SwitchableSender();
      MongoTreeStore counting = (MongoTreeStore) pattern.open(clean,
          options.capabilities(clean).sender(countingSender).loadBatchSize(2));
      counting.load(fixture);
      assertAllValid(validator, clean, pattern + " after load");
      StepwiseSender counter = StepwiseSender.crashingAfter(-1);
      countingSender.target = counter;
      change.accept(counting);
      assertAllValid(validator, clean, pattern + " change " + i);
      for (int k = 0; k < counter.written; k++) {
        MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
        SwitchableSender crashingSender = new SwitchableSender();
        MongoTreeStore crashing = (MongoTreeStore) pattern.open(c,
            options.capabilities(c).sender(crashingSender).loadBatchSize(2));
        crashing.load(fixture);
        crashingSender.target = StepwiseSender.crashingAfter(k);
        assertThrows(StepwiseSender.Crash.class, () -> change.accept(crashing));
        assertAllValid(validator, c, pattern + " change " + i + ", crashed after " + k);
      }
    }
  }

  /**
   * With update pipelines (run by {@link PipelineEmulator}), the literal ancestors and path
   * prefixes a subtree move writes are stored typed too.
   */
  @ParameterizedTest
  @MethodSource("cases")
  void subtreeMovesByPipelineWriteTypedIds(TreePattern pattern, NodeIdType type) {
    if (pattern != TreePattern.ARRAY_OF_ANCESTORS && pattern != TreePattern.MATERIALIZED_PATHS) {
      return;
    }
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, new ServerCapabilities(c,
        ServerCapabilities.Mode.PROBE, ServerCapabilities.Mode.ON).idType(type)
        .sender(StepwiseSender.crashingAfter(-1)));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    both(store, reference, s -> s.load(tree(type, "0(1(2(3 4)) 5) 6(7)")), "load");
    both(store, reference, s -> s.move(id(type, 1), Position.lastChildOf(id(type, 7))),
        "deeper");
    both(store, reference, s -> s.move(id(type, 2), Position.firstRoot()), "to root");
    both(store, reference, s -> s.move(id(type, 6), Position.after(id(type, 3))), "under");
    agree(store, reference, "at the end");
    assertStoredTyped(pattern, type, c);
  }

  /**
   * In a store of UUID ids, a document whose {@code _id} is a UUID in the legacy Java subtype 3
   * (not the standard subtype 4 the store reads and writes) is named by check() in extended JSON,
   * with a hint that tells the subtype, not that a UUID store would read it (this one is);
   * repair() writes nothing to it and reads do not throw a ClassCastException. (Found by a trial
   * on collections made by others.)
   */
  @Test
  void aLegacySubtype3UuidIdInAUuidStoreIsNamedForItsSubtypeAndLeftAlone() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    Document legacy = new Document("_id", new org.bson.types.Binary((byte) 3, new byte[16]))
        .append("parent", null);
    c.insertOne(legacy);
    TreeStore store = TreePattern.PARENT_REFERENCES.open(c,
        TreeOptions.defaults().withIdType(NodeIdType.UUID));
    assertEquals(List.of(), store.roots());
    store.snapshot();
    List<dev.arbor.core.Problem> problems = store.check();
    assertEquals(1, problems.size(), problems::toString);
    assertTrue(problems.get(0).nodeId().startsWith("{\"$binary\""), problems::toString);
    String said = problems.get(0).message();
    assertTrue(said.contains("subtype 3") && !said.contains("a store opened with"), said);
    store.repair();
    assertEquals(legacy, c.find(Filters.type("_id", "binData")).first());
  }

  @Test
  void aCollectionOfAnotherToolWithObjectIdsOpensAsItIs() {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    ObjectId books = new ObjectId();
    ObjectId programming = new ObjectId();
    ObjectId databases = new ObjectId();
    ObjectId languages = new ObjectId();
    c.insertMany(List.of(
        new Document("_id", books).append("parentId", null).append("position", 0),
        new Document("_id", programming).append("parentId", books).append("position", 0),
        new Document("_id", databases).append("parentId", programming).append("position", 1)
            .append("title", "Databases"),
        new Document("_id", languages).append("parentId", programming).append("position", 0)));
    TreeOptions options = TreeOptions.defaults().withIdType(NodeIdType.OBJECT_ID)
        .withFieldName(TreeField.PARENT, "parentId").withFieldName(TreeField.RANK, "position");
    assertEquals(Optional.of(TreePattern.PARENT_REFERENCES), TreePattern.recognise(c, options));
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(c, options);
    tree.ensureIndexes();
    assertEquals(List.of(books.toHexString()), tree.roots());
    assertEquals(List.of(languages.toHexString(), databases.toHexString()),
        tree.children(programming.toHexString()));
    assertEquals(List.of(books.toHexString(), programming.toHexString()),
        tree.ancestors(databases.toHexString()));
    assertEquals("Databases",
        tree.find(databases.toHexString()).orElseThrow().attributes().get("title"));
    assertEquals(List.of(), tree.check());

    ObjectId mongo = new ObjectId();
    tree.insert(mongo.toHexString(), Position.lastChildOf(databases.toHexString()),
        Map.of("title", "MongoDB"));
    tree.move(databases.toHexString(), Position.firstRoot());
    tree.delete(languages.toHexString());
    assertEquals(List.of(databases.toHexString(), books.toHexString()), tree.roots());
    assertEquals(List.of(databases.toHexString()), tree.ancestors(mongo.toHexString()));
    assertEquals(List.of(), tree.check());

    Document stored = c.find(Filters.eq("_id", mongo)).first();
    assertEquals(databases, stored.get("parentId"), stored.toJson());
    assertEquals(null, c.find(Filters.eq("_id", databases)).first().get("parentId"));
    assertEquals(books, c.find(Filters.eq("_id", programming)).first().get("parentId"));
    assertEquals(0, c.countDocuments(Filters.type("_id", BsonType.STRING)));
    assertEquals(0, c.countDocuments(Filters.type("parentId", BsonType.STRING)));
    assertEquals(4, c.countDocuments(Filters.type("_id", BsonType.OBJECT_ID)));
    assertEquals(0, c.countDocuments(Filters.eq("_id", languages)));
  }

  /** The example of docs/patterns.md ("Id types"), as it stands there. */
  @Test
  void docsExample() {
    MongoCollection<Document> collection = MongoTestServer.get().scratchCollection();
    // docs-id-types:begin
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(collection, TreeOptions.defaults()
        .withIdType(NodeIdType.OBJECT_ID).withFieldName(TreeField.PARENT, "parentId"));
    String id = new ObjectId().toHexString();
    tree.insert(id, Position.lastRoot());   // stored as {_id: ObjectId(id), parentId: null, ...}
    // docs-id-types:end
    Document stored = collection.find(Filters.eq("_id", new ObjectId(id))).first();
    assertTrue(stored != null && stored.containsKey("parentId")
        && stored.get("parentId") == null, String.valueOf(stored));
    assertEquals(List.of(id), tree.roots());
  }

  @Test
  void thePatternsPageShowsTheExample() throws IOException {
    DocsPages.assertShown(DocsPages.page("patterns.md"), DocsPages.testSource("IdTypesTest.java"),
        "docs-id-types");
  }

  /** Long ids stored as 32-bit integers by another tool are read, and written as longs. */
  @Test
  void int32IdsAreReadAsLongs() {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    c.insertMany(List.of(
        new Document("_id", 1).append("parent", null).append("arborRank", 0),
        new Document("_id", 2).append("parent", 1).append("arborRank", 0),
        new Document("_id", 3).append("parent", 1).append("arborRank", 1)));
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(c,
        TreeOptions.defaults().withIdType(NodeIdType.LONG));
    assertEquals(List.of("2", "3"), tree.children("1"));
    assertEquals(List.of("1"), tree.ancestors("3"));
    assertEquals(List.of(), tree.check());
    tree.insert("4", Position.lastChildOf("2"));
    tree.move("3", Position.firstChildOf("2"));
    assertEquals(List.of("3", "4"), tree.children("2"));
    assertEquals(List.of("1", "2"), tree.ancestors("4"));
    assertEquals(List.of(), tree.check());
    assertEquals(2L, c.find(Filters.eq("_id", 4L)).first().get("parent"));
    assertThrows(NodeNotFoundException.class, () -> tree.children("01"));
  }

  static Stream<Arguments> refused() {
    return Stream.of(
        Arguments.of(NodeIdType.OBJECT_ID, "65A0000000000000000000FF"),
        Arguments.of(NodeIdType.OBJECT_ID, "65a00000000000000000ff"),
        Arguments.of(NodeIdType.OBJECT_ID, "books"),
        Arguments.of(NodeIdType.UUID, "123E4567-E89B-12D3-A456-426614174000"),
        Arguments.of(NodeIdType.UUID, "123e4567e89b12d3a456426614174000"),
        Arguments.of(NodeIdType.UUID, "not-a-uuid"),
        Arguments.of(NodeIdType.LONG, "007"),
        Arguments.of(NodeIdType.LONG, "+5"),
        Arguments.of(NodeIdType.LONG, "-0"),
        Arguments.of(NodeIdType.LONG, "99999999999999999999"),
        Arguments.of(NodeIdType.LONG, "1.0"));
  }

  @ParameterizedTest
  @MethodSource("refused")
  void idsNotCanonicalForTheTypeAreRefusedNamingThemAndNothingIsWritten(NodeIdType type,
      String bad) {
    for (TreePattern pattern : TreePattern.values()) {
      MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
      MongoTree tree = pattern.open(c, TreeOptions.defaults().withIdType(type));
      String good = id(type, 1);
      List<Runnable> writes = List.of(
          () -> tree.insert(bad, Position.lastRoot()),
          () -> tree.load(Tree.builder().add(good, null).add(bad, good).build()),
          () -> tree.load(Tree.builder().add(good, null).add(bad, good).build().entries()
              .iterator()));
      for (Runnable w : writes) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, w::run);
        assertTrue(e.getMessage().contains("'" + bad + "'") && e.getMessage().contains(
            type.toString()), e.getMessage());
        assertEquals(0, c.countDocuments(Filters.not(Filters.type("_id", BsonType.DOCUMENT))),
            pattern + ": nothing written");
      }
      tree.load(tree(type, "1(2 3)"));
      long before = c.countDocuments();
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> tree.graft(good, Tree.builder().add(id(type, 9), null).add(bad, id(type, 9))
              .build()));
      assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
      assertEquals(before, c.countDocuments(), pattern + ": nothing written by the graft");
      // a read, move or delete of such an id finds no node
      assertEquals(Optional.empty(), tree.find(bad));
      assertThrows(NodeNotFoundException.class, () -> tree.children(bad));
      assertThrows(NodeNotFoundException.class, () -> tree.ancestors(bad));
      assertThrows(NodeNotFoundException.class, () -> tree.move(bad, Position.lastRoot()));
      assertThrows(NodeNotFoundException.class,
          () -> tree.move(good, Position.lastChildOf(bad)));
      assertThrows(NodeNotFoundException.class, () -> tree.delete(bad));
      assertEquals(tree(type, "1(2 3)"), tree.snapshot());
    }
  }

  /**
   * A store opened without the id type of the tree in its collection sees no node: it refuses
   * to write into it, naming the option (before, it wrote a string-id node beside the tree of
   * longs, which the right store then reported as a problem: found by a new user's trial). A
   * document of another id type that is not a node of the pattern (a settings document) does
   * not stop a tree of its own.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aStoreOfAnotherIdTypeRefusesToWriteNamingTheOption(TreePattern pattern) {
    LongsAndStrings two = LongsAndStrings.of(pattern, "1(2 3)");
    TreeStore longs = two.longs();
    TreeStore strings = two.strings();
    TreeException e = assertThrows(TreeException.class,
        () -> strings.insert("x", Position.lastRoot()));
    assertTrue(e.getMessage().contains("withIdType(NodeIdType.LONG)")
        && e.getMessage().contains("--id-type long"), e.getMessage());
    assertEquals(Tree.parse("1(2 3)"), longs.snapshot());
    assertEquals(List.of(), longs.check());

    MongoCollection<Document> other = MongoTestServer.get().freshCollection();
    other.insertOne(new Document("_id", 7L).append("kind", "settings"));
    TreeStore fresh = pattern.open(other);
    fresh.insert("x", Position.lastRoot());
    assertEquals(List.of("x"), fresh.roots());
  }

  /** A tree of long ids in a fresh collection, and a store of that collection opened without. */
  private record LongsAndStrings(TreeStore longs, TreeStore strings) {
    static LongsAndStrings of(TreePattern pattern, String tree) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      TreeStore longs = pattern.open(c, TreeOptions.defaults().withIdType(NodeIdType.LONG));
      longs.load(Tree.parse(tree));
      return new LongsAndStrings(longs, pattern.open(c));
    }
  }

  /**
   * A store opened without the id type of the tree in its collection reads an empty tree, every
   * read alike, and {@code check()} names the option for each node (before, child references'
   * {@code roots()} and {@code entries()} threw a {@link ClassCastException}, and nested sets'
   * {@code roots()} named {@code repair()}, which is not what the collection needs).
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aStoreOfAnotherIdTypeReadsAnEmptyTreeAndCheckNamesTheOption(TreePattern pattern) {
    LongsAndStrings two = LongsAndStrings.of(pattern, "1(2(4) 3)");
    TreeStore strings = two.strings();
    assertEquals(Tree.parse(""), strings.snapshot());
    assertEquals(List.of(), strings.roots());
    assertEquals(List.of(), strings.entries().toList());
    assertEquals(0, strings.size());
    assertEquals(Optional.empty(), strings.find("1"));
    assertThrows(NodeNotFoundException.class, () -> strings.children("1"));
    assertThrows(NodeNotFoundException.class, () -> strings.ancestors("2"));
    List<dev.arbor.core.Problem> problems = strings.check();
    assertEquals(4, problems.size(), problems.toString());
    for (dev.arbor.core.Problem p : problems) {
      assertTrue(p.message().contains("withIdType(NodeIdType.LONG)"), p.toString());
    }
    assertEquals(Tree.parse("1(2(4) 3)"), two.longs().snapshot());
  }

  /**
   * Parent references of a collection where another tool wrote a document of another id type
   * naming a node of the tree as its parent (an {@code ObjectId} beside string ids, a legacy
   * UUID, subtype 3, beside UUIDs): reads show the tree's own nodes (a user trial found a {@code
   * ClassCastException} in {@code descendants} and {@code snapshot}).
   */
  @Test
  void aDocumentOfAnotherIdTypeUnderANodeIsNotReadAsANode() {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    TreeStore strings = TreePattern.PARENT_REFERENCES.open(c);
    strings.load(Tree.parse("a(b)"));
    c.insertOne(new Document("_id", new org.bson.types.ObjectId()).append("parent", "a")
        .append("arborRank", 5));
    assertEquals(List.of("b"), strings.descendants("a"));
    assertEquals(Tree.parse("a(b)"), strings.snapshot());
    assertEquals(Tree.parse("a(b)"), strings.subtree("a", 5));

    MongoCollection<Document> u = MongoTestServer.get().scratchCollection();
    TreeStore uuids = TreePattern.PARENT_REFERENCES.open(u,
        TreeOptions.defaults().withIdType(NodeIdType.UUID));
    String root = "123e4567-e89b-12d3-a456-426614174000";
    uuids.load(Tree.builder().add(root, null, Map.of()).build());
    u.insertOne(new Document("_id", new org.bson.types.Binary((byte) 3, new byte[16]))
        .append("parent", null).append("arborRank", 1));
    assertEquals(Tree.builder().add(root, null, Map.of()).build(), uuids.snapshot());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void anIdTypeWithAScopeIsRefusedAtOpenNamingTheOption(TreePattern pattern) {
    TreeOptions options = TreeOptions.defaults().withIdType(NodeIdType.UUID)
        .withScope("tenant", "t1");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> pattern.open(MongoTestServer.get().scratchCollection(), options));
    assertTrue(e.getMessage().contains("withIdType"), e.getMessage());
    assertTrue(TreeOptions.defaults().withIdType(NodeIdType.LONG).toString()
        .contains("idType=LONG"));
    assertEquals(TreeOptions.defaults().toString(),
        TreeOptions.defaults().withIdType(NodeIdType.STRING).toString());
  }
}
