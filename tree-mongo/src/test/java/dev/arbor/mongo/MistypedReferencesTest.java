package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Trees of typed ids ({@link TreeOptions#withIdType}) whose reference fields (parent, ancestors,
 * children) hold another form of an id, as other tools write them: the string form of an {@code
 * ObjectId} or a UUID, a long written as a string or a double (mongosh's numbers), a legacy UUID
 * (binary subtype 3). Such a reference is never believed by one read and missed by another, nor
 * orphaned by a delete: {@code check()} names it in the words of the id type, reads and changes
 * that meet it see it or refuse naming the node, and {@code repair()} rewrites it to the id type
 * when it names an existing node (found by a user trial of trees made by other tools: before,
 * check() and repair() said nothing, children() left the node out while snapshot() showed it, and
 * delete() of its parent left it orphaned).
 */
class MistypedReferencesTest {
  private static final String ROOT_OID = "65a000000000000000000001";

  /** A type, and the name of another form of its ids that other tools write. */
  static Stream<Arguments> otherForms() {
    return Stream.of(
        Arguments.of(NodeIdType.OBJECT_ID, "string"),
        Arguments.of(NodeIdType.LONG, "string"),
        Arguments.of(NodeIdType.LONG, "double"),
        Arguments.of(NodeIdType.UUID, "string"),
        Arguments.of(NodeIdType.UUID, "legacy"),
        // the string in upper case, as some tools write hexadecimal digits ("65A0…"): before,
        // named by check() but matched by no query, so children() missed the node and a delete
        // of its parent orphaned it
        Arguments.of(NodeIdType.OBJECT_ID, "upper"),
        Arguments.of(NodeIdType.UUID, "upper"));
  }

  private static String id(NodeIdType type, int i) {
    return switch (type) {
      case OBJECT_ID -> String.format("65a%021x", i);
      case LONG -> Long.toString(i);
      case UUID -> new java.util.UUID(0xABCDEFL * i, -i - 1L).toString();
      case STRING -> "n" + i;
    };
  }

  /** The stored value of {@code id} in a tree of {@code type}. */
  private static BsonValue typed(NodeIdType type, String id) {
    return switch (type) {
      case OBJECT_ID -> new BsonObjectId(new ObjectId(id));
      case LONG -> new BsonInt64(Long.parseLong(id));
      case UUID -> new BsonBinary(java.util.UUID.fromString(id), UuidRepresentation.STANDARD);
      case STRING -> new BsonString(id);
    };
  }

  /** {@code id} in the other form {@code form}. */
  private static BsonValue other(NodeIdType type, String form, String id) {
    return switch (form) {
      case "string" -> new BsonString(id);
      case "upper" -> new BsonString(id.toUpperCase(java.util.Locale.ROOT));
      case "double" -> new BsonDouble(Long.parseLong(id));
      case "legacy" -> new BsonBinary(java.util.UUID.fromString(id),
          UuidRepresentation.JAVA_LEGACY);
      default -> throw new AssertionError(form);
    };
  }

  /** How the messages name the id type. */
  private static String words(NodeIdType type) {
    return switch (type) {
      case OBJECT_ID -> "not an ObjectId";
      case LONG -> "not a long";
      case UUID -> "not a UUID";
      case STRING -> "not a string";
    };
  }

  private static MongoCollection<BsonDocument> raw(MongoCollection<Document> c) {
    return c.withDocumentClass(BsonDocument.class);
  }

  private static long nodes(MongoCollection<Document> c) {
    return c.countDocuments(Filters.not(Filters.type("_id", BsonType.DOCUMENT)));
  }

  private static void assertNames(String id, String words, TreeException e) {
    assertTrue(e.getMessage().contains("'" + id + "'") && e.getMessage().contains(words),
        e.getMessage());
  }

  @ParameterizedTest
  @MethodSource("otherForms")
  void aParentInAnotherFormOfTheIdIsNamedSeenOrRefusedAndRepairedNeverOrphaned(NodeIdType type,
      String form) {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    String r = id(type, 1);
    String a = id(type, 2);
    String b = id(type, 3);
    raw(c).insertMany(List.of(
        new BsonDocument("_id", typed(type, r)).append("parent", BsonNull.VALUE)
            .append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", typed(type, a)).append("parent", other(type, form, r))
            .append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", typed(type, b)).append("parent", typed(type, r))
            .append("arborRank", new BsonInt32(1))));
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(c,
        TreeOptions.defaults().withIdType(type));

    List<Problem> problems = tree.check();
    assertEquals(1, problems.size(), problems.toString());
    assertEquals(a, problems.get(0).nodeId(), problems.toString());
    String message = problems.get(0).message();
    assertTrue(message.startsWith("parent is " + words(type)) && message.contains("repair()")
        && !message.contains("not a string"), message);

    // the reads that query by parent see it; those that read its parent refuse naming it
    assertEquals(List.of(a, b), tree.children(r));
    assertNames(a, words(type), assertThrows(TreeException.class, tree::snapshot));
    assertNames(a, words(type), assertThrows(TreeException.class, () -> tree.descendants(r)));
    assertNames(a, words(type), assertThrows(TreeException.class, () -> tree.find(a)));
    assertNames(a, words(type), assertThrows(TreeException.class, () -> tree.ancestors(a)));
    // a delete of its parent, a move of its parent below it refuse naming it, and write nothing
    TreeException refused = assertThrows(TreeException.class, () -> tree.delete(r));
    assertNames(a, words(type), refused);
    assertNames(a, words(type), assertThrows(TreeException.class,
        () -> tree.move(r, dev.arbor.core.Position.lastChildOf(a))));
    assertEquals(3, nodes(c));
    assertEquals(other(type, form, r),
        raw(c).find(Filters.eq("_id", typed(type, a))).first().get("parent"));

    assertEquals(List.of(), tree.repair());
    BsonDocument stored = raw(c).find(Filters.eq("_id", typed(type, a))).first();
    assertEquals(typed(type, r), stored.get("parent"), stored.toJson());
    Tree expected = Tree.builder().add(r, null, Map.of()).add(a, r, Map.of())
        .add(b, r, Map.of()).build();
    assertEquals(expected, tree.snapshot());
    assertEquals(3, tree.delete(r));
    assertEquals(0, nodes(c));
  }

  /** A reference in another form to no node of the tree is named, and left by repair(). */
  @Test
  void aParentInAnotherFormNamingNoNodeStaysListedByRepair() {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    String missing = "65a0000000000000000000ff";
    MongoTree tree = rootAndChild(c, new BsonString(missing));
    List<Problem> problems = tree.repair();
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).message().contains("not an ObjectId")
        && problems.get(0).message().contains(missing)
        && problems.get(0).message().contains("no node"), problems.toString());
    assertEquals(new BsonString(missing), raw(c).find(Filters.eq("_id",
        typed(NodeIdType.OBJECT_ID, id(NodeIdType.OBJECT_ID, 2)))).first().get("parent"));
  }

  /**
   * A parent in a form Arbor does not read as an id (an ObjectId's digits in mixed case; all in
   * upper case is another form, see {@link #otherForms}) is named in the words of the id type and
   * left by repair() (before: told as an orphan of '65A0…').
   */
  @Test
  void aParentInAFormArborDoesNotReadIsNamedAndLeftByRepair() {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    String mixed = "65A00000000000000000000b";
    MongoTree tree = rootAndChild(c, new BsonString(mixed));
    List<Problem> problems = tree.repair();
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).message().startsWith("parent is not an ObjectId: the string \""
        + mixed) && problems.get(0).message().contains("repair() leaves it"),
        problems.toString());
    assertEquals(new BsonString(mixed), raw(c).find(Filters.eq("_id",
        typed(NodeIdType.OBJECT_ID, id(NodeIdType.OBJECT_ID, 2)))).first().get("parent"));
  }

  @ParameterizedTest
  @MethodSource("otherForms")
  void anAncestorInAnotherFormOfTheIdIsNamedSeenByTheSubtreeAndRepaired(NodeIdType type,
      String form) {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    String r = id(type, 1);
    String k = id(type, 2);
    List<BsonDocument> docs = List.of(
        new BsonDocument("_id", typed(type, r)).append("parent", BsonNull.VALUE)
            .append("ancestors", new BsonArray()).append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", typed(type, k)).append("parent", typed(type, r))
            .append("ancestors", new BsonArray(List.of(other(type, form, r))))
            .append("arborRank", new BsonInt32(0)));
    raw(c).insertMany(docs);
    MongoTree tree = TreePattern.ARRAY_OF_ANCESTORS.open(c,
        TreeOptions.defaults().withIdType(type));
    List<Problem> problems = tree.check();
    assertEquals(1, problems.size(), problems.toString());
    assertEquals(k, problems.get(0).nodeId(), problems.toString());
    assertTrue(problems.get(0).message().contains(words(type))
        && !problems.get(0).message().contains("not a string"), problems.toString());
    assertEquals(List.of(k), tree.descendants(r));
    assertNames(k, words(type), assertThrows(TreeException.class, () -> tree.ancestors(k)));
    // a delete of the root takes the node whose ancestors name it
    assertEquals(2, tree.delete(r));
    assertEquals(0, nodes(c));

    raw(c).insertMany(docs);
    assertEquals(List.of(), tree.repair());
    assertEquals(new BsonArray(List.of(typed(type, r))),
        raw(c).find(Filters.eq("_id", typed(type, k))).first().get("ancestors"));
    assertEquals(List.of(r), tree.ancestors(k));
  }

  @ParameterizedTest
  @MethodSource("otherForms")
  void aChildInAnotherFormOfTheIdIsNamedRefusedAndRepairedNotDropped(NodeIdType type,
      String form) {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    String r = id(type, 1);
    String k = id(type, 2);
    raw(c).insertMany(List.of(
        new BsonDocument("_id", typed(type, r))
            .append("children", new BsonArray(List.of(other(type, form, k))))
            .append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", typed(type, k)).append("children", new BsonArray())));
    MongoTree tree = TreePattern.CHILD_REFERENCES.open(c,
        TreeOptions.defaults().withIdType(type));
    List<Problem> problems = tree.check();
    assertFalse(problems.isEmpty());
    assertEquals(r, problems.get(0).nodeId(), problems.toString());
    assertTrue(problems.get(0).message().contains(words(type))
        && problems.get(0).message().contains("repair()"), problems.toString());
    assertNames(r, words(type), assertThrows(TreeException.class, () -> tree.children(r)));
    assertNames(r, words(type), assertThrows(TreeException.class, tree::snapshot));
    assertNames(r, words(type), assertThrows(TreeException.class, () -> tree.delete(r)));
    assertEquals(2, nodes(c));

    assertEquals(List.of(), tree.repair());
    assertEquals(new BsonArray(List.of(typed(type, k))),
        raw(c).find(Filters.eq("_id", typed(type, r))).first().get("children"));
    assertEquals(Tree.builder().add(r, null, Map.of()).add(k, r, Map.of()).build(),
        tree.snapshot());
  }

  /** Nested sets derive the parent from the intervals: one in another form is named, rewritten. */
  @ParameterizedTest
  @MethodSource("otherForms")
  void aNestedSetsParentInAnotherFormIsNamedAndRewrittenFromTheIntervals(NodeIdType type,
      String form) {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    String r = id(type, 1);
    String k = id(type, 2);
    raw(c).insertMany(List.of(
        new BsonDocument("_id", typed(type, r)).append("parent", BsonNull.VALUE)
            .append("left", new BsonInt64(1)).append("right", new BsonInt64(4))
            .append("arborDepth", new BsonInt64(0)),
        new BsonDocument("_id", typed(type, k)).append("parent", other(type, form, r))
            .append("left", new BsonInt64(2)).append("right", new BsonInt64(3))
            .append("arborDepth", new BsonInt64(1))));
    MongoTree tree = TreePattern.NESTED_SETS.open(c, TreeOptions.defaults().withIdType(type));
    List<Problem> problems = tree.check();
    assertEquals(1, problems.size(), problems.toString());
    assertEquals(k, problems.get(0).nodeId(), problems.toString());
    assertTrue(problems.get(0).message().startsWith("parent is " + words(type))
        && problems.get(0).message().contains("repair()"), problems.toString());
    assertEquals(List.of(), tree.repair());
    assertEquals(typed(type, r),
        raw(c).find(Filters.eq("_id", typed(type, k))).first().get("parent"));
    assertEquals(Tree.builder().add(r, null, Map.of()).add(k, r, Map.of()).build(),
        tree.snapshot());
  }

  /**
   * A path of a typed tree holding an id not in its canonical form (written by another tool):
   * check() names it and the type (before, it told an orphan of a parent that does not exist).
   */
  @Test
  void aPathHoldingAnIdNotInTheCanonicalFormOfTheTypeIsNamed() {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    raw(c).insertMany(List.of(
        new BsonDocument("_id", new BsonInt64(1)).append("path", BsonNull.VALUE)
            .append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", new BsonInt64(2)).append("path", new BsonString(",01,"))
            .append("arborRank", new BsonInt32(0))));
    MongoTree tree = TreePattern.MATERIALIZED_PATHS.open(c,
        TreeOptions.defaults().withIdType(NodeIdType.LONG));
    List<Problem> problems = tree.check();
    assertEquals(1, problems.size(), problems.toString());
    assertEquals("2", problems.get(0).nodeId(), problems.toString());
    assertTrue(problems.get(0).message().contains("'01'")
        && problems.get(0).message().contains("LONG"), problems.toString());
  }

  /**
   * A document whose _id is the string form of an ObjectId, in a tree of ObjectIds, is no node,
   * whatever read meets it: check() names it, parent references leave it out of every read (as
   * a document of another id type), the array of ancestors' reads that meet it refuse naming it
   * (before: scans read it as a node, which no query by id found).
   */
  @Test
  void aDocumentWhoseIdIsTheStringFormOfAnObjectIdIsNoNode() {
    String x = id(NodeIdType.OBJECT_ID, 2);
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    raw(c).insertMany(List.of(
        new BsonDocument("_id", typed(NodeIdType.OBJECT_ID, ROOT_OID))
            .append("parent", BsonNull.VALUE).append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", new BsonString(x))
            .append("parent", typed(NodeIdType.OBJECT_ID, ROOT_OID))
            .append("arborRank", new BsonInt32(0))));
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(c,
        TreeOptions.defaults().withIdType(NodeIdType.OBJECT_ID));
    List<Problem> problems = tree.check();
    assertEquals(1, problems.size(), problems.toString());
    assertEquals(x, problems.get(0).nodeId(), problems.toString());
    assertTrue(problems.get(0).message().startsWith("_id is not an ObjectId: the string"),
        problems.toString());
    Tree root = Tree.builder().add(ROOT_OID, null, Map.of()).build();
    assertEquals(root, tree.snapshot());
    assertEquals(List.of(), tree.children(ROOT_OID));
    assertEquals(List.of(), tree.descendants(ROOT_OID));
    assertEquals(java.util.Optional.empty(), tree.find(x));

    MongoCollection<Document> a = MongoTestServer.get().scratchCollection();
    raw(a).insertMany(List.of(
        new BsonDocument("_id", typed(NodeIdType.OBJECT_ID, ROOT_OID))
            .append("parent", BsonNull.VALUE).append("ancestors", new BsonArray())
            .append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", new BsonString(x))
            .append("parent", typed(NodeIdType.OBJECT_ID, ROOT_OID))
            .append("ancestors", new BsonArray(List.of(typed(NodeIdType.OBJECT_ID, ROOT_OID))))
            .append("arborRank", new BsonInt32(0))));
    MongoTree ancestors = TreePattern.ARRAY_OF_ANCESTORS.open(a,
        TreeOptions.defaults().withIdType(NodeIdType.OBJECT_ID));
    assertEquals(1, ancestors.check().size(), ancestors.check().toString());
    TreeException e = assertThrows(TreeException.class, () -> ancestors.descendants(ROOT_OID));
    assertTrue(e.getMessage().contains(x) && e.getMessage().contains("check()"),
        e.getMessage());
    assertEquals(List.of(), ancestors.repair().stream().filter(p -> !p.nodeId().equals(x))
        .toList());
  }

  /**
   * A tree of longs written by mongosh, whose numbers are doubles: check() names the _ids and
   * parents as not longs (before, it said "not a non-empty string", the words of string trees).
   */
  @Test
  void doublesInATreeOfLongsAreNamedInTheWordsOfLongs() {
    MongoCollection<Document> c = MongoTestServer.get().scratchCollection();
    raw(c).insertMany(List.of(
        new BsonDocument("_id", new BsonDouble(1)).append("parent", BsonNull.VALUE),
        new BsonDocument("_id", new BsonDouble(2)).append("parent", new BsonDouble(1))));
    MongoTree tree = TreePattern.PARENT_REFERENCES.open(c,
        TreeOptions.defaults().withIdType(NodeIdType.LONG));
    List<Problem> problems = tree.check();
    assertEquals(2, problems.size(), problems.toString());
    for (Problem p : problems) {
      assertTrue(p.message().startsWith("_id is not a long: the double")
          && !p.message().contains("string"), p.toString());
    }
  }

  /**
   * Parent references with ObjectId ids in {@code c}: the root and one node whose {@code parent}
   * is {@code parent}, as another tool wrote them; the store opened on them.
   */
  private static MongoTree rootAndChild(MongoCollection<Document> c, BsonValue parent) {
    raw(c).insertMany(List.of(
        new BsonDocument("_id", typed(NodeIdType.OBJECT_ID, ROOT_OID))
            .append("parent", BsonNull.VALUE).append("arborRank", new BsonInt32(0)),
        new BsonDocument("_id", typed(NodeIdType.OBJECT_ID, id(NodeIdType.OBJECT_ID, 2)))
            .append("parent", parent).append("arborRank", new BsonInt32(0))));
    return TreePattern.PARENT_REFERENCES.open(c,
        TreeOptions.defaults().withIdType(NodeIdType.OBJECT_ID));
  }
}
