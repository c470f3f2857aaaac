package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.ServerAddress;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.Transactions;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Changes too large for one transaction are made by the lock protocol instead of being retried
 * for minutes: what each server error means runs here; the fallback itself runs where the suite
 * is given a replica set ({@code -Darbor.mongo.uri=mongodb://…}) and is skipped elsewhere.
 */
class LargeTransactionsTest {
  private static MongoCommandException error(int code, String name, String... labels) {
    BsonArray l = new BsonArray();
    for (String label : labels) {
      l.add(new BsonString(label));
    }
    BsonDocument response = new BsonDocument("ok", new BsonInt32(0))
        .append("code", new BsonInt32(code)).append("codeName", new BsonString(name))
        .append("errmsg", new BsonString(name)).append("errorLabels", l);
    return new MongoCommandException(response, new ServerAddress());
  }

  private static final String TRANSIENT = MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL;

  @Test
  void transientErrorsAreRetriedThenLeftToTheLock() {
    MongoException conflict = error(112, "WriteConflict", TRANSIENT);
    assertEquals(Transactions.Verdict.RETRY, Transactions.verdict(conflict, 1));
    assertEquals(Transactions.Verdict.RETRY,
        Transactions.verdict(conflict, Transactions.MAX_ATTEMPTS - 1));
    assertEquals(Transactions.Verdict.USE_THE_LOCK,
        Transactions.verdict(conflict, Transactions.MAX_ATTEMPTS));
  }

  @Test
  void transactionsThatCanNeverFitGoToTheLockAtOnce() {
    for (MongoException e : new MongoException[] {
        error(290, "TransactionExceededLifetimeLimitSeconds"),
        error(334, "TransactionTooLarge"),
        error(999_999, "TransactionTooLargeForCache"),
        error(999_999, "TransactionTooLargeForCache", TRANSIENT)}) {
      assertEquals(Transactions.Verdict.USE_THE_LOCK, Transactions.verdict(e, 1), e.getMessage());
    }
  }

  @Test
  void anUnknownCommitResultOrAnyOtherErrorIsThrown() {
    // The change may have been committed: making it again under the lock could apply it twice.
    assertEquals(Transactions.Verdict.THROW, Transactions.verdict(
        error(91, "ShutdownInProgress", MongoException.UNKNOWN_TRANSACTION_COMMIT_RESULT_LABEL,
            TRANSIENT), 1));
    assertEquals(Transactions.Verdict.THROW,
        Transactions.verdict(error(13, "Unauthorized"), 1));
    assertEquals(Transactions.Verdict.THROW,
        Transactions.verdict(error(11000, "DuplicateKey"), 1));
  }

  private static boolean transactions() {
    MongoClient client = MongoTestServer.get().client();
    try (ClientSession session = client.startSession()) {
      session.withTransaction(() -> MongoTestServer.get().freshCollection().find(session)
          .first());
      return true;
    } catch (MongoException e) {
      return false;
    }
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aChangeOverTheDocumentBudgetIsMadeByTheLockProtocol(TreePattern pattern) {
    assumeTrue(transactions(), "the server runs no transactions");
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, TreeOptions.defaults()
        .withTransactions(MongoTestServer.get().client()).capabilities(c)
        .transactionMaxDocuments(3));
    Tree fixture = Tree.parse("a(b(c d(e f g h)) i(j))");
    store.load(fixture);
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(fixture);

    store.insert("k", Position.lastChildOf("j"));
    reference.insert("k", Position.lastChildOf("j"));
    long before = store.transactions.leftToTheLock.get();
    store.move("b", Position.lastChildOf("k")); // six nodes move
    reference.move("b", Position.lastChildOf("k"));
    assertEquals(reference.snapshot(), store.snapshot());
    assertEquals(java.util.List.of(), store.check());
    if (pattern != TreePattern.PARENT_REFERENCES && pattern != TreePattern.CHILD_REFERENCES) {
      // References move one or two documents; the others rewrite the whole subtree.
      assertEquals(before + 1, store.transactions.leftToTheLock.get(),
          "the move went to the lock protocol");
    }
  }
}
