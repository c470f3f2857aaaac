package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The differential property of the secondary indexes: any sequence of writes applied to two
 * collections of one server, one with secondary indexes and one without, leaves them equal, and
 * every read (find with and without sort and limit, count, aggregate with a leading {@code
 * $match}, distinct) and every write by query answers the same, in the same order, on both. Values
 * mix what the indexes serve (strings, ObjectIds, UUIDs, numbers of three types equal across types,
 * -0.0, a long no double holds, NaN, infinities, arrays of them, nested arrays) with what they
 * must leave to the scan (subdocuments, booleans, a legacy UUID of a UUID's bits, decimals) or
 * serve as null (null,
 * missing fields, arrays holding a null); ids
 * are strings, UUIDs or documents holding such numbers,
 * and queries mix served equalities, {@code $in}, {@code $and} and string and numeric ranges
 * ({@code $gt}, {@code $gte}, {@code $lt}, {@code $lte}, of fields that held arrays or decimals
 * too, with bounds of every numeric type), with conditions never served.
 *
 * <p>Each operation is generated as one random seed (QuickTheories shrinks a failing list of
 * them); a failure prints the operations and queries as run.
 */
class SecondaryIndexPropertiesTest {
  private static final int EXAMPLES = Integer.getInteger("arbor.qt.examples", 150);

  private static final ObjectId OID1 = new ObjectId("5f0000000000000000000001");
  private static final ObjectId OID2 = new ObjectId("5f0000000000000000000002");
  /** UUIDs (binary subtype 4, as UUID node ids are stored), and one of the same bits as legacy. */
  private static final java.util.UUID U1 =
      java.util.UUID.fromString("00000000-0000-4000-8000-000000000001");
  private static final BsonBinary UUID1 = new BsonBinary(U1);
  private static final BsonBinary UUID2 =
      new BsonBinary(java.util.UUID.fromString("00000000-0000-4000-8000-000000000002"));
  private static final BsonBinary LEGACY1 =
      new BsonBinary(BsonBinarySubType.UUID_LEGACY, UUID1.getData());
  /** Field values: served types, and types the index must leave alone. */
  private static final List<Object> VALUES = Arrays.asList("a", "b", "c", "A", "", 1, 1.0, 2L,
      0, -0.0, 0L, 9007199254740993L, Double.NaN, List.of(1.0, "a"), null, List.of("a", "b"),
          List.of("b"), List.of(List.of("a")), List.of(), List.of("c", 1),
      new Document("x", "a"), OID1, OID2, List.of(OID1), true, "a.b", UUID1, UUID2, LEGACY1,
      List.of(UUID1, "a"), Arrays.asList("b", null), List.of(List.of()), -5, 3.5,
      Double.POSITIVE_INFINITY, Long.MIN_VALUE, List.of(-5, 7L), new org.bson.types.Decimal128(2),
      List.of(new org.bson.types.Decimal128(-1), 4), 3_000_000_000L, 3_000_000_000.5,
      -3_000_000_000.5, 1e19, Long.MAX_VALUE, Double.NEGATIVE_INFINITY);
  /** Query values. */
  private static final List<Object> QUERY_VALUES = Arrays.asList("a", "b", "c", "A", "", 1, 1.0,
      0, 0L, -0.0, 2L, 9007199254740993L, 9007199254740992.0, Double.NaN, null, OID1, OID2,
          List.of("a", "b"), List.of("a"), new Document("x", "a"), true,
      Pattern.compile("^a"), UUID1, UUID2, LEGACY1, -1, 2.5, 7L, Double.NEGATIVE_INFINITY,
      Double.POSITIVE_INFINITY, Long.MAX_VALUE, new org.bson.types.Decimal128(3), 3_000_000_000L,
      3_000_000_000.5, -3_000_000_000L, -3_000_000_000.5, 1e19, 4.6e18);
  /** Indexed and unindexed fields. */
  private static final List<String> FIELDS = List.of("p", "s", "q", "arr", "z", "d");
  private static final List<String> QUERY_FIELDS = List.of("p", "s", "q", "arr", "z", "d.x",
      "_id");

  @TempDir
  Path dir;

  private int collections;

  @Test
  void inMemoryIndexedAndUnindexedCollectionsAnswerAlike() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      check(mongo, new de.bwaldvogel.mongo.backend.memory.MemoryBackend());
    }
  }

  /**
   * Against the server's H2 backend as it is but for one thing the adapter changes on purpose: a
   * document whose {@code _id} is a document is stored under a fresh copy of it ({@code
   * H2ServerAdapter}: the server's clone of an upsert's {@code _id} compared unequal to the same
   * key read back from the file). The map orders its keys by their serialization, so the plain
   * backend's natural order of upserted documents with such ids would follow the clones' hash
   * table capacities, not their content; its collections store them as the adapter does.
   */
  @Test
  void inADataDirectoryIndexedAndUnindexedCollectionsAnswerAlike() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir.resolve("indexed"))) {
      check(mongo, new FreshIdsH2Backend(
          new org.h2.mvstore.MVStore.Builder().fileName(dir.resolve("plain.mv").toString())
              .open()));
    }
  }

  /** The server's H2 backend, storing document {@code _id}s as the adapter does. */
  private static final class FreshIdsH2Backend extends de.bwaldvogel.mongo.backend.h2.H2Backend {
    FreshIdsH2Backend(org.h2.mvstore.MVStore store) {
      super(store); // a new file: the constructor opens no database
    }

    @Override
    protected de.bwaldvogel.mongo.MongoDatabase openOrCreateDatabase(String name) {
      org.h2.mvstore.MVStore store = getMvStore();
      return new de.bwaldvogel.mongo.backend.h2.H2Database(name, store, getCursorRegistry()) {
        @Override
        protected de.bwaldvogel.mongo.MongoCollection<Object> openOrCreateCollection(
            String collectionName, de.bwaldvogel.mongo.backend.CollectionOptions options) {
          String fullName = getFullCollectionNamespace(collectionName);
          return new de.bwaldvogel.mongo.backend.h2.H2Collection(this, collectionName, options,
              store.openMap(H2ServerAdapter.DATA_PREFIX + fullName),
              store.openMap(H2ServerAdapter.META_PREFIX + fullName), cursorRegistry) {
            @Override
            protected Object addDocumentInternal(de.bwaldvogel.mongo.bson.Document document) {
              if (document.get("_id") instanceof de.bwaldvogel.mongo.bson.Document id) {
                document.put("_id", H2ServerAdapter.IndexedCollection.fresh(id));
              }
              return super.addDocumentInternal(document);
            }
          };
        }
      };
    }
  }

  /**
   * The unindexed collections live on a plain mongo-java-server (its own memory backend, no
   * class of ours), so that what this module changes of the server's query path, the choice of
   * the {@code _id} index for an {@code _id} equality beside other conditions included, is
   * compared with the server as it is (the same backend: their natural orders differ).
   */
  /**
   * A client of {@code uri} that writes a {@link java.util.UUID} as binary subtype 4: a UUID
   * value read back (as the operations' JSON is) is one, written again as it came.
   */
  private static com.mongodb.client.MongoClient client(String uri) {
    return com.mongodb.client.MongoClients.create(com.mongodb.MongoClientSettings.builder()
        .applyConnectionString(new com.mongodb.ConnectionString(uri))
        .uuidRepresentation(org.bson.UuidRepresentation.STANDARD).build());
  }

  private void check(EmbeddedMongo mongo, de.bwaldvogel.mongo.MongoBackend plainBackend) {
    de.bwaldvogel.mongo.MongoServer plainServer = new de.bwaldvogel.mongo.MongoServer(
        plainBackend);
    java.net.InetSocketAddress at = plainServer.bind();
    try (com.mongodb.client.MongoClient client = client(mongo.uri());
        com.mongodb.client.MongoClient plainClient = client(
            "mongodb://" + at.getHostString() + ":" + at.getPort())) {
      check(mongo, client.getDatabase("props"), plainClient.getDatabase("props"));
    } finally {
      plainServer.shutdownNow();
    }
  }

  private void check(EmbeddedMongo mongo, MongoDatabase db, MongoDatabase plainDb) {
    long[] served = new long[1];
    qt().withExamples(EXAMPLES)
        .withShrinkCycles(100)
        .forAll(lists().of(longs().all()).ofSizeBetween(1, 40))
        .checkAssert(seeds -> served[0] += replay(mongo, db, plainDb, seeds));
    // The property proves little unless the indexes answered many of the queries.
    assertTrue(served[0] >= EXAMPLES * 5L, "queries served by an index: " + served[0]);
  }

  /** Replays the operations, returns how many queries an index served. */
  private long replay(EmbeddedMongo mongo, MongoDatabase db, MongoDatabase plainDb,
      List<Long> seeds) {
    String name = "c" + collections++;
    MongoCollection<Document> indexed = db.getCollection(name + "i");
    MongoCollection<Document> plain = plainDb.getCollection(name + "p");
    indexed.createIndex(Indexes.ascending("p"));
    List<String> log = new ArrayList<>();
    try {
      for (long seed : seeds) {
        Random r = new Random(seed);
        if (r.nextInt(4) == 0) {
          createIndex(indexed, r, log); // some indexes only when the collection has documents
        }
        step(indexed, plain, r, log);
        for (int i = 0; i < 3; i++) {
          read(indexed, plain, query(r), r, log);
        }
      }
      assertEquals(all(plain), all(indexed), () -> "contents differ after " + log);
      return servedBy(mongo, name + "i");
    } finally {
      indexed.drop();
      plain.drop();
    }
  }

  private static void createIndex(MongoCollection<Document> c, Random r, List<String> log) {
    switch (r.nextInt(5)) {
      case 0 -> c.createIndex(Indexes.ascending("s", "q"));
      case 1 -> c.createIndex(Indexes.ascending("arr"));
      case 2 -> c.createIndex(Indexes.ascending("d.x"));
      case 3 -> c.createIndex(Indexes.ascending("q"), new IndexOptions().sparse(true));
      default -> c.createIndex(Indexes.ascending("z", "p"));
    }
    log.add("createIndex");
  }

  private long servedBy(EmbeddedMongo mongo, String collection) {
    long served = mongo.backend().resolveDatabase("props").resolveCollection(collection, true)
        .getIndexes().stream().filter(i -> i instanceof HashIndex)
        .mapToLong(i -> ((HashIndex<?>) i).served()).sum();
    return served;
  }

  private static void step(MongoCollection<Document> indexed, MongoCollection<Document> plain,
      Random r, List<String> log) {
    Object id = id(r);
    Function<MongoCollection<Document>, Object> op;
    String described;
    switch (r.nextInt(15)) {
      case 0, 1, 2 -> {
        Document d = document(r).append("_id", id);
        described = "insert " + d.toJson();
        op = c -> c.insertOne(Document.parse(d.toJson())).wasAcknowledged();
      }
      case 3 -> {
        Document set = new Document(field(r), value(r));
        described = "set " + id + " " + set.toJson();
        op = c -> c.updateOne(new Document("_id", id), new Document("$set", set))
            .getModifiedCount();
      }
      case 4 -> {
        String f = field(r);
        described = "unset " + id + " " + f;
        op = c -> c.updateOne(new Document("_id", id), new Document("$unset",
            new Document(f, ""))).getModifiedCount();
      }
      case 5 -> {
        Object v = value(r);
        String f = r.nextBoolean() ? "arr" : field(r);
        String operator = List.of("$push", "$addToSet", "$pull").get(r.nextInt(3));
        described = operator + " " + id + " " + f + " " + v;
        op = c -> c.updateOne(new Document("_id", id), new Document(operator,
            new Document(f, v))).getModifiedCount();
      }
      case 6 -> {
        Document d = document(r);
        described = "replace " + id + " " + d.toJson();
        op = c -> c.replaceOne(new Document("_id", id), Document.parse(d.toJson()))
            .getModifiedCount();
      }
      case 7 -> {
        Bson q = query(r);
        Document set = new Document(field(r), value(r));
        described = "updateMany " + q + " set " + set.toJson();
        op = c -> c.updateMany(q, new Document("$set", set)).getModifiedCount();
      }
      case 8 -> {
        Bson q = query(r);
        described = "deleteOne " + q;
        op = c -> c.deleteOne(q).getDeletedCount();
      }
      case 9 -> {
        Bson q = query(r);
        described = "deleteMany " + q;
        op = c -> c.deleteMany(q).getDeletedCount();
      }
      case 10 -> {
        String f = field(r);
        Object v = r.nextBoolean() ? "a" : value(r);
        Document set = new Document(field(r), value(r));
        Document q = new Document("_id", id).append(f, v);
        described = "upsert " + q + " set " + set.toJson();
        op = c -> {
          var result = c.updateOne(q, new Document("$set", set), new UpdateOptions().upsert(true));
          return result.getModifiedCount() + "/" + result.getUpsertedId();
        };
      }
      case 11 -> {
        Bson q = query(r);
        Document set = new Document(field(r), value(r));
        described = "findOneAndUpdate " + q + " set " + set.toJson();
        op = c -> String.valueOf(c.findOneAndUpdate(q, new Document("$set", set),
            new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)));
      }
      case 12 -> {
        Bson q = query(r);
        described = "findOneAndDelete " + q;
        op = c -> String.valueOf(c.findOneAndDelete(q));
      }
      case 13 -> {
        String from = field(r);
        String to = field(r);
        described = "rename " + id + " " + from + " to " + to;
        op = c -> c.updateOne(new Document("_id", id), new Document("$rename",
            new Document(from, to))).getModifiedCount();
      }
      default -> {
        String f = field(r);
        described = "inc " + id + " " + f;
        op = c -> c.updateOne(new Document("_id", id), new Document("$inc",
            new Document(f, 1))).getModifiedCount();
      }
    }
    log.add(described);
    assertEquals(outcome(plain, op), outcome(indexed, op), () -> "after " + log);
  }

  private static void read(MongoCollection<Document> indexed, MongoCollection<Document> plain,
      Bson q, Random r, List<String> log) {
    String described = "read " + q;
    List<Function<MongoCollection<Document>, Object>> reads = List.of(
        c -> json(c.find(q)),
        c -> json(c.find(q).sort(Sorts.descending("p")).limit(3)),
        c -> json(c.find(q).sort(new Document("$natural", -1)).skip(1)),
        c -> c.countDocuments(q),
        c -> json(c.aggregate(List.of(Aggregates.match(q),
            Aggregates.group("$p", Accumulators.sum("n", 1)), Aggregates.sort(Sorts.ascending(
                "_id"))))),
        c -> json(c.aggregate(List.of(Aggregates.match(q)))),
        c -> c.distinct("s", q, org.bson.BsonValue.class).into(new ArrayList<>()).toString());
    Function<MongoCollection<Document>, Object> read = reads.get(r.nextInt(reads.size()));
    assertEquals(outcome(plain, read), outcome(indexed, read),
        () -> described + " differs after " + log);
  }

  /** The result of an operation, or its error code. */
  private static Object outcome(MongoCollection<Document> c,
      Function<MongoCollection<Document>, Object> op) {
    try {
      return op.apply(c);
    } catch (MongoException e) {
      return "error " + e.getCode();
    }
  }

  private static List<String> json(Iterable<Document> documents) {
    List<String> out = new ArrayList<>();
    for (Document d : documents) {
      out.add(d.toJson());
    }
    return out;
  }

  private static List<String> all(MongoCollection<Document> c) {
    return json(c.find());
  }

  private static String field(Random r) {
    return FIELDS.get(r.nextInt(FIELDS.size()));
  }

  /**
   * A document id: a string, or a document holding a number as a scoped tree's node ids do
   * ({@code {s: 0, id: "i1"}}), the number sent as an int, a long or a double (equal keys in the
   * {@code _id} index: -0.0 and 0L are 0).
   */
  private static Object id(Random r) {
    String k = "i" + r.nextInt(10);
    if (r.nextInt(6) == 0) {
      return new BsonBinary(new java.util.UUID(0, r.nextInt(10))); // a UUID node id
    }
    if (r.nextInt(3) != 0) {
      return k;
    }
    Object s = List.<Object>of(0, 0L, 0.0, -0.0, 1, 1.5).get(r.nextInt(6));
    return new Document("s", s).append("id", k);
  }

  private static Object value(Random r) {
    return VALUES.get(r.nextInt(VALUES.size()));
  }

  private static Document document(Random r) {
    Document d = new Document();
    for (String f : FIELDS) {
      if (r.nextInt(4) != 0) {
        d.append(f, f.equals("d") ? new Document("x", value(r)) : value(r));
      }
    }
    return d;
  }

  /** A query: mostly conditions an index may serve, combined with others. */
  static Bson query(Random r) {
    int parts = 1 + r.nextInt(3);
    List<Document> conditions = new ArrayList<>();
    for (int i = 0; i < parts; i++) {
      conditions.add(condition(r));
    }
    return switch (r.nextInt(4)) {
      case 0 -> new Document("$and", conditions);
      case 1 -> new Document("$and", List.of(new Document("_id", new Document("$not",
          new Document("$type", "object"))), new Document("$and", conditions)));
      default -> {
        Document merged = new Document();
        conditions.forEach(merged::putAll);
        yield merged;
      }
    };
  }

  private static Document condition(Random r) {
    String f = QUERY_FIELDS.get(r.nextInt(QUERY_FIELDS.size()));
    if (f.equals("_id")) {
      return r.nextInt(4) == 0 ? new Document(f, new Document("$in", List.of(id(r), id(r))))
          : new Document(f, id(r));
    }
    Object v = QUERY_VALUES.get(r.nextInt(QUERY_VALUES.size()));
    Object w = QUERY_VALUES.get(r.nextInt(QUERY_VALUES.size()));
    String[] ops = {"$gt", "$gte", "$lt", "$lte"};
    return switch (r.nextInt(11)) {
      // string and numeric ranges, which an index with its keys in order serves (one bound, two,
      // or a bound of another type)
      case 8 -> new Document(f, new Document(ops[r.nextInt(4)], v));
      case 9 -> new Document(f, new Document(ops[r.nextInt(2)], v).append(ops[2 + r.nextInt(2)],
          w));
      case 10 -> new Document("$and", List.of(new Document(f, new Document(ops[r.nextInt(2)], v)),
          new Document(f, new Document(ops[2 + r.nextInt(2)], w))));
      case 0 -> new Document(f, new Document("$eq", v));
      case 1 -> new Document(f, new Document("$in", Arrays.asList(v,
          QUERY_VALUES.get(r.nextInt(QUERY_VALUES.size())))));
      case 2 -> new Document(f, new Document("$in", List.of()));
      case 3 -> new Document(f, new Document("$ne", v));
      case 4 -> new Document("$or", List.of(new Document(f, v), new Document("z", "a")));
      default -> new Document(f, v);
    };
  }
}
