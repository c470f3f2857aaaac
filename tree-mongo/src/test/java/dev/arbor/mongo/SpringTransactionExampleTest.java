package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.MongoTransactionManager;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.SimpleMongoClientDatabaseFactory;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.SimpleTransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A tree change in a transaction of Spring's {@code MongoTransactionManager}, beside a
 * MongoTemplate write: both commit or neither does. docs/data-api.md shows the example verbatim. On a
 * server that runs transactions (run the suite with {@code -Darbor.mongo.uri=mongodb://…} of a
 * replica set) the example runs; elsewhere it is skipped, as in {@link CallersSessionTest}.
 */
class SpringTransactionExampleTest {

  @Test
  void theTreeChangeCommitsAndRollsBackWithTheSpringTransaction() {
    assumeTrue(CallersSessionTest.transactions(), "the server runs no transactions");
    MongoCollection<Document> productsCollection = MongoTestServer.get().freshCollection();
    productsCollection.insertOne(new Document("_id", "seed")); // exists before the transaction
    String products = productsCollection.getNamespace().getCollectionName();
    MongoTree categories = TreePattern.ARRAY_OF_ANCESTORS.open(
        MongoTestServer.get().freshCollection());
    categories.load(Tree.parse("Books Programming(Databases)"));
    MongoDatabaseFactory databaseFactory = new SimpleMongoClientDatabaseFactory(
        MongoTestServer.get().client(), MongoTestServer.get().database().getName());
    MongoTemplate mongoTemplate = new MongoTemplate(databaseFactory);

    // docs-spring:begin
    MongoTransactionManager transactionManager = new MongoTransactionManager(databaseFactory);
    TransactionTemplate inTransaction = new TransactionTemplate(transactionManager);
    SpringRetries.inTransaction(inTransaction, status -> {  // retried if transient
      mongoTemplate.insert(new Document("_id", "p1").append("category", "Databases"), products);
      ClientSession session = SpringSessions.of(status);  // the transaction's session
      categories.withSession(session).move("Databases", Position.lastChildOf("Books"));
    });
    // docs-spring:end
    assertEquals(List.of("Books"), categories.ancestors("Databases"));
    assertEquals(1, productsCollection.countDocuments(new Document("_id", "p1")));

    Tree before = categories.snapshot();
    assertThrows(IllegalStateException.class, () -> inTransaction.executeWithoutResult(status -> {
      mongoTemplate.insert(new Document("_id", "p2").append("category", "Programming"),
          products);
      categories.withSession(SpringSessions.of(status))
          .move("Programming", Position.lastChildOf("Books"));
      throw new IllegalStateException("the application changes its mind");
    }));
    assertEquals(before, categories.snapshot(), "a rolled back transaction leaves the tree");
    assertEquals(0, productsCollection.countDocuments(new Document("_id", "p2")));
    assertEquals(List.of(), categories.check());
  }

  /**
   * Without a server: a factory whose sessions do nothing shows that the session found is the one
   * Spring's transaction runs in, that a joining scope finds the same and a new transaction
   * another.
   */
  @Test
  void theSessionFoundIsTheTransactionsSession() {
    List<ClientSession> started = new ArrayList<>();
    MongoDatabaseFactory factory = fake(MongoDatabaseFactory.class, method -> {
      if (method.getName().equals("getSession")) {
        started.add(fake(ClientSession.class, m -> null));
        return started.get(started.size() - 1);
      }
      return null;
    });
    MongoTransactionManager manager = new MongoTransactionManager(factory);
    TransactionTemplate required = new TransactionTemplate(manager);
    TransactionTemplate requiresNew = new TransactionTemplate(manager);
    requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    List<ClientSession> found = new ArrayList<>();
    required.executeWithoutResult(status -> {
      found.add(SpringSessions.of(status));
      required.executeWithoutResult(joined -> found.add(SpringSessions.of(joined)));
      requiresNew.executeWithoutResult(other -> found.add(SpringSessions.of(other)));
      found.add(SpringSessions.of(status));
    });
    assertEquals(2, started.size());
    assertEquals(List.of(started.get(0), started.get(0), started.get(1), started.get(0)), found);
  }

  /** A proxy of {@code type} answering {@code answer}'s value, or the return type's default. */
  private static <T> T fake(Class<T> type, Function<Method, Object> answer) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "equals":
              return proxy == args[0];
            case "hashCode":
              return System.identityHashCode(proxy);
            case "toString":
              return type.getSimpleName() + "@" + System.identityHashCode(proxy);
            default:
              Object value = answer.apply(method);
              if (value == null && method.getReturnType() == boolean.class) {
                return false;
              }
              if (value == null && method.getReturnType().isPrimitive()
                  && method.getReturnType() != void.class) {
                return 0;
              }
              return value;
          }
        }));
  }

  /**
   * Without a server: Spring's manager rolls back a transaction whose work failed with a
   * TransientTransactionError and throws; the example's loop runs the work again in a new
   * transaction, and throws other errors, and the last transient one, at once.
   */
  @Test
  void aTransientTransactionErrorIsRetriedInANewTransaction() {
    List<String> calls = new ArrayList<>();
    MongoDatabaseFactory factory = fake(MongoDatabaseFactory.class, method -> {
      if (method.getName().equals("getSession")) {
        return fake(ClientSession.class, m -> {
          if (m.getName().endsWith("Transaction")) {
            calls.add(m.getName());
          }
          return null;
        });
      }
      return null;
    });
    TransactionTemplate inTransaction = new TransactionTemplate(
        new MongoTransactionManager(factory));
    int[] attempts = {0};
    SpringRetries.inTransaction(inTransaction, status -> {
      assertTrue(SpringSessions.of(status) != null);
      if (++attempts[0] < 3) {
        com.mongodb.MongoException e = new com.mongodb.MongoException(
            "the tree was being changed by another caller");
        e.addLabel(com.mongodb.MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
        throw e;
      }
    });
    assertEquals(3, attempts[0]);
    assertEquals(List.of("startTransaction", "abortTransaction", "startTransaction",
        "abortTransaction", "startTransaction", "commitTransaction"), calls);

    attempts[0] = 0;
    assertThrows(IllegalStateException.class, () -> SpringRetries.inTransaction(inTransaction,
        status -> {
          attempts[0]++;
          throw new IllegalStateException("not transient");
        }));
    assertEquals(1, attempts[0]);
    attempts[0] = 0;
    assertThrows(com.mongodb.MongoException.class, () -> SpringRetries.inTransaction(
        inTransaction, status -> {
          attempts[0]++;
          com.mongodb.MongoException e = new com.mongodb.MongoException("always");
          e.addLabel(com.mongodb.MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
          throw e;
        }));
    assertEquals(SpringRetries.MAX_ATTEMPTS, attempts[0]);
    // A commit that failed transiently reaches the caller wrapped by Spring.
    com.mongodb.MongoException commit = new com.mongodb.MongoException("NoSuchTransaction");
    commit.addLabel(com.mongodb.MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
    assertTrue(SpringRetries.transientTransactionError(
        new org.springframework.transaction.TransactionSystemException("commit", commit)));
  }

  @Test
  void outsideAMongoTransactionThereIsNoSession() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> SpringSessions.of(new SimpleTransactionStatus()));
    assertTrue(e.getMessage().contains("MongoTransactionManager"), e.getMessage());
  }

  @Test
  void theDataApiPageShowsTheExample() throws IOException {
    Path page = DocsPages.page("data-api.md");
    DocsPages.assertShown(page, DocsPages.testSource("SpringTransactionExampleTest.java"),
        "docs-spring");
    DocsPages.assertShown(page, DocsPages.testSource("SpringRetries.java"),
        "docs-spring-retries");
    DocsPages.assertShown(page, DocsPages.testSource("SpringSessions.java"),
        "docs-spring-sessions");
  }
}
