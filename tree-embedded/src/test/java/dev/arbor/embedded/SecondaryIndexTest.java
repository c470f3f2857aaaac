package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The secondary indexes through the driver: used, built, kept, dropped, and shared. */
class SecondaryIndexTest {
  @TempDir
  Path dir;

  private static long served(EmbeddedMongo mongo, String collection) {
    return mongo.backend().resolveDatabase("d").resolveCollection(collection, true).getIndexes()
        .stream().filter(i -> i instanceof HashIndex).mapToLong(i -> ((HashIndex<?>) i).served())
        .sum();
  }

  private static MongoCollection<Document> collection(EmbeddedMongo mongo, String name) {
    return mongo.client().getDatabase("d").getCollection(name);
  }

  /**
   * The server keeps the index descriptions of every collection of a database in one collection
   * and reads it by {@code ns} to list, create, drop and rename a collection's indexes; in memory
   * those reads are served by an index of its own (before, each scanned the descriptions of every
   * collection of the database). With 60 collections of three indexes each, every listing, after
   * an index dropped by name, by key and all at once, a collection dropped and one renamed, is the
   * collection's own, in the order created, and each was read from the index.
   */
  @Test
  void inMemoryTheIndexDescriptionsAreReadByTheirCollectionsName() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      indexesOfSixtyCollections(mongo);
      var descriptions = mongo.backend().resolveDatabase("d")
          .resolveCollection(ServerAdapter.INDEXES_COLLECTION, true);
      long before = descriptions.getIndexes().stream().filter(i -> i instanceof HashIndex)
          .mapToLong(i -> ((HashIndex<?>) i).served()).sum();
      List<String> names = mongo.client().getDatabase("d").listCollectionNames()
          .into(new ArrayList<>());
      for (String name : names) {
        collection(mongo, name).listIndexes().first();
      }
      assertEquals(names.size(), descriptions.getIndexes().stream()
          .filter(i -> i instanceof HashIndex).mapToLong(i -> ((HashIndex<?>) i).served()).sum()
          - before, "listings served");
    }
  }

  /**
   * mongo-java-server 1.47's {@code dropIndexes} removed the description of every index of the
   * name dropped in the whole database: dropping {@code a_1} of one collection made every other
   * collection list its indexes without {@code a_1}, and their drop then failed ("Expected
   * [HashIndex[name=a_1]] to be empty"). The adapters drop the collection's own, in memory and in
   * a data directory.
   */
  @Test
  void droppingAnIndexLeavesTheIndexesOfTheDatabasesOtherCollections() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      indexesOfSixtyCollections(mongo);
      mongo.client().getDatabase("d").drop(); // the descriptions too, with their own index
      collection(mongo, "c0").createIndex(Indexes.ascending("a"));
      assertEquals(List.of("_id_", "a_1"), collection(mongo, "c0").listIndexes()
          .map(d -> d.getString("name")).into(new ArrayList<>()));
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir.resolve("data"))) {
      indexesOfSixtyCollections(mongo);
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir.resolve("data"))) {
      List<String> listed = collection(mongo, "c0").listIndexes().map(d -> d.getString("name"))
          .into(new ArrayList<>());
      listed.sort(null);
      assertEquals(List.of("_id_", "a_1", "b_1_a_1"), listed, "after a restart");
    }
  }

  /**
   * Sixty collections of three indexes, then one index dropped by name, one by key, all of one
   * collection, one collection dropped and one renamed: each collection lists its own (in any
   * order).
   */
  private static void indexesOfSixtyCollections(EmbeddedMongo mongo) {
    for (int i = 0; i < 60; i++) {
      MongoCollection<Document> c = collection(mongo, "c" + i);
      c.insertOne(new Document("_id", "x").append("a", i).append("b", i));
      c.createIndex(Indexes.ascending("a"));
      c.createIndex(Indexes.ascending("b", "a"));
    }
    collection(mongo, "c7").dropIndex("a_1");
    collection(mongo, "c8").dropIndex(Indexes.ascending("b", "a"));
    collection(mongo, "c9").dropIndexes();
    assertThrows(MongoException.class, () -> collection(mongo, "c10").dropIndex("nope"));
    collection(mongo, "c11").drop();
    collection(mongo, "c12").renameCollection(new MongoNamespace("d", "renamed"));
    for (String name : mongo.client().getDatabase("d").listCollectionNames()) {
      List<String> listed = collection(mongo, name).listIndexes()
          .map(d -> d.getString("name")).into(new ArrayList<>());
      listed.sort(null); // a data directory lists them in another order
      assertEquals(switch (name) {
        case "c7" -> List.of("_id_", "b_1_a_1");
        case "c8" -> List.of("_id_", "a_1");
        case "c9" -> List.of("_id_");
        default -> List.of("_id_", "a_1", "b_1_a_1");
      }, listed, name);
      collection(mongo, name).find(Filters.eq("a", 3)).first(); // served or scanned, answers
    }
    collection(mongo, "c13").drop(); // failed once a_1's description was gone
    assertEquals(0, collection(mongo, "c11").countDocuments());
  }

  /**
   * An {@code $or} whose every clause an index serves (the {@code _id} index, a hash index) reads
   * the union of their candidates, in the scan's order; one clause that no index serves leaves the
   * whole query to the scan. Either way the answer is the scan's.
   */
  @Test
  void anOrOfServedClausesReadsTheUnionOfTheirCandidates() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "or");
      insertTree(c, 20_000);
      c.createIndex(Indexes.ascending("parent", "rank"));
      List<org.bson.conversions.Bson> queries = List.of(
          Filters.or(Filters.in("_id", List.of("n9", "n5", "missing")), Filters.eq("parent", "n5")),
          Filters.or(Filters.eq("_id", "n19999"), Filters.eq("parent", "n2"),
              Filters.eq("parent", "n2")),
          Filters.or(Filters.eq("_id", "n5"), Filters.eq("rank", 7)),
          // an $or in a top-level $and beside equalities (as a scoped tree sends it): each
          // clause is served with the equalities added ({parent, rank} for the compound index)
          new Document("parent", "n5").append("$and", List.of(new Document("$or", List.of(
              new Document("rank", 41), new Document("rank", 42), new Document("_id", "n43"))))),
          new Document("rank", new Document("$gte", 0)).append("$and", List.of(new Document(
              "$or", List.of(new Document("_id", "n5"), new Document("parent", "n5"))))),
          // an $or inside an $and inside the top-level $and, beside another $or no index
          // serves and an $expr (as a fenced step sends it: the subtree, the step's guard, the
          // lease's deadline): the served one is used
          new Document("$and", List.of(new Document("$and", List.of(
              new Document("$or", List.of(new Document("rank", new Document("$not",
                  new Document("$gte", 100))), new Document("rank", 100))),
              new Document("$or", List.of(new Document("_id", "n5"),
                  new Document("parent", "n5"))))),
              new Document("$expr", new Document("$lt", List.of("$rank", 45))))));
      List<List<String>> expected = List.of(
          ids("n5", "n9", "n41", "n42", "n43", "n44", "n45", "n46", "n47", "n48"),
          ids("n17", "n18", "n19", "n20", "n21", "n22", "n23", "n24", "n19999"),
          ids("n5", "n7"),
          ids("n41", "n42", "n43"),
          ids("n5", "n41", "n42", "n43", "n44", "n45", "n46", "n47", "n48"),
          ids("n5", "n41", "n42", "n43", "n44"));
      for (int i = 0; i < queries.size(); i++) {
        long before = served(mongo, "or");
        List<String> found = new ArrayList<>();
        c.find(queries.get(i)).forEach(d -> found.add(d.getString("_id")));
        assertEquals(expected.get(i), found, "query " + i);
        // one use of the hash index per clause it serves (the _id index is not counted); the
        // third has a clause no index serves ({rank: 7}): the scan answers it
        assertEquals(List.of(1L, 2L, 0L, 2L, 1L, 1L).get(i), served(mongo, "or") - before,
            "query " + i);
      }
      @SuppressWarnings({"unchecked", "rawtypes"})
      List<de.bwaldvogel.mongo.backend.Index<Object>> indexes = (List) mongo.backend()
          .resolveDatabase("d").resolveCollection("or", true).getIndexes();
      assertEquals(10, IndexedQueries.candidates(indexes, new de.bwaldvogel.mongo.bson.Document(
          "$or", List.of(new de.bwaldvogel.mongo.bson.Document("_id", "n5"),
              new de.bwaldvogel.mongo.bson.Document("_id", "n9"),
              new de.bwaldvogel.mongo.bson.Document("parent", "n5"))), 20_000).positions().size());
      assertEquals(null, IndexedQueries.candidates(indexes, new de.bwaldvogel.mongo.bson
          .Document("$or", List.of(new de.bwaldvogel.mongo.bson.Document("_id", "n5"),
              new de.bwaldvogel.mongo.bson.Document("rank", 7))), 20_000));
    }
  }

  private static List<String> ids(String... ids) {
    return List.of(ids);
  }

  /** n nodes of an 8-ary tree: {_id: "n<i>", parent: "n<(i-1)/8>", rank: i}. */
  private static void insertTree(MongoCollection<Document> c, int n) {
    List<Document> batch = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Document d = new Document("_id", "n" + i).append("rank", i);
      if (i > 0) {
        d.append("parent", "n" + (i - 1) / 8);
      }
      batch.add(d);
      if (batch.size() == 5_000 || i == n - 1) {
        c.insertMany(batch);
        batch.clear();
      }
    }
  }

  @Test
  void anIdEqualityBesideOtherConditionsIsFoundByTheIdIndex() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "locked");
      insertTree(c, 20_000);
      Document lock = new Document("arbor", "lock");
      c.insertOne(new Document("_id", lock).append("owner", "t1").append("v", 7L));
      c.insertOne(new Document("_id", 42).append("owner", "t1"));
      // a fenced write: by _id and owner, as the lock protocol filters
      assertEquals(1, c.countDocuments(Filters.and(Filters.eq("_id", lock),
          Filters.eq("owner", "t1"))));
      assertEquals(0, c.countDocuments(Filters.and(Filters.eq("_id", lock),
          Filters.eq("owner", "t2"))));
      assertEquals(1, c.updateOne(new Document("_id", lock).append("owner", "t1"),
          Updates.inc("v", 1L)).getModifiedCount());
      assertEquals(0, c.updateOne(new Document("_id", lock).append("owner", "t2"),
          Updates.inc("v", 1L)).getMatchedCount());
      assertEquals(8L, c.find(Filters.eq("_id", lock)).first().getLong("v"));
      assertEquals(1, c.countDocuments(Filters.and(Filters.eq("_id", "n5"),
          Filters.eq("parent", "n0"))));
      assertEquals(0, c.countDocuments(Filters.and(Filters.eq("_id", "n5"),
          Filters.eq("parent", "n1"))));
      assertEquals(1, c.countDocuments(Filters.and(Filters.eq("_id", 42),
          Filters.eq("owner", "t1"))));
      assertEquals(1, c.countDocuments(Filters.and(Filters.eq("_id", 42.0),
          Filters.eq("owner", "t1")))); // 42 and 42.0 are one key of the _id index
      // the positions come from the _id index: one candidate, not a scan
      var served = mongo.backend().resolveDatabase("d").resolveCollection("locked", true);
      assertEquals(1, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("_id", new de.bwaldvogel.mongo.bson.Document("arbor", "lock"))
          .append("owner", "t1")).size());
      assertEquals(1, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("$and", List.of(new de.bwaldvogel.mongo.bson.Document("_id", "n5"),
              new de.bwaldvogel.mongo.bson.Document("parent", "n0")))).size());
      // a number, and a document holding one (a scoped tree's node id): by the _id index too,
      // which normalizes numbers as the matcher does
      assertEquals(1, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("_id", 42L).append("owner", "t1")).size());
      assertEquals(null, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("_id", true).append("owner", "t1")));
      assertEquals(null, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("_id", new de.bwaldvogel.mongo.bson.Document("$gt", "n5"))
          .append("owner", "t1")));
      assertEquals(null, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("$or", List.of(new de.bwaldvogel.mongo.bson.Document("_id", "n5"),
              new de.bwaldvogel.mongo.bson.Document("parent", "n0")))));

      // an _id $in beside other conditions (which of a batch's documents landed): by the index
      List<String> batch = List.of("n7", "n5", "missing", "n7", "n19999");
      List<String> found = new java.util.ArrayList<>();
      c.find(Filters.and(Filters.in("_id", batch), Filters.eq("parent", "n0")))
          .forEach(d -> found.add(d.getString("_id")));
      List<String> expected = new java.util.ArrayList<>();
      c.find(Filters.eq("parent", "n0")).forEach(d -> {
        if (batch.contains(d.getString("_id"))) {
          expected.add(d.getString("_id"));
        }
      });
      assertEquals(List.of("n5", "n7"), expected);
      assertEquals(expected, found); // same documents, in the scan's order, each once
      // one position per value found (n7 twice; the collection reads it once)
      assertEquals(4, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("_id", new de.bwaldvogel.mongo.bson.Document("$in", List.of("n7", "n5",
              "missing", "n7", "n19999"))).append("parent", "n0")).size());
      assertEquals(2, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("_id", new de.bwaldvogel.mongo.bson.Document("$in", List.of("n5", 42)))
          .append("parent", "n0")).size());
      assertEquals(null, IndexedQueries.byId(served.getIndexes(), new de.bwaldvogel.mongo.bson
          .Document("_id", new de.bwaldvogel.mongo.bson.Document("$in", List.of("n5", true)))
          .append("parent", "n0")));

      // the candidates the _id index gave are matched against the rest of the query only:
      // what remains of it once its _id condition (the one byId read) is taken out
      de.bwaldvogel.mongo.bson.Document in = new de.bwaldvogel.mongo.bson.Document("$in",
          List.of("n5", "n7"));
      assertEquals(new de.bwaldvogel.mongo.bson.Document("parent", "n0"),
          IndexedQueries.withoutIdKeys(new de.bwaldvogel.mongo.bson.Document("_id", in)
              .append("parent", "n0")));
      assertEquals(new de.bwaldvogel.mongo.bson.Document("$and", List.of(
          new de.bwaldvogel.mongo.bson.Document("parent", "n0"))),
          IndexedQueries.withoutIdKeys(new de.bwaldvogel.mongo.bson.Document("$and", List.of(
              new de.bwaldvogel.mongo.bson.Document("_id", in),
              new de.bwaldvogel.mongo.bson.Document("parent", "n0")))));
      assertEquals(new de.bwaldvogel.mongo.bson.Document(), IndexedQueries.withoutIdKeys(
          new de.bwaldvogel.mongo.bson.Document("_id", "n5")));
      assertEquals(null, IndexedQueries.withoutIdKeys(new de.bwaldvogel.mongo.bson.Document(
          "_id", new de.bwaldvogel.mongo.bson.Document("$gt", "n5")).append("parent", "n0")));
      // and answer as the scan does: a delete by 10 000 ids beside a condition
      List<String> many = new java.util.ArrayList<>();
      for (int i = 0; i < 10_000; i++) {
        many.add("n" + (i * 2));
      }
      long scanned = c.countDocuments(Filters.and(Filters.in("_id", many),
          Filters.eq("parent", "n0")));
      List<String> kept = new java.util.ArrayList<>();
      c.find(Filters.eq("parent", "n0")).forEach(d -> {
        if (!many.contains(d.getString("_id"))) {
          kept.add(d.getString("_id"));
        }
      });
      assertEquals(scanned, c.deleteMany(Filters.and(Filters.in("_id", many),
          Filters.eq("parent", "n0"))).getDeletedCount());
      List<String> left = new java.util.ArrayList<>();
      c.find(Filters.eq("parent", "n0")).forEach(d -> left.add(d.getString("_id")));
      assertEquals(kept, left);
      // as a fenced step sends it: the ids beside a guard that is an $or, in nested $ands (the
      // union of the $or's clauses, each read by the ids); and a clause with an _id of its own
      org.bson.conversions.Bson guarded = Filters.and(Filters.and(Filters.in("_id", many),
          Filters.or(Filters.eq("parent", "n1"), Filters.lt("rank", 30))),
          Filters.exists("rank"));
      List<String> expectedGuarded = new java.util.ArrayList<>();
      c.find(Filters.type("_id", "string")).forEach(d -> {
        if (many.contains(d.getString("_id")) && ("n1".equals(d.getString("parent"))
            || d.getInteger("rank") < 30)) {
          expectedGuarded.add(d.getString("_id"));
        }
      });
      List<String> foundGuarded = new java.util.ArrayList<>();
      c.find(guarded).forEach(d -> foundGuarded.add(d.getString("_id")));
      assertEquals(expectedGuarded, foundGuarded);
      org.bson.conversions.Bson ownId = Filters.and(Filters.in("_id", many),
          Filters.or(Filters.eq("_id", "n3"), Filters.eq("parent", "n1")));
      List<String> foundOwn = new java.util.ArrayList<>();
      c.find(ownId).forEach(d -> foundOwn.add(d.getString("_id")));
      List<String> expectedOwn = new java.util.ArrayList<>();
      c.find(Filters.type("_id", "string")).forEach(d -> {
        if (many.contains(d.getString("_id")) && ("n3".equals(d.getString("_id"))
            || "n1".equals(d.getString("parent")))) {
          expectedOwn.add(d.getString("_id"));
        }
      });
      assertEquals(expectedOwn, foundOwn);
    }
  }

  private static void answersChildrenFromTheIndex(EmbeddedMongo mongo) {
    MongoCollection<Document> c = collection(mongo, "tree");
    // Ten times the size up to which any index that applies is used (IndexedQueries.SMALL):
    // past it, an index is used only if it narrows the collection to at most half.
    insertTree(c, 10_000);
    c.createIndex(Indexes.ascending("parent", "rank")); // built from the documents
    long before = served(mongo, "tree");
    long start = System.nanoTime();
    for (int k = 0; k < 1_000; k++) {
      int parent = k; // up to n999, whose last child is n7999
      List<Document> children = c.find(Filters.eq("parent", "n" + parent))
          .sort(Sorts.ascending("rank")).into(new ArrayList<>());
      assertEquals(8, children.size());
      assertEquals("n" + (8 * parent + 1), children.get(0).getString("_id"));
    }
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertEquals(1_000, served(mongo, "tree") - before);
    System.out.println("1000 indexed queries on 10000 documents: " + ms + " ms");
  }

  /**
   * The subtree of a materialized path, {@code path} in {@code [",n0,n1,", ",n0,n1-")}, is read
   * from the index in memory (its keys in order), with or without a second key field, after
   * updates and deletes; a range of several bounds on a field that held an array is left to the
   * scan (its bounds may hold for different elements), one bound is not.
   */
  @Test
  void inMemoryAStringRangeOnTheFirstKeyIsReadFromTheIndex() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "paths");
      List<Document> docs = new ArrayList<>();
      for (int i = 0; i < 5_000; i++) {
        // ,n0,n<i % 10>, : ten subtrees of 500
        docs.add(new Document("_id", "x" + i).append("path", ",n0,n" + (i % 10) + ",")
            .append("rank", i));
      }
      c.insertMany(docs);
      c.createIndex(Indexes.ascending("path", "rank"));
      Bson subtree = Filters.and(Filters.gte("path", ",n0,n1,"), Filters.lt("path", ",n0,n1-"));
      assertEquals(500, c.countDocuments(subtree));
      assertEquals(1, served(mongo, "paths"));
      c.updateMany(Filters.eq("path", ",n0,n2,"), Updates.set("path", ",n0,n1,n2,"));
      c.deleteMany(Filters.in("_id", List.of("x1", "x11")));
      assertEquals(998, c.find(subtree).into(new ArrayList<>()).size());
      assertEquals(0, c.countDocuments(Filters.and(Filters.gte("path", ",n0,n2,"),
          Filters.lt("path", ",n0,n2-"))));
      assertEquals(4, served(mongo, "paths")); // and the update, the find, the count
      long before = served(mongo, "paths");
      c.insertOne(new Document("_id", "arr").append("path", List.of(",a,", ",z,")));
      assertEquals(1, c.countDocuments(Filters.and(Filters.gte("path", ",m,"),
          Filters.lt("path", ",n,")))); // ",z," holds one bound, ",a," the other
      assertEquals(before, served(mongo, "paths"));
      assertEquals(1, c.countDocuments(Filters.gte("path", ",y,")));
      assertEquals(before + 1, served(mongo, "paths"));
    }
  }

  /**
   * A nested set's descendants, {@code {left: {$gt: l, $lt: r}}} on {@code {left: 1, right: 1}},
   * are read from the index in memory: the candidates are the numbers in the interval (widened by
   * one at each end, see {@code Ranges.Span}), not the collection; after updates that shift the
   * numbers and deletes, and with bounds and values of every numeric type, the answers are the
   * scan's. A range too wide (more than half of a large collection) is left to the scan.
   */
  @Test
  void inMemoryANumericRangeIsReadFromTheIndex() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "sets");
      List<Document> docs = new ArrayList<>();
      for (int i = 0; i < 4_000; i++) {
        Object left = i % 3 == 0 ? (Object) (2 * i) : i % 3 == 1 ? (Object) (2L * i)
            : (Object) (2.0 * i);
        docs.add(new Document("_id", "x" + i).append("left", left).append("right", 2 * i + 1));
      }
      c.insertMany(docs);
      c.createIndex(Indexes.ascending("left", "right"));
      c.createIndex(Indexes.ascending("right"));
      Bson interval = Filters.and(Filters.gt("left", 100L), Filters.lt("left", 141));
      assertEquals(20, c.countDocuments(interval));
      assertEquals(1, served(mongo, "sets"));
      @SuppressWarnings({"unchecked", "rawtypes"})
      List<de.bwaldvogel.mongo.backend.Index<Object>> indexes = (List) mongo.backend()
          .resolveDatabase("d").resolveCollection("sets", true).getIndexes();
      de.bwaldvogel.mongo.bson.Document nested = new de.bwaldvogel.mongo.bson.Document("$and",
          List.of(new de.bwaldvogel.mongo.bson.Document("$and", List.of(
              new de.bwaldvogel.mongo.bson.Document("left",
                  new de.bwaldvogel.mongo.bson.Document("$gt", 100L)),
              new de.bwaldvogel.mongo.bson.Document("left",
                  new de.bwaldvogel.mongo.bson.Document("$lt", 141.5)))),
              new de.bwaldvogel.mongo.bson.Document("$or", List.of(
                  new de.bwaldvogel.mongo.bson.Document("z", null)))));
      // 100 to 142 read as 99..143: the even numbers 100 to 142
      assertEquals(22, IndexedQueries.candidates(indexes, nested, 4_000).positions().size());
      // shift every number right of 120 by 10, as an insert renumbers
      c.updateMany(Filters.gt("left", 120), Updates.inc("left", 10));
      c.deleteMany(Filters.in("_id", List.of("x55", "x56")));
      assertEquals(List.of("x51", "x52", "x53", "x54", "x57", "x58", "x59", "x60", "x61"),
          c.find(Filters.and(Filters.gte("left", 100.5), Filters.lte("left", 132L)))
              .map(d -> d.getString("_id")).into(new ArrayList<>()));
      assertEquals(4, c.countDocuments(Filters.and(Filters.lt("left", 130.0),
          Filters.gt("right", 114L)))); // x57 to x60; by the index on right, the fewer
      assertEquals(4, served(mongo, "sets"));
      long before = served(mongo, "sets");
      assertEquals(3_939, c.countDocuments(Filters.gt("left", 120)));
      assertEquals(before, served(mongo, "sets")); // most of the collection: the scan
      c.insertOne(new Document("_id", "d").append("left", new org.bson.types.Decimal128(125)));
      assertEquals(1, c.countDocuments(Filters.and(Filters.gt("left", 124),
          Filters.lt("left", 126))));
      assertEquals(before + 1, served(mongo, "sets"));
    }
  }

  /**
   * A scoped tree's subtree, {@code {tree: t, path: [",n0,n1,", ",n0,n1-")}} on {@code {tree: 1,
   * path: 1, rank: 1}}: the equality of the first key field, then the range of the second, as
   * MongoDB's index bounds; the candidates are the subtree's documents in that tree, not the tree
   * (which the equality alone gives), after updates and deletes; the answers are the scan's.
   */
  @Test
  void inMemoryARangeAfterAnEqualityPrefixIsReadFromTheIndex() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "scoped");
      List<Document> docs = new ArrayList<>();
      for (int i = 0; i < 4_000; i++) {
        // four trees (i % 4), each with ten subtrees ,n0,n<i / 4 % 10>,
        docs.add(new Document("_id", "x" + i).append("tree", i % 4)
            .append("path", ",n0,n" + (i / 4 % 10) + ",").append("rank", i));
      }
      c.insertMany(docs);
      c.createIndex(Indexes.ascending("tree", "path", "rank"));
      Bson subtree = Filters.and(Filters.eq("tree", 1), Filters.gte("path", ",n0,n1,"),
          Filters.lt("path", ",n0,n1-"));
      assertEquals(100, c.countDocuments(subtree));
      assertEquals(1, served(mongo, "scoped"));
      c.updateMany(Filters.and(Filters.eq("tree", 1), Filters.eq("path", ",n0,n2,")),
          Updates.set("path", ",n0,n1,n2,"));
      c.deleteMany(Filters.in("_id", List.of("x5", "x45", "x4"))); // x4: tree 0
      assertEquals(198, c.find(subtree).into(new ArrayList<>()).size());
      assertEquals(100, c.countDocuments(Filters.and(Filters.eq("tree", 2),
          Filters.gte("path", ",n0,n2,"), Filters.lt("path", ",n0,n2-"))));
      @SuppressWarnings({"unchecked", "rawtypes"})
      List<de.bwaldvogel.mongo.backend.Index<Object>> indexes = (List) mongo.backend()
          .resolveDatabase("d").resolveCollection("scoped", true).getIndexes();
      assertEquals(198, IndexedQueries.candidates(indexes, new de.bwaldvogel.mongo.bson.Document(
          "tree", 1).append("$and", List.of(
              new de.bwaldvogel.mongo.bson.Document("path",
                  new de.bwaldvogel.mongo.bson.Document("$gte", ",n0,n1,")),
              new de.bwaldvogel.mongo.bson.Document("path",
                  new de.bwaldvogel.mongo.bson.Document("$lt", ",n0,n1-")))), 3_997).positions().size());
      // a range without the equality of the first key field is left to the scan
      long before = served(mongo, "scoped");
      assertEquals(497, c.countDocuments(Filters.and(Filters.gte("path", ",n0,n1,"),
          Filters.lt("path", ",n0,n1-"))));
      assertEquals(before, served(mongo, "scoped"));
    }
  }

  @Test
  void inMemoryATenThousandDocumentCollectionAnswersFromItsIndex() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      answersChildrenFromTheIndex(mongo);
    }
  }

  @Test
  void inADataDirectoryATenThousandDocumentCollectionAnswersFromItsIndex() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      answersChildrenFromTheIndex(mongo);
    }
  }

  @Test
  void aServerRestartedOnADataDirectoryHasItsIndexesAgain() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      MongoCollection<Document> c = collection(mongo, "tree");
      c.createIndex(Indexes.ascending("parent", "rank"));
      insertTree(c, 2_000);
      c.updateOne(Filters.eq("_id", "n9"), Updates.set("parent", "n0"));
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      MongoCollection<Document> c = collection(mongo, "tree");
      assertEquals(List.of("n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"),
          ids(c.find(Filters.eq("parent", "n0")).sort(Sorts.ascending("rank"))));
      assertEquals(7, c.countDocuments(Filters.eq("parent", "n1")));
      c.deleteMany(Filters.eq("parent", "n2"));
      assertEquals(0, c.countDocuments(Filters.eq("parent", "n2")));
      assertEquals(4, served(mongo, "tree")); // find, count, deleteMany, count
    }
  }

  @Test
  void aDataDirectoryWrittenByThePlainH2BackendOpensWithItsIndexesInEffect() {
    Path file = dir.resolve(EmbeddedMongo.DATA_FILE);
    MongoServer plain = new MongoServer(new H2Backend(file.toString()));
    InetSocketAddress address = plain.bind();
    try (var client = com.mongodb.client.MongoClients.create("mongodb://"
        + address.getHostString() + ":" + address.getPort())) {
      MongoCollection<Document> c = client.getDatabase("d").getCollection("tree");
      insertTree(c, 100);
      c.createIndex(Indexes.ascending("parent", "rank"));
    } finally {
      plain.shutdown();
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      assertEquals(8, collection(mongo, "tree").countDocuments(Filters.eq("parent", "n1")));
      assertEquals(1, served(mongo, "tree"));
    }
  }

  @Test
  void dropsRenamesAndIndexDropsLeaveNoStaleEntry() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "tree");
      c.createIndex(Indexes.ascending("parent"));
      insertTree(c, 100);
      c.renameCollection(new MongoNamespace("d", "renamed"));
      MongoCollection<Document> renamed = collection(mongo, "renamed");
      assertEquals(8, renamed.countDocuments(Filters.eq("parent", "n1")));
      assertEquals(1, served(mongo, "renamed"));

      renamed.drop();
      MongoCollection<Document> again = collection(mongo, "renamed");
      again.insertOne(new Document("_id", "x").append("parent", "n1"));
      assertEquals(1, again.countDocuments(Filters.eq("parent", "n1")));
      assertEquals(0, served(mongo, "renamed")); // no index any more

      again.createIndex(Indexes.ascending("parent"));
      assertEquals(1, again.countDocuments(Filters.eq("parent", "n1")));
      assertEquals(1, served(mongo, "renamed"));
      again.dropIndex(Indexes.ascending("parent"));
      assertEquals(1, again.countDocuments(Filters.eq("parent", "n1")));
      assertEquals(0, served(mongo, "renamed"));
    }
  }

  @Test
  void aPipelineWithALeadingMatchReadsTheIndexAndGraphLookupToo() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "tree");
      insertTree(c, 3_000);
      c.createIndex(Indexes.ascending("parent", "rank"));
      List<Document> groups = c.aggregate(List.of(
          Aggregates.match(Filters.in("parent", "n1", "n2", "nobody")),
          Aggregates.group("$parent", Accumulators.sum("n", 1)),
          Aggregates.sort(Sorts.ascending("_id")))).into(new ArrayList<>());
      assertEquals(List.of(new Document("_id", "n1").append("n", 8),
          new Document("_id", "n2").append("n", 8)), groups);
      assertEquals(1, served(mongo, "tree"));

      Document sub = c.aggregate(List.of(Aggregates.match(Filters.eq("_id", "n1")),
          Aggregates.graphLookup("tree", "$_id", "_id", "parent", "below"))).first();
      assertEquals(8 + 64 + 512, sub.getList("below", Document.class).size());
      assertTrue(served(mongo, "tree") > 500);
    }
  }

  @Test
  void aQueryTheMatcherRejectsIsRejectedAsWithoutAnIndex() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> indexed = collection(mongo, "indexed");
      MongoCollection<Document> plain = collection(mongo, "plain");
      indexed.createIndex(Indexes.ascending("parent"));
      insertTree(indexed, 10);
      insertTree(plain, 10);
      for (Document q : List.of(new Document("$bogus", 1).append("parent", "n0"),
          new Document("$and", List.of()).append("parent", "n0"),
          new Document("$and", List.of(new Document("parent", "n0"))).append("x", new Document(
              "$bogus", 1)))) {
        assertEquals(outcome(() -> plain.find(q).into(new ArrayList<>()).size()),
            outcome(() -> indexed.find(q).into(new ArrayList<>()).size()), q::toJson);
      }
      assertThrows(MongoException.class, () -> indexed.find(new Document("$bogus", 1)
          .append("parent", "n0")).first());
    }
  }

  private static String outcome(java.util.function.IntSupplier query) {
    try {
      return "found " + query.getAsInt();
    } catch (MongoException e) {
      return "error " + e.getCode();
    }
  }

  @Test
  void concurrentWritersAndReadersLeaveTheIndexTrue() throws Exception {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = collection(mongo, "tree");
      c.createIndex(Indexes.ascending("parent"));
      ExecutorService pool = Executors.newFixedThreadPool(4);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          Random r = new Random(thread);
          for (int i = 0; i < 1_500; i++) {
            String id = "d" + r.nextInt(200);
            String parent = "p" + r.nextInt(10);
            switch (r.nextInt(5)) {
              case 0 -> c.deleteOne(Filters.eq("_id", id));
              case 1 -> c.updateOne(Filters.eq("_id", id), Updates.set("parent", parent),
                  new com.mongodb.client.model.UpdateOptions().upsert(true));
              case 2 -> c.updateMany(Filters.eq("parent", parent),
                  Updates.set("parent", List.of(parent, "p" + r.nextInt(10))));
              case 3 -> c.deleteMany(Filters.eq("parent", "p" + r.nextInt(40)));
              default -> c.countDocuments(Filters.eq("parent", parent));
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(2, TimeUnit.MINUTES);
      }
      pool.shutdown();
      List<Document> all = c.find().into(new ArrayList<>());
      for (int p = 0; p < 10; p++) {
        String parent = "p" + p;
        List<String> expected = new ArrayList<>();
        for (Document d : all) {
          Object v = d.get("parent");
          if (parent.equals(v) || v instanceof List<?> l && l.contains(parent)) {
            expected.add(d.getString("_id"));
          }
        }
        assertEquals(expected, ids(c.find(Filters.eq("parent", parent))), parent);
      }
    }
  }

  private static List<String> ids(Iterable<Document> documents) {
    List<String> out = new ArrayList<>();
    for (Document d : documents) {
      out.add(d.getString("_id"));
    }
    return out;
  }
}
