package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.MongoClientException;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the embedded server (mongo-java-server) lacks, and how the stores find out by probing
 * instead of assuming. Runs only when the tests use the embedded server.
 */
class EmbeddedServerGapsTest {
  private MongoCollection<Document> collection;

  @BeforeEach
  void embeddedOnly() {
    assumeTrue(MongoTestServer.get().embedded(), "documents the embedded server only");
    collection = MongoTestServer.get().freshCollection();
    collection.insertMany(List.of(new Document("_id", "a").append("parent", null),
        new Document("_id", "b").append("parent", "a")));
  }

  @Test
  void noPipelineUpdatesAndTheProbeSeesIt() {
    assertThrows(MongoCommandException.class, () -> collection.updateMany(Filters.eq("_id", "b"),
        List.of(new Document("$set", new Document("x", "$parent")))));
    assertFalse(ServerCapabilities.probing(collection).pipelineUpdates());
  }

  @Test
  void graphLookupIgnoresStartWithAndTheProbeSeesIt() {
    Document d = collection.aggregate(List.of(
        new Document("$match", new Document("_id", "b")),
        new Document("$graphLookup", new Document("from", collection.getNamespace()
            .getCollectionName())
            .append("startWith", "no such id")
            .append("connectFromField", "_id").append("connectToField", "_id")
            .append("maxDepth", 0).append("as", "found")))).first();
    // A correct server finds nothing from "no such id"; this one starts from b's own _id.
    assertEquals(1, d.getList("found", Document.class).size());
    assertFalse(ServerCapabilities.probing(collection).graphLookup());
  }

  @Test
  void noSessionsSoNoTransactions() {
    assertThrows(MongoClientException.class, () -> {
      try (var session = MongoTestServer.get().client().startSession()) {
        session.withTransaction(() -> collection.insertOne(session, new Document("_id", "c")));
      }
    });
  }

  @Test
  void noExplain() {
    assertThrows(MongoCommandException.class,
        () -> collection.find(Filters.eq("parent", "a")).explain());
  }
}
