package dev.arbor.mongo.internal.protocol;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;

/**
 * What the lock protocol makes of a driver error: a duplicate key (a fence that no longer holds,
 * a document already inserted), a command out of its time limit, or an error after which the same
 * fenced command may be sent again.
 */
final class MongoErrors {
  private MongoErrors() {}

  static boolean duplicateKey(int code) {
    return ErrorCategory.fromErrorCode(code) == ErrorCategory.DUPLICATE_KEY;
  }

  /**
   * Whether {@code error} is a duplicate key of the {@code _id} index, not of an index of the
   * caller's (which MongoDB and the embedded server name in the message as {@code index: _id_}).
   */
  static boolean duplicateId(BulkWriteError error) {
    return duplicateKey(error.getCode())
        && String.valueOf(error.getMessage()).contains(" index: _id_ ");
  }

  static boolean duplicateKey(MongoException e) {
    if (e instanceof MongoWriteException w) {
      return w.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
    }
    return duplicateKey(e.getCode());
  }

  /** Whether a command ran out of its time limit (the client's or the server's). */
  static boolean timedOut(MongoException e) {
    return e instanceof MongoOperationTimeoutException
        || e instanceof MongoExecutionTimeoutException
        || e.getCause() instanceof com.mongodb.MongoSocketReadTimeoutException;
  }

  /** Errors after which the same fenced batch may be sent again. */
  static boolean transientError(MongoException e) {
    return (e instanceof MongoBulkWriteException b && b.getWriteErrors().isEmpty()
        && b.getWriteConcernError() != null)
        || e instanceof MongoSocketException || e instanceof MongoTimeoutException
        || e instanceof MongoOperationTimeoutException
        || e instanceof MongoExecutionTimeoutException
        || e instanceof MongoNotPrimaryException || e instanceof MongoNodeIsRecoveringException
        || e instanceof MongoWriteConcernException
        || e.hasErrorLabel(MongoException.RETRYABLE_ERROR_LABEL)
        || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
  }
}
