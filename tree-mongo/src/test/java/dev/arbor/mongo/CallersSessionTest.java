package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeEvent;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Changes and reads in the caller's session and transaction. On a server that runs transactions
 * (run the suite with {@code -Darbor.mongo.uri=mongodb://…} of a replica set) a change in the
 * caller's transaction commits and aborts with it; elsewhere those tests are skipped, and what
 * needs no server runs here.
 */
class CallersSessionTest {
  private static final String FIXTURE = "a(b(c d(e f)) g(h)) i(j k)";

  static boolean transactions() {
    MongoClient client = MongoTestServer.get().client();
    try (ClientSession session = client.startSession()) {
      session.withTransaction(() -> MongoTestServer.get().freshCollection().find(session)
          .first());
      return true;
    } catch (MongoException e) {
      return false;
    }
  }

  @Test
  void aViewNeedsASession() {
    MongoTree tree = TreePattern.NESTED_SETS.open(MongoTestServer.get().freshCollection());
    assertThrows(NullPointerException.class, () -> tree.withSession(null));
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aChangeInTheCallersTransactionCommitsAndAbortsWithIt(TreePattern pattern) {
    assumeTrue(transactions(), "the server runs no transactions");
    MongoClient client = MongoTestServer.get().client();
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoCollection<Document> products = MongoTestServer.get().freshCollection();
    products.insertOne(new Document("_id", "seed")); // collections exist before the transaction
    List<TreeEvent> told = new CopyOnWriteArrayList<>();
    MongoTree tree = pattern.open(c, TreeOptions.defaults().withListener(told::add));
    tree.load(Tree.parse(FIXTURE));
    told.clear();
    Tree before = tree.snapshot();

    try (ClientSession session = client.startSession()) {
      session.startTransaction();
      products.insertOne(session, new Document("_id", "p1").append("category", "d"));
      tree.withSession(session).move("d", Position.lastChildOf("i"));
      tree.withSession(session).insert("x", Position.lastChildOf("d"));
      assertEquals(List.of("i", "d"), tree.withSession(session).ancestors("x"),
          "the transaction reads its own writes");
      session.abortTransaction();
    }
    assertEquals(before, tree.snapshot(), "an aborted transaction leaves the tree unchanged");
    assertEquals(0, products.countDocuments(new Document("_id", "p1")));
    assertEquals(List.of(), told, "listeners are not told of a change in a caller's transaction");

    try (ClientSession session = client.startSession()) {
      session.withTransaction(() -> {
        products.insertOne(session, new Document("_id", "p1").append("category", "d"));
        tree.withSession(session).move("d", Position.lastChildOf("i"));
        return null;
      });
    }
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(Tree.parse(FIXTURE));
    expected.move("d", Position.lastChildOf("i"));
    assertEquals(expected.snapshot(), tree.snapshot());
    assertEquals(1, products.countDocuments(new Document("_id", "p1")));
    assertEquals(List.of(), tree.check());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aLockProtocolChangeInFlightMakesTheCallersTransactionRetry(TreePattern pattern)
      throws Exception {
    assumeTrue(transactions(), "the server runs no transactions");
    MongoClient client = MongoTestServer.get().client();
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore other = (MongoTreeStore) pattern.open(c);
    other.load(Tree.parse(FIXTURE));
    MongoTree tree = pattern.open(c);
    TreeLock.Hold h = other.lock.acquire("a change that holds the tree");
    java.util.concurrent.CompletableFuture<Void> release = java.util.concurrent.CompletableFuture
        .runAsync(() -> {
          try {
            Thread.sleep(300);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          other.lock.release(h);
        });
    int[] attempts = new int[1];
    try (ClientSession session = client.startSession()) {
      session.withTransaction(() -> {
        attempts[0]++;
        tree.withSession(session).insert("x", Position.lastChildOf("k"));
        return null;
      });
    }
    release.get();
    assertTrue(attempts[0] >= 2, "the first attempt met the held lock and was retried");
    assertEquals(List.of("i", "k"), tree.ancestors("x"));
  }

  @Test
  void withoutATransactionASessionViewMakesChangesAsUsual() {
    MongoClient client = MongoTestServer.get().client();
    ClientSession session;
    try {
      session = client.startSession();
      MongoTestServer.get().freshCollection().find(session).first();
    } catch (MongoException e) {
      assumeTrue(false, "the server has no sessions");
      return;
    }
    try (session) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      MongoTree tree = TreePattern.ARRAY_OF_ANCESTORS.open(c).withSession(session);
      tree.load(Tree.parse(FIXTURE));
      tree.move("d", Position.lastChildOf("i"));
      assertEquals(List.of("i", "d"), tree.ancestors("e"));
      assertEquals(List.of(), tree.check());
    }
  }
}
