package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertOneModel;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class AbortedGraftLateInsertTest {
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aLateInsertOfAnAbandonedGraftDoesNotLand(TreePattern pattern) throws Exception {
    for (boolean ordered : new boolean[] {false, true}) {
      MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
      AtomicInteger inserts = new AtomicInteger();
      CompletableFuture<?>[] late = {CompletableFuture.completedFuture(null)};
      java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
      TreeLock.Sender sender = new TreeLock.Sender() {
        @Override
        public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
          boolean insert = batch.statements().stream()
              .anyMatch(s -> s.model() instanceof InsertOneModel && s.isStep());
          if (armed.get() && insert) {
            int n = inserts.incrementAndGet();
            if (n == 1) {
              late[0] = CompletableFuture.runAsync(() -> {
                TruthfulOutcomesTest.pause(300);
                try {
                  TreeLock.BULK.send(coll, batch);
                } catch (RuntimeException e) {
                  // refused
                }
              });
              throw new MongoSocketReadException("injected: late",
                  new ServerAddress("127.0.0.1", 1));
            }
            throw new MongoCommandException(new BsonDocument("ok", new org.bson.BsonInt32(0))
                .append("code", new org.bson.BsonInt32(2)).append("errmsg",
                    new org.bson.BsonString("injected: refused")), new ServerAddress("127.0.0.1", 1));
          }
          return TreeLock.BULK.send(coll, batch);
        }
      };
      MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
          .lease(2_000, 20_000).sender(sender));
      store.load(Tree.parse("a(b c)"));
      armed.set(true);
      String said;
      try {
        store.graft("b", Tree.parse("p(q r)"));
        said = "returned";
      } catch (RuntimeException e) {
        said = e.toString();
      }
      late[0].get(10, TimeUnit.SECONDS);
      Tree stored = pattern.open(c).snapshot();
      assertTrue(said.equals("returned") || !stored.contains("p"),
          "told " + said + " yet stored " + stored);
      assertEquals(List.of(), pattern.open(c).check());
    }
  }
}
