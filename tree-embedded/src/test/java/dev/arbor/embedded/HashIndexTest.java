package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The index by itself: which queries it serves, and the candidates it gives. */
class HashIndexTest {
  private static HashIndex<Integer> index(String... fields) {
    return new HashIndex<>("i", Arrays.stream(fields).map(f -> new IndexKey(f, true)).toList(),
        UnaryOperator.identity());
  }

  private static Document doc(Object... kv) {
    Document d = new Document();
    for (int i = 0; i < kv.length; i += 2) {
      d.put((String) kv[i], kv[i + 1]);
    }
    return d;
  }

  private static Set<Integer> candidates(HashIndex<Integer> index, Document query) {
    assertTrue(index.canHandle(query), () -> "should serve " + query);
    return new HashSet<>((List<Integer>) index.getPositions(query));
  }

  @Test
  void servesEqualityAndInOfStringsAndObjectIdsAtTheTopOrInAnd() {
    HashIndex<Integer> index = index("parent", "rank");
    ObjectId oid = new ObjectId("5f0000000000000000000001");
    index.add(doc("_id", "a", "parent", "x", "rank", 1), 0, null);
    index.add(doc("_id", "b", "parent", "y", "rank", 2), 1, null);
    index.add(doc("_id", "c", "parent", oid), 2, null);
    index.add(doc("_id", "d"), 3, null);

    assertEquals(Set.of(0), candidates(index, doc("parent", "x")));
    assertEquals(Set.of(0), candidates(index, doc("parent", doc("$eq", "x"))));
    assertEquals(Set.of(0, 2), candidates(index, doc("parent", doc("$in", List.of("x", oid)))));
    assertEquals(Set.of(), candidates(index, doc("parent", doc("$in", List.of()))));
    assertEquals(Set.of(1), candidates(index, doc("$and", List.of(
        doc("_id", doc("$not", doc("$type", "object"))), doc("parent", "y")))));
    assertEquals(Set.of(1), candidates(index, doc("$and", List.of(doc("$and", List.of(
        doc("parent", "y")))))));
    // Other conditions are conjuncts the index leaves to the matcher.
    assertEquals(Set.of(0), candidates(index, doc("parent", "x", "rank", doc("$gt", 5),
        "$or", List.of(doc("a", 1)))));
  }

  /**
   * A null in a query ({@code {parent: null}}, the roots of parent references) is served: its
   * candidates are the documents whose value is null or missing, or an array (which may hold a
   * null); the matcher decides among them.
   */
  @Test
  void servesNullByTheDocumentsWithoutAValueOrWithAnArray() {
    HashIndex<Integer> index = index("parent", "rank");
    index.add(doc("parent", null), 0, null);
    index.add(doc("rank", 1), 1, null);
    index.add(doc("parent", List.of("a")), 2, null);
    index.add(doc("parent", "a"), 3, null);
    index.add(doc("parent", List.of()), 4, null);
    index.add(doc("parent", doc("x", null)), 5, null);
    assertEquals(Set.of(0, 1, 2, 4), candidates(index, doc("parent", null)));
    assertEquals(Set.of(0, 1, 2, 4), candidates(index, doc("parent", doc("$eq", null))));
    assertEquals(Set.of(0, 1, 2, 3, 4), candidates(index, doc("parent",
        doc("$in", Arrays.asList("a", null)))));
    assertEquals(Set.of(1), candidates(index, doc("parent", null, "rank", 1)));
    index.updateInPlace(doc("rank", 1), doc("parent", "b", "rank", 1), 1, null);
    assertEquals(Set.of(0, 2, 4), candidates(index, doc("parent", null)));
  }

  @Test
  void leavesToTheScanWhatAHashKeyCannotDecide() {
    HashIndex<Integer> index = index("parent", "rank");
    for (Document q : List.of(
        doc("parent", true), doc("parent", new org.bson.types.Decimal128(1)),
        doc("parent", doc("x", "a")), doc("parent", List.of("a")),
        doc("parent", new BsonRegularExpression("^a")), doc("parent", doc("$regex", "^a")),
        doc("parent", doc("$ne", "a")), doc("parent", doc("$gt", "a")),
        doc("parent", doc("$in", List.of("a", true))),
        doc("parent", doc("$eq", "a", "$ne", "b")),
        doc("rank", "a"), // not a leading key
        doc("parent.x", "a"), // a path
        doc("$or", List.of(doc("parent", "a"), doc("parent", "b"))),
        doc("parent", "a", "$where", "true"), // unknown to the matcher: its error, not ours
        doc("$and", List.of()), doc("$and", "x"), doc())) {
      assertFalse(index.canHandle(q), () -> "should not serve " + q);
    }
  }

