package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import de.bwaldvogel.mongo.backend.DocumentComparator;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ServerAdapter#sortByKeys} puts documents in exactly the order of the server's own sort
 * (its {@code DocumentComparator} in a stable sort), ties kept in their order: documents with
 * values of mixed types (numbers of three types equal across types, strings, ObjectIds, arrays,
 * subdocuments, null, missing fields), sorted on one to three fields, dotted paths included,
 * ascending and descending. Where the server's comparator is no total order (some mixes of
 * arrays and other values) and its sort fails, this one fails too.
 */
class SortByKeysTest {
  private static final List<Object> VALUES = Arrays.asList("a", "b", "A", "", "a,b,", 1, 1.0, 2L,
      0, -0.0, Double.NaN, null, List.of(1, "a"), List.of(), List.of("b", "a"),
      new Document("c", 1), new Document("c", "a"), new ObjectId(), true, false);
  private static final List<String> FIELDS = List.of("a", "b", "b.c", "s.0", "_id", "none");

  @Test
  void theSameOrderAsTheServersSort() {
    int[] ordered = {0};
    qt().withExamples(2_000).forAll(longs().all()).checkAssert(seed -> {
      Random r = new Random(seed);
      List<Document> documents = new ArrayList<>();
      int n = r.nextInt(40);
      for (int i = 0; i < n; i++) {
        Document d = new Document("_id", r.nextInt(3) == 0 ? value(r) : i);
        for (String f : List.of("a", "b", "s")) {
          if (r.nextInt(5) > 0) {
            d.put(f, f.equals("b") && r.nextBoolean() ? new Document("c", value(r)) : value(r));
          }
        }
        documents.add(d);
      }
      Document orderBy = new Document();
      for (int k = 1 + r.nextInt(3); k > 0; k--) {
        Object direction = switch (r.nextInt(3)) {
          case 0 -> 1;
          case 1 -> -1L;
          default -> -1.0;
        };
        orderBy.put(FIELDS.get(r.nextInt(FIELDS.size())), direction);
      }
      List<Document> sorted = new ArrayList<>(documents);
      List<Document> expected;
      try {
        expected = documents.stream().sorted(new DocumentComparator(orderBy)).toList();
      } catch (IllegalArgumentException e) {
        // The server's comparator is no total order on some mixes of arrays and other types;
        // its sort then fails, and so must this one, on the same comparisons.
        assertThrows(IllegalArgumentException.class,
            () -> ServerAdapter.sortByKeys(sorted, orderBy), () -> "sorted by " + orderBy);
        return;
      }
      ServerAdapter.sortByKeys(sorted, orderBy);
      ordered[0]++;
      assertEquals(expected.size(), sorted.size());
      for (int i = 0; i < expected.size(); i++) {
        assertSame(expected.get(i), sorted.get(i), () -> "sorted by " + orderBy + ": " + sorted
            + ", the server's sort: " + expected);
      }
    });
    // most examples are sorted by both, not refused by both
    assertTrue(ordered[0] >= 1_900, "examples sorted: " + ordered[0]);
  }

  @Test
  void onlySortsOnFieldsWithNumberDirections() {
    assertTrue(ServerAdapter.sortsByKeys(new Document("a", 1).append("b.c", -1.0)));
    assertFalse(ServerAdapter.sortsByKeys(null));
    assertFalse(ServerAdapter.sortsByKeys(new Document()));
    assertFalse(ServerAdapter.sortsByKeys(new Document("$natural", -1)));
    assertFalse(ServerAdapter.sortsByKeys(new Document("a", new Document("$meta", "x"))));
  }

  private static Object value(Random r) {
    return VALUES.get(r.nextInt(VALUES.size()));
  }
}
