package dev.arbor.mongo;

import com.mongodb.client.ClientSession;
import org.springframework.data.mongodb.MongoTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionStatus;

// docs-spring-sessions:begin
/**
 * The driver session of a transaction of Spring's {@code MongoTransactionManager}, for code that
 * calls the driver itself, such as Arbor. Spring binds the session to the thread for MongoTemplate
 * and repositories only; the transaction object holds it, and its type is visible to subclasses
 * of the manager alone (hence the {@code extends}: this class is never instantiated).
 */
final class SpringSessions extends MongoTransactionManager {
  private SpringSessions() {}

  /** The session of the MongoDB transaction {@code status} belongs to. */
  static ClientSession of(TransactionStatus status) {
    if (status instanceof DefaultTransactionStatus s && s.hasTransaction()
        && s.getTransaction() instanceof MongoTransactionObject t && t.getSession() != null) {
      return t.getSession();
    }
    throw new IllegalStateException("not in a transaction of a MongoTransactionManager");
  }
}
// docs-spring-sessions:end
