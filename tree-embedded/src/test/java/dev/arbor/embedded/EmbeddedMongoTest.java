package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import dev.arbor.embedded.internal.DataDirectories;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedMongoTest {
  @TempDir
  Path dir;

  @Test
  void inMemoryServerAnswersOnLoopbackAndForgetsAtClose() {
    String uri;
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      uri = mongo.uri();
      assertTrue(uri.startsWith("mongodb://127.0.0.1:") || uri.startsWith("mongodb://localhost:"),
          uri);
      assertTrue(mongo.dataDir().isEmpty());
      MongoCollection<Document> c = mongo.client().getDatabase("d").getCollection("c");
      c.insertOne(new Document("_id", "a"));
      try (MongoClient other = MongoClients.create(mongo.uri())) {
        assertEquals(1, other.getDatabase("d").getCollection("c").countDocuments());
      }
      DataDirectories.checkpoint(mongo); // nothing to save in memory
    }
    try (EmbeddedMongo again = EmbeddedMongo.start()) {
      assertEquals(0, again.client().getDatabase("d").getCollection("c").countDocuments());
    }
  }

  @Test
  void dataDirectoryKeepsWhatCloseAndCheckpointSaved() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      assertEquals(dir, mongo.dataDir().orElseThrow());
      collection(mongo).insertOne(new Document("_id", "saved by close"));
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      assertEquals(List.of("saved by close"), ids(mongo));
      collection(mongo).insertOne(new Document("_id", "saved by checkpoint"));
      DataDirectories.checkpoint(mongo);
      collection(mongo).insertOne(new Document("_id", "abandoned"));
      DataDirectories.abandon(mongo);
      DataDirectories.abandon(mongo); // idempotent
      mongo.close();
      assertThrows(IllegalStateException.class, mongo::client);
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      assertEquals(List.of("saved by checkpoint", "saved by close"), ids(mongo));
    }
  }

  /**
   * Past the unsaved size it is given, the server saves between two commands: a process that
   * stops without saving keeps what was written before the last of those saves, whole commands
   * only.
   */
  @Test
  void unsavedChangesPastTheLimitAreSavedBetweenCommands() {
    String padding = "x".repeat(1_000);
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir, 256 << 10)) {
      MongoCollection<Document> c = collection(mongo);
      for (int command = 0; command < 20; command++) {
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
          docs.add(new Document("_id", command + "-" + i).append("pad", padding));
        }
        c.insertMany(docs);
      }
      DataDirectories.abandon(mongo); // as if killed: no checkpoint
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      long kept = collection(mongo).countDocuments();
      assertTrue(kept >= 15 * 500, "saved along the way: " + kept);
      assertEquals(0, kept % 500, "whole commands only: " + kept);
    }
  }

  /**
   * A query that asks for batches is read from the file as they are taken, and gives what the
   * in-memory server gives: with a filter, a projection, a skip and a limit, closed early, and
   * read on while other clients' writes are saved under it (the file's space is not reused
   * under an open cursor, even with no retention time).
   */
  @Test
  void batchedQueriesReadTheFileAsTheyGo() {
    try (EmbeddedMongo file = EmbeddedMongo.start(dir, 64 << 10);
        EmbeddedMongo memory = EmbeddedMongo.start()) {
      file.store().setRetentionTime(0);
      for (EmbeddedMongo m : List.of(file, memory)) {
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
          docs.add(new Document("_id", String.format("%05d", i)).append("i", i)
              .append("even", i % 2 == 0).append("pad", "p".repeat(200)));
        }
        collection(m).insertMany(docs);
      }
      for (EmbeddedMongo m : List.of(file, memory)) {
        DataDirectories.checkpoint(m);
      }
      java.util.function.Function<EmbeddedMongo, List<Document>> query = m -> collection(m)
          .find(Filters.eq("even", true)).projection(new Document("i", 1)).skip(7).limit(1_200)
          .batchSize(50).into(new ArrayList<>());
      List<Document> expected = query.apply(memory);
      assertEquals(1_200, expected.size());
      assertEquals(expected, query.apply(file));
      // A sorted scan in batches: the file's server holds sort values and positions only
      // (H2ServerAdapter.matchDocuments), in the in-memory server's order.
      java.util.function.Function<EmbeddedMongo, List<Document>> sorted = m -> collection(m)
          .find(Filters.exists("pad")).sort(Sorts.orderBy(Sorts.descending("even"),
              Sorts.ascending("i"))).projection(new Document("i", 1)).skip(3).limit(1_600)
          .batchSize(40).into(new ArrayList<>());
      List<Document> bySort = sorted.apply(memory);
      assertEquals(List.of(6, 8, 2_998, 1), List.of(bySort.get(0).get("i"),
          bySort.get(1).get("i"), bySort.get(1_496).get("i"), bySort.get(1_497).get("i")));
      assertEquals(bySort, sorted.apply(file));

      try (com.mongodb.client.MongoCursor<Document> early = collection(file).find()
          .batchSize(10).iterator()) {
        assertEquals("00000", early.next().get("_id")); // closed with batches left: killed
      }

      List<Document> read = new ArrayList<>();
      try (com.mongodb.client.MongoCursor<Document> cursor = collection(file).find()
          .batchSize(100).iterator()) {
        for (int round = 0; cursor.hasNext(); round++) {
          read.add(cursor.next());
          if (round % 100 == 0 && round < 2_000) {
            // Rewrites every document, well past the save limit: saved under the cursor.
            collection(file).updateMany(new Document(), new Document("$set",
                new Document("pad", "q".repeat(200)).append("round", round)));
          }
        }
      }
      assertEquals(3_000, read.size());
      for (int i = 0; i < read.size(); i++) {
        assertEquals(String.format("%05d", i), read.get(i).get("_id"));
        assertEquals(i, read.get(i).get("i"));
      }
    }
  }

  /**
   * A renamed collection keeps its documents and its indexes in the file (mongo-java-server's
   * H2 backend left them under the old name, and the next start found the collection empty).
   */
  @Test
  void aRenamedCollectionKeepsItsDocumentsInTheFile() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      MongoDatabase db = mongo.client().getDatabase("d");
      MongoCollection<Document> a = db.getCollection("a");
      for (int i = 0; i < 100; i++) {
        a.insertOne(new Document("_id", "k" + i).append("u", i));
      }
      a.createIndex(new Document("u", 1), new com.mongodb.client.model.IndexOptions()
          .unique(true));
      db.getCollection("b").insertOne(new Document("_id", "replaced"));
      a.renameCollection(new com.mongodb.MongoNamespace("d", "b"),
          new com.mongodb.client.model.RenameCollectionOptions().dropTarget(true));
    }
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      MongoDatabase db = mongo.client().getDatabase("d");
      MongoCollection<Document> b = db.getCollection("b");
      assertEquals(100, b.countDocuments());
      assertEquals(42, b.find(Filters.eq("_id", "k42")).first().get("u"));
      assertEquals(0, b.countDocuments(Filters.eq("_id", "replaced")));
      assertFalse(db.listCollectionNames().into(new ArrayList<>()).contains("a"));
      MongoWriteException duplicate = assertThrows(MongoWriteException.class,
          () -> b.insertOne(new Document("_id", "k0")));
      assertEquals(ErrorCategory.DUPLICATE_KEY, duplicate.getError().getCategory());
      MongoWriteException unique = assertThrows(MongoWriteException.class,
          () -> b.insertOne(new Document("_id", "new").append("u", 7)));
      assertEquals(ErrorCategory.DUPLICATE_KEY, unique.getError().getCategory());
    }
  }

  @Test
  void aDataDirectoryInUseIsRefusedNamingTheFile() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> EmbeddedMongo.start(dir));
      assertEquals("cannot open " + dir.resolve(EmbeddedMongo.DATA_FILE)
          + ": it is in use by another process", e.getMessage());
    }
  }

  private static MongoCollection<Document> collection(EmbeddedMongo mongo) {
    return mongo.client().getDatabase("d").getCollection("c");
  }

  private static List<String> ids(EmbeddedMongo mongo) {
    List<String> ids = new ArrayList<>();
    for (Document d : collection(mongo).find().sort(new Document("_id", 1))) {
      ids.add(d.getString("_id"));
    }
    return ids;
  }
}
