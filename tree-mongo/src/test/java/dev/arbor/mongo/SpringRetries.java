package dev.arbor.mongo;

import com.mongodb.MongoException;
import java.util.function.Consumer;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

// docs-spring-retries:begin
/**
 * Runs work in a transaction of Spring's {@code MongoTransactionManager}, again while it fails
 * with a {@code TransientTransactionError}: the driver's {@code withTransaction} retries such a
 * transaction by itself, Spring's manager does not (it rolls back and throws).
 */
final class SpringRetries {
  /** How many times the work runs at most. */
  static final int MAX_ATTEMPTS = 5;

  private SpringRetries() {}

  /** Runs {@code work} in a transaction of {@code template}, retrying transient failures. */
  static void inTransaction(TransactionTemplate template, Consumer<TransactionStatus> work) {
    for (int attempt = 1; ; attempt++) {
      try {
        template.executeWithoutResult(work);
        return;
      } catch (RuntimeException e) {
        if (attempt >= MAX_ATTEMPTS || !transientTransactionError(e)) {
          throw e;
        }
      }
    }
  }

  /** Whether {@code e} or its cause (Spring wraps a failed commit) is labelled transient. */
  static boolean transientTransactionError(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof MongoException m
          && m.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
        return true;
      }
    }
    return false;
  }
}
// docs-spring-retries:end
