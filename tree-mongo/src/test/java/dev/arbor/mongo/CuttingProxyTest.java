package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The {@link CuttingProxy} itself: what it counts, and where its cuts fall. */
class CuttingProxyTest {

  /** A client through {@code proxy} that does not retry, with short timeouts. */
  static MongoClient through(CuttingProxy proxy, boolean retryWrites) {
    MongoClientSettings base = MongoTestServer.settings("mongodb://127.0.0.1:" + proxy.port());
    return MongoClients.create(MongoClientSettings.builder(base)
        .retryWrites(retryWrites)
        .retryReads(false)
        .applyToClusterSettings(b -> b.serverSelectionTimeout(3, TimeUnit.SECONDS))
        .applyToSocketSettings(b -> b.connectTimeout(2, TimeUnit.SECONDS)
            .readTimeout(3, TimeUnit.SECONDS))
        .applyToServerSettings(b -> b.minHeartbeatFrequency(10, TimeUnit.MILLISECONDS))
        .build());
  }

  private static MongoCollection<Document> same(MongoClient client, MongoCollection<Document> c) {
    return client.getDatabase(c.getNamespace().getDatabaseName())
        .getCollection(c.getNamespace().getCollectionName());
  }

  @Test
  void countsTheWriteCommandsOnly() throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
        MongoClient client = through(proxy, false)) {
      MongoCollection<Document> c = same(client, direct);
      c.countDocuments(); // connects
      proxy.count();
      c.insertOne(new Document("_id", 1));
      c.find().first();
      c.updateOne(Filters.eq("_id", 1), Updates.set("x", 1));
      c.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("x", 2));
      c.deleteOne(Filters.eq("_id", 1));
      c.countDocuments();
      assertEquals(List.of("insert", "update", "findAndModify", "delete"), proxy.commands());
      proxy.count(name -> true);
      c.find().first();
      assertEquals(List.of("find"), proxy.commands());
    }
  }

  @Test
  void aCutBeforeTheCommandKeepsItFromTheServer() throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
        MongoClient client = through(proxy, false)) {
      MongoCollection<Document> c = same(client, direct);
      c.insertOne(new Document("_id", 1));
      proxy.arm(CuttingProxy.Cut.BEFORE, 2);
      c.updateOne(Filters.eq("_id", 1), Updates.set("x", 1)); // the 1st: passes
      assertFalse(proxy.fired());
      assertThrows(MongoSocketException.class,
          () -> c.updateOne(Filters.eq("_id", 1), Updates.set("x", 2)));
      assertTrue(proxy.fired());
      assertEquals(1, direct.find().first().get("x"), "the server never saw the 2nd update");
      // The proxy goes on: the client reconnects.
      c.updateOne(Filters.eq("_id", 1), Updates.set("x", 3));
      assertEquals(3, direct.find().first().get("x"));
    }
  }

  @Test
  void aCutAfterTheCommandLosesOnlyItsReply() throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
        MongoClient client = through(proxy, false)) {
      MongoCollection<Document> c = same(client, direct);
      proxy.arm(CuttingProxy.Cut.AFTER, 1);
      assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 1)));
      assertTrue(proxy.fired());
      assertEquals(1, direct.countDocuments(), "the server ran the insert");
      proxy.arm(CuttingProxy.Cut.AFTER, 1);
      assertThrows(MongoSocketException.class,
          () -> c.findOneAndUpdate(Filters.eq("_id", 1), Updates.inc("n", 1)));
      assertEquals(1, direct.find().first().get("n"), "the server ran the findAndModify");
      c.updateOne(Filters.eq("_id", 1), Updates.inc("n", 1));
      assertEquals(2, direct.find().first().get("n"));
    }
  }

  @Test
  void aCutFiresOnce() throws Exception {
    MongoCollection<Document> direct = MongoTestServer.get().freshCollection();
    try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
        MongoClient client = through(proxy, false)) {
      MongoCollection<Document> c = same(client, direct);
      proxy.arm(CuttingProxy.Cut.BEFORE, 1);
      assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 1)));
      c.insertOne(new Document("_id", 2));
      c.insertOne(new Document("_id", 3));
      assertEquals(2, direct.countDocuments());
      assertEquals(List.of("insert", "insert", "insert"), proxy.commands());
    }
  }
}
