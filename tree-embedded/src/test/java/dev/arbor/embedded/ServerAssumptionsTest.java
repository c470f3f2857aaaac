package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.oplog.NoopOplog;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each assumption the server adapters ({@link MemoryServerAdapter}, {@link H2ServerAdapter},
 * {@link ServerAdapter}) make about mongo-java-server's internals, checked one by one, so that an
 * upgrade that breaks one fails here, naming it and the pinned version, instead of leaving an
 * embedded server that answers wrongly. The differential tests ({@code SecondaryIndexTest},
 * {@code SecondaryIndexPropertiesTest}) check the answers themselves.
 */
class ServerAssumptionsTest {
  @TempDir
  Path dir;

  /** Runs {@code check}; a failure names the assumption and the pinned version. */
  private static void assumption(String name, Executable check) {
    try {
      check.execute();
    } catch (Throwable e) {
      fail("mongo-java-server " + ServerAdapter.PINNED_VERSION + " assumption broken (running "
          + ServerAdapter.foundVersion() + "): " + name + ": " + e, e);
    }
  }

  private static MongoCollection<Document> collection(EmbeddedMongo mongo, String name) {
    return mongo.client().getDatabase("d").getCollection(name);
  }

  private static List<Index<?>> indexes(EmbeddedMongo mongo, String name) {
    return new ArrayList<>(mongo.backend().resolveDatabase("d").resolveCollection(name, true)
        .getIndexes());
  }

  private static long served(EmbeddedMongo mongo, String name) {
    return indexes(mongo, name).stream().filter(i -> i instanceof HashIndex)
        .mapToLong(i -> ((HashIndex<?>) i).served()).sum();
  }