  @Test
  void servesNumbersUnderTheValueTheMatcherComparesThemBy() {
    HashIndex<Integer> index = index("tree", "parent");
    index.add(doc("tree", 0, "parent", "x"), 0, null);
    index.add(doc("tree", 0L, "parent", "x"), 1, null);
    index.add(doc("tree", -0.0, "parent", "y"), 2, null);
    index.add(doc("tree", List.of(1.0, "a"), "parent", "x"), 3, null);
    index.add(doc("tree", 9007199254740993L, "parent", "x"), 4, null);
    index.add(doc("tree", "0", "parent", "x"), 5, null);
    // 0, 0L, 0.0 and -0.0 are equal in the matcher: one key
    for (Object zero : List.of(0, 0L, 0.0, -0.0)) {
      assertEquals(Set.of(0, 1, 2), candidates(index, doc("tree", zero)), () -> "tree " + zero);
    }
    assertEquals(Set.of(0, 1), candidates(index, doc("tree", 0.0, "parent", "x")));
    assertEquals(Set.of(3), candidates(index, doc("tree", doc("$in", List.of(1, 7L)))));
    // a long no double holds stays itself, equal to no double (as in the matcher)
    assertEquals(Set.of(4), candidates(index, doc("tree", 9007199254740993L)));
    assertEquals(Set.of(), candidates(index, doc("tree", 9007199254740992.0)));
    assertEquals(Set.of(5), candidates(index, doc("tree", "0")));
  }

  @Test
  void indexesEveryStringOfAnArrayAndOfNestedArrays() {
    HashIndex<Integer> index = index("ancestors");
    index.add(doc("_id", 1, "ancestors", List.of("r", "a", List.of("n"))), 0, null);
    index.add(doc("_id", 2, "ancestors", List.of("r", doc("x", "a"))), 1, null);
    assertEquals(Set.of(0, 1), candidates(index, doc("ancestors", "r")));
    assertEquals(Set.of(0), candidates(index, doc("ancestors", "a")));
    assertEquals(Set.of(0), candidates(index, doc("ancestors", doc("$in", List.of("n")))));
    assertEquals(2, index.cost(Equalities.of(doc("ancestors", "r"))));
  }

  @Test
  void aCompoundIndexServesItsLeadingEqualitiesTogether() {
    HashIndex<Integer> index = index("tree", "parent", "rank");
    index.add(doc("tree", "t1", "parent", "x"), 0, null);
    index.add(doc("tree", "t2", "parent", "x"), 1, null);
    index.add(doc("tree", "t1", "parent", "y"), 2, null);
    index.add(doc("tree", List.of("t1", "t2"), "parent", List.of("x", "y")), 3, null);
    assertEquals(Set.of(0, 3), candidates(index, doc("tree", "t1", "parent", "x")));
    assertEquals(Set.of(0, 2, 3), candidates(index, doc("tree", "t1")));
    assertEquals(Set.of(1, 3), candidates(index, doc("$and", List.of(doc("parent", "x"),
        doc("tree", "t2")))));
    // Two conditions on one field may hold for different elements of an array: one is used.
    assertTrue(candidates(index, doc("tree", "t1", "$and", List.of(doc("tree", "t2"),
        doc("parent", "y")))).contains(3));
    assertTrue(candidates(index, doc("tree", "t1", "$and", List.of(doc("tree", "t2"))))
        .contains(3));
    assertFalse(index.canHandle(doc("parent", "x"))); // not a leading prefix
  }

  @Test
  void followsUpdatesRemovalsAndReusedPositions() {
    // one field: the index learns a removed document's values from the document
    HashIndex<Integer> index = index("parent");
    Document a = doc("_id", "a", "parent", "x");
    index.add(a, 0, null);
    Document a2 = doc("_id", "a", "parent", List.of("y", "z"));
    index.updateInPlace(a, a2, 0, null);
    assertEquals(Set.of(), candidates(index, doc("parent", "x")));
    assertEquals(Set.of(0), candidates(index, doc("parent", "z")));
    index.forget(0, a2);
    assertEquals(Set.of(), candidates(index, doc("parent", "z")));
    assertTrue(index.isEmpty());
    Document b = doc("_id", "b", "parent", "y");
    index.add(b, 0, null);
    index.forget(0, b);
    index.add(doc("_id", "c", "parent", "x"), 0, null); // position 0 reused after a removal
    assertEquals(Set.of(), candidates(index, doc("parent", "y")));
    assertEquals(Set.of(0), candidates(index, doc("parent", "x")));
    assertEquals(1, index.getCount());
    index.drop();
    assertTrue(index.isEmpty());
    assertEquals(Set.of(), candidates(index, doc("parent", "x")));
  }
}
