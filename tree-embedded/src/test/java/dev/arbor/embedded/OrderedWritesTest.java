package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.embedded.internal.OrderedBulkWrites;
import java.nio.file.Path;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The switch that makes the embedded server stop an ordered bulk write at its first failed
 * statement, as MongoDB does, and answer what MongoDB answers: the counts of the statements
 * before it ({@code n}, {@code nModified}, {@code upserted}) and the write error at its index in
 * the command. Off by default: the server then goes on after the failed update, as
 * mongo-java-server does.
 */
class OrderedWritesTest {
  @TempDir
  Path dir;

  /** Three documents with a unique {@code k}: 1, 2, 3. */
  private static MongoCollection<Document> three(EmbeddedMongo mongo) {
    MongoCollection<Document> c = mongo.client().getDatabase("d").getCollection("c");
    c.createIndex(Indexes.ascending("k"), new IndexOptions().unique(true));
    c.insertMany(List.of(new Document("_id", 1).append("k", 1),
        new Document("_id", 2).append("k", 2), new Document("_id", 3).append("k", 3)));
    return c;
  }

  /**
   * An upsert that inserts, an update that modifies, a fence-like upsert whose filter misses an
   * existing {@code _id} (a duplicate key, as a lost fence of Arbor's lock meets), an update.
   */
  private static List<WriteModel<Document>> failingThird() {
    return List.of(
        new UpdateOneModel<>(Filters.eq("_id", 4), Updates.set("k", 4),
            new UpdateOptions().upsert(true)),
        new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("x", 1)),
        new UpdateOneModel<>(Filters.and(Filters.eq("_id", 2), Filters.eq("owner", "me")),
            Updates.set("owner", "me"), new UpdateOptions().upsert(true)),
        new UpdateOneModel<>(Filters.eq("_id", 3), Updates.set("x", 1)));
  }

  @Test
  void anOrderedUpdateStopsAtItsFirstErrorAndAnswersTheStatementsBefore() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      OrderedBulkWrites.stopAtFirstError(mongo, true);
      stopsAtTheThird(three(mongo));
    }
  }

  @Test
  void soDoesTheServerWithADataDirectory() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start(dir)) {
      OrderedBulkWrites.stopAtFirstError(mongo, true);
      stopsAtTheThird(three(mongo));
    }
  }

  private static void stopsAtTheThird(MongoCollection<Document> c) {
    MongoBulkWriteException e = assertThrows(MongoBulkWriteException.class,
        () -> c.bulkWrite(failingThird()));
    assertEquals(1, e.getWriteErrors().size());
    assertEquals(2, e.getWriteErrors().get(0).getIndex());
    assertEquals(11000, e.getWriteErrors().get(0).getCode());
    assertEquals(1, e.getWriteResult().getMatchedCount());
    assertEquals(1, e.getWriteResult().getModifiedCount());
    assertEquals(1, e.getWriteResult().getUpserts().size());
    assertEquals(0, e.getWriteResult().getUpserts().get(0).getIndex());
    assertEquals(1, c.find(Filters.eq("_id", 1)).first().get("x"));
    assertNull(c.find(Filters.eq("_id", 3)).first().get("x"), "ran after the failed statement");
    assertEquals(4, c.countDocuments());
  }

  @Test
  void anUnorderedUpdateGoesOnAfterItsErrors() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      OrderedBulkWrites.stopAtFirstError(mongo, true);
      MongoCollection<Document> c = three(mongo);
      MongoBulkWriteException e = assertThrows(MongoBulkWriteException.class,
          () -> c.bulkWrite(failingThird(), new BulkWriteOptions().ordered(false)));
      assertEquals(2, e.getWriteErrors().get(0).getIndex());
      assertEquals(1, c.find(Filters.eq("_id", 3)).first().get("x"));
    }
  }

  @Test
  void offByDefaultTheServerGoesOnAfterAFailedUpdate() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      MongoCollection<Document> c = three(mongo);
      MongoBulkWriteException e = assertThrows(MongoBulkWriteException.class,
          () -> c.bulkWrite(failingThird()));
      assertEquals(2, e.getWriteErrors().get(0).getIndex());
      assertEquals(1, c.find(Filters.eq("_id", 3)).first().get("x"), "mongo-java-server's own");
      OrderedBulkWrites.stopAtFirstError(mongo, true);
      OrderedBulkWrites.stopAtFirstError(mongo, false);
      c.updateOne(Filters.eq("_id", 3), Updates.unset("x"));
      assertThrows(MongoBulkWriteException.class, () -> c.bulkWrite(failingThird().subList(2, 4)));
      assertEquals(1, c.find(Filters.eq("_id", 3)).first().get("x"), "switched off again");
    }
  }

  @Test
  void anOrderedInsertCountsTheDocumentsBeforeItsFirstError() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      OrderedBulkWrites.stopAtFirstError(mongo, true);
      MongoCollection<Document> c = three(mongo);
      MongoBulkWriteException e = assertThrows(MongoBulkWriteException.class,
          () -> c.bulkWrite(List.of(
              new InsertOneModel<>(new Document("_id", 5).append("k", 5)),
              new InsertOneModel<>(new Document("_id", 6).append("k", 6)),
              new InsertOneModel<>(new Document("_id", 1).append("k", 1)),
              new InsertOneModel<>(new Document("_id", 7).append("k", 7)))));
      assertEquals(2, e.getWriteErrors().get(0).getIndex());
      assertEquals(2, e.getWriteResult().getInsertedCount());
      assertFalse(c.find(Filters.eq("_id", 7)).iterator().hasNext());
      assertTrue(c.find(Filters.eq("_id", 6)).iterator().hasNext());
      // the command's default is ordered, as on MongoDB
      Document answer = mongo.client().getDatabase("d").runCommand(new Document("insert", "c")
          .append("documents", List.of(new Document("_id", 8).append("k", 8),
              new Document("_id", 1).append("k", 1), new Document("_id", 9).append("k", 9))));
      assertEquals(1, answer.get("n"));
      assertFalse(c.find(Filters.eq("_id", 9)).iterator().hasNext());
    }
  }

  /**
   * With the switch on, a command's {@code maxTimeMS} is honoured as on MongoDB: the statements of
   * an ordered update that would start after it do not run, and the command fails with {@code
   * MaxTimeMSExpired}, what ran before staying. Here 50 000 statements given 50 ms, which the
   * client waits for; mongo-java-server alone runs them all.
   */
  @Test
  void anOrderedUpdateStopsAtItsTimeLimit() {
    try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
      OrderedBulkWrites.stopAtFirstError(mongo, true);
      MongoCollection<Document> c = three(mongo);
      List<Document> many = new java.util.ArrayList<>();
      for (int i = 0; i < 50_000; i++) {
        many.add(new Document("q", new Document("_id", 1))
            .append("u", new Document("$inc", new Document("n", 1))));
      }
      com.mongodb.MongoExecutionTimeoutException e = assertThrows(
          com.mongodb.MongoExecutionTimeoutException.class, () -> mongo.client().getDatabase("d")
              .runCommand(new Document("update", "c").append("updates", many)
                  .append("ordered", true).append("maxTimeMS", 50)));
      assertEquals(50, e.getCode(), e::toString); // MaxTimeMSExpired
      int ran = c.find(Filters.eq("_id", 1)).first().getInteger("n", 0);
      assertTrue(ran < 50_000, "ran " + ran);
    }
  }

  /**
   * With the switch on, an update or delete command reads {@code $$NOW} once for all its
   * statements, as MongoDB does: in each filter and pipeline update, not inside a {@code $literal}
   * nor in an update's operators, whose values are data.
   */
  @org.junit.jupiter.api.Test
  void aWriteCommandReadsNowOnce() {
    java.time.Instant now = java.time.Instant.ofEpochMilli(1_000);
    de.bwaldvogel.mongo.bson.Document expr = new de.bwaldvogel.mongo.bson.Document("$expr",
        new de.bwaldvogel.mongo.bson.Document("$lt", List.of("$$NOW", 5)));
    de.bwaldvogel.mongo.bson.Document literal = new de.bwaldvogel.mongo.bson.Document("$literal",
        "$$NOW");
    de.bwaldvogel.mongo.bson.Document update = new de.bwaldvogel.mongo.bson.Document();
    update.put("update", "c");
    update.put("updates", List.of(
        statement(expr, new de.bwaldvogel.mongo.bson.Document("$set",
            new de.bwaldvogel.mongo.bson.Document("a", "$$NOW"))),
        statement(expr, List.of(new de.bwaldvogel.mongo.bson.Document("$set",
            new de.bwaldvogel.mongo.bson.Document("b", "$$NOW").append("c", literal))))));
    de.bwaldvogel.mongo.bson.Document frozen = OrderedWrites.frozenNow(update, now);
    List<?> statements = (List<?>) frozen.get("updates");
    de.bwaldvogel.mongo.bson.Document first = (de.bwaldvogel.mongo.bson.Document) statements.get(0);
    de.bwaldvogel.mongo.bson.Document second =
        (de.bwaldvogel.mongo.bson.Document) statements.get(1);
    assertEquals(List.of(now, 5), ((de.bwaldvogel.mongo.bson.Document) ((de.bwaldvogel.mongo.bson
        .Document) first.get("q")).get("$expr")).get("$lt"));
    assertEquals("$$NOW", ((de.bwaldvogel.mongo.bson.Document) ((de.bwaldvogel.mongo.bson.Document)
        first.get("u")).get("$set")).get("a"), "an operator's value is data");
    de.bwaldvogel.mongo.bson.Document set = (de.bwaldvogel.mongo.bson.Document)
        ((de.bwaldvogel.mongo.bson.Document) ((List<?>) second.get("u")).get(0)).get("$set");
    assertEquals(now, set.get("b"));
    assertEquals(literal, set.get("c"));
    de.bwaldvogel.mongo.bson.Document delete = new de.bwaldvogel.mongo.bson.Document();
    delete.put("delete", "c");
    delete.put("deletes", List.of(new de.bwaldvogel.mongo.bson.Document("q", expr)
        .append("limit", 0)));
    assertEquals(List.of(now, 5), ((de.bwaldvogel.mongo.bson.Document) ((de.bwaldvogel.mongo.bson
        .Document) ((de.bwaldvogel.mongo.bson.Document) ((List<?>) OrderedWrites.frozenNow(delete,
        now).get("deletes")).get(0)).get("q")).get("$expr")).get("$lt"));
    de.bwaldvogel.mongo.bson.Document find = new de.bwaldvogel.mongo.bson.Document("find", "c");
    assertSame(find, OrderedWrites.frozenNow(find, now), "other commands as they are");
  }

  private static de.bwaldvogel.mongo.bson.Document statement(de.bwaldvogel.mongo.bson.Document q,
      Object u) {
    return new de.bwaldvogel.mongo.bson.Document("q", q).append("u", u);
  }
}
