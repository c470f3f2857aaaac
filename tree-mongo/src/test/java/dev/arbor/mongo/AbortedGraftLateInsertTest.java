package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertOneModel;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The abandonment of a graft that failed before its commit: its documents are deleted and the
 * lock freed, and an insert command whose answer was lost must not land after that; a graft that
 * the server refused (none of its commands unanswered) ends at once.
 */
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
                    new org.bson.BsonString("injected: refused")),
                        new ServerAddress("127.0.0.1", 1));
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

  /**
   * A graft refused by the server for an id that exists ends at once: each of its insert
   * commands was answered, so none can still be running and its abandonment has nothing to wait
   * for. Before, on MongoDB's path, it waited out an insert command's time limit (nine tenths of
   * the lease) whenever the graft had stored an insert fence: 27 s with the default lease of
   * 30 s, for a {@code DuplicateNodeException}.
   */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aGraftRefusedForAnIdThatExistsDoesNotWaitOutALease(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    TruthfulOutcomesTest.SkippingTiming recorded = new TruthfulOutcomesTest.SkippingTiming();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .timing(recorded)); // the default lease
    assertTrue(store.lock.ordered(), "the server's behaviour");
    store.load(Tree.parse("a(b(c d) e)"));
    Tree before = store.snapshot();
    assertThrows(DuplicateNodeException.class, () -> store.graft("b", Tree.parse("x(y c)")));
    assertThrows(DuplicateNodeException.class, () -> store.graft("b", List.of(
        new Node("p", null, 0, Map.of()), new Node("q", "p", 1, Map.of()),
        new Node("p", null, 0, Map.of())).iterator()));
    assertEquals(before, store.snapshot());
    assertEquals(List.of(), store.check());
    assertEquals(List.of(), recorded.waits.stream().filter(ms -> ms >= 1_000).toList(),
        "the waits of a second or more");
  }
}