  /** 200 documents {_id: "k<i>", parent: "p<i % 20>", i: i}, indexed on parent. */
  private static void fill(MongoCollection<Document> c) {
    List<Document> docs = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      docs.add(new Document("_id", "k" + i).append("parent", "p" + i % 20).append("i", i));
    }
    c.insertMany(docs);
    c.createIndex(Indexes.ascending("parent"));
  }

  @Test
  void thePinnedVersionIsTheOneOnTheClassPathAndInTheParentPom() throws IOException {
    assumption("the mongo-java-server on the test class path is the pinned one", () ->
        assertEquals(ServerAdapter.PINNED_VERSION, ServerAdapter.foundVersion()));
    Path parent = Path.of("..", "pom.xml");
    if (Files.exists(parent)) {
      Matcher m = Pattern.compile("<mongo-java-server.version>([^<]*)<")
          .matcher(Files.readString(parent));
      assertTrue(m.find(), "the parent pom names mongo-java-server.version");
      assertEquals(ServerAdapter.PINNED_VERSION, m.group(1), "the parent pom pins "
          + ServerAdapter.PINNED_VERSION + ", the version whose internals the adapters rely on; "
          + "change ServerAdapter.PINNED_VERSION only after ServerAssumptionsTest passes");
    }
  }

  @Test
  void everyOverrideOfTheAdaptersOverridesAServerMethod() {
    assumption("the protected methods the in-memory adapter overrides",
        MemoryServerAdapter::checkAssumptions);
    assumption("the protected methods the H2 adapter overrides, and H2Database's map prefixes",
        H2ServerAdapter::checkAssumptions);
  }

  /** A class that declares a method its server superclass does not have: not an override. */
  static final class Renamed extends MemoryBackend {
    @SuppressWarnings("unused")
    public void handleMesage(Object message) {}
  }

  @Test
  void aMethodThatNoLongerOverridesFailsLoudlyNamingIt() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> ServerAdapter.checkOverrides(Renamed.class));
    assertTrue(e.getMessage().contains("handleMesage"), e.getMessage());
    assertTrue(e.getMessage().contains("mongo-java-server " + ServerAdapter.PINNED_VERSION),
        e.getMessage());
    IllegalStateException prefix = assertThrows(IllegalStateException.class,
        () -> ServerAdapter.check(false, "H2Database.META_PREFIX is \"meta.\""));
    assertTrue(prefix.getMessage().contains("META_PREFIX"), prefix.getMessage());
  }

  @Test
  void theH2BackendNamesAnIndexMapAfterItsCollectionAndTheInfix() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      collection(mongo, "c").insertOne(new Document("_id", "a"));
      List<String> maps = new ArrayList<>(mongo.store().getMapNames());
      assumption("a collection's documents are in the map " + H2ServerAdapter.DATA_PREFIX
          + "<db>.<collection>", () -> assertTrue(maps.contains(H2ServerAdapter.DATA_PREFIX
              + "d.c"), maps.toString()));
      assumption("a collection's metadata is in the map " + H2ServerAdapter.META_PREFIX
          + "<db>.<collection>", () -> assertTrue(maps.contains(H2ServerAdapter.META_PREFIX
              + "d.c"), maps.toString()));
      assumption("a unique index is in the map <db>.<collection>" + H2ServerAdapter.INDEX_INFIX
          + "<index>", () -> assertTrue(maps.contains("d.c" + H2ServerAdapter.INDEX_INFIX
              + "_id_"), maps.toString()));
    }
  }

  /**
   * H2Backend's constructor opens the databases of the file, and H2Database's the collections,
   * before the adapter's constructors have run; the inner database class still finds the store,
   * re-creates the secondary index from its description, and the server fills it (addIndex).
   * A renamed collection's maps follow it.
   */
  @Test
  void aReopenedFileHasItsCollectionsIndexedAndRenamesKept() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      fill(collection(mongo, "c"));
      collection(mongo, "c").renameCollection(new MongoNamespace("d", "r"));
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      assumption("the server opens the file's collections through the adapter's database "
          + "during its constructors, and fills a re-created index", () -> {
            assertEquals(10, collection(mongo, "r").countDocuments(Filters.eq("parent", "p3")));
            assertEquals(1, served(mongo, "r"));
          });
      assumption("H2Database.moveCollection leaves the old maps for the adapter to move",
          () -> assertFalse(mongo.store().getMapNames().stream()
              .anyMatch(n -> n.endsWith("d.c")), mongo.store().getMapNames().toString()));
    }
  }

  @Test
  void everyNonUniqueIndexIsAHashIndexAndEveryRemovalReachesIt() {
    try (EmbeddedMongo memory = EmbeddedMongo.start();
        EmbeddedMongo file = EmbeddedMongo.start(dir)) {
      for (EmbeddedMongo mongo : List.of(memory, file)) {
        MongoCollection<Document> c = collection(mongo, "c");
        fill(c);
        assumption("the server asks openOrCreateSecondaryIndex for a non-unique index ("
            + mongo + ")", () -> assertEquals(1, indexes(mongo, "c").stream()
                .filter(i -> i instanceof HashIndex).count()));
        HashIndex<?> index = (HashIndex<?>) indexes(mongo, "c").stream()
            .filter(i -> i instanceof HashIndex).findFirst().orElseThrow();
        c.deleteMany(Filters.eq("parent", "p3"));
        c.deleteOne(Filters.eq("_id", "k4"));
        assumption("the server hands each removed document's position to removeDocument ("
            + mongo + ")", () -> {
              assertEquals(189, index.getCount());
              assertEquals(List.of(), index.candidates(java.util.Map.of("parent",
                  java.util.Set.of("p3"))));
            });
      }
    }
  }

  @Test
  void aggregationReadsItsCollectionOnlyThroughQueryAllAsStream() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      collection(mongo, "c").insertOne(new Document("_id", "stored"));
      de.bwaldvogel.mongo.MongoDatabase database = mongo.backend().resolveDatabase("d");
      de.bwaldvogel.mongo.MongoCollection<?> c = database.resolveCollection("c", true);
      AtomicInteger reads = new AtomicInteger();
      de.bwaldvogel.mongo.bson.Document given = new de.bwaldvogel.mongo.bson.Document("_id",
          "given");
      assumption("Aggregation.computeResult reads the collection it is built with once, by "
          + "queryAllAsStream()", () -> {
            Aggregation aggregation = Aggregation.fromPipeline(List.of(
                new de.bwaldvogel.mongo.bson.Document("$match",
                    new de.bwaldvogel.mongo.bson.Document())), mongo.backend()::resolveDatabase,
                database, ServerAdapter.view(c, () -> {
                  reads.incrementAndGet();
                  return Stream.of(given);
                }), NoopOplog.get());
            assertEquals(List.of(given), aggregation.computeResult());
            assertEquals(1, reads.get());
          });
    }
  }

  /**
   * An aggregation with a leading $match answered by the adapters (through an index) is what the
   * server itself answers, cursor and all, on both backends.
   */
  @Test
  void aPrefilteredAggregationAnswersAsTheServer() {
    MongoServer plain = new MongoServer(new MemoryBackend());
    InetSocketAddress address = plain.bind();
    try (EmbeddedMongo memory = EmbeddedMongo.start();
        EmbeddedMongo file = EmbeddedMongo.start(dir);
        var client = com.mongodb.client.MongoClients.create("mongodb://"
            + address.getHostString() + ":" + address.getPort())) {
      MongoCollection<Document> reference = client.getDatabase("d").getCollection("c");
      fill(reference);
      List<Document> expected = reference.aggregate(List.of(
          Aggregates.match(Filters.in("parent", "p1", "p2")), Aggregates.sort(Sorts.descending(
              "i")))).batchSize(3).into(new ArrayList<>());
      assertEquals(20, expected.size());
      for (EmbeddedMongo mongo : List.of(memory, file)) {
        MongoCollection<Document> c = collection(mongo, "c");
        fill(c);
        assumption("an aggregate command comes through handleMessage, and the server answers it "
            + "in one first batch (" + mongo + ")", () -> {
              assertEquals(expected, c.aggregate(List.of(Aggregates.match(Filters.in("parent",
                  "p1", "p2")), Aggregates.sort(Sorts.descending("i")))).batchSize(3)
                  .into(new ArrayList<>()));
              assertEquals(1, served(mongo, "c"));
            });
      }
    } finally {
      plain.shutdownNow();
    }
  }

  /**
   * The H2 collection's queries that ask for batches, sorted (matchDocuments) or not
   * (matchDocumentsFromStream), are read as the batches are taken: the server's paths for them.
   */
  @Test
  void batchedQueriesOfTheH2BackendComeThroughTheOverriddenPaths() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      MongoCollection<Document> c = collection(mongo, "c");
      fill(c);
      H2ServerAdapter backend = (H2ServerAdapter) mongo.backend();
      for (boolean sorted : new boolean[] {false, true}) {
        assumption("the server runs " + (sorted ? "a sorted query through matchDocuments"
            : "an unsorted query through matchDocumentsFromStream"), () -> {
              var find = c.find(Filters.gte("i", 10)).batchSize(5);
              try (MongoCursor<Document> cursor = (sorted ? find.sort(Sorts.descending("i"))
                  : find).iterator()) {
                assertEquals(sorted ? 199 : 10, cursor.next().getInteger("i"));
                assertNotNull(cursor.getServerCursor());
                assertInstanceOf(Class.forName(H2ServerAdapter.class.getName()
                    + "$StreamingCursor"), backend.cursor(cursor.getServerCursor().getId()));
              }
            });
      }
    }
  }
}
