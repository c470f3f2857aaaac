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

  /**
   * The name of the unique index, other than {@code _id}'s, that a duplicate key error names in
   * {@code message} ({@code "… index: name_1 dup key: …"}, on MongoDB and the embedded server);
   * null if it names {@code _id_} or no index.
   */
  static @org.jspecify.annotations.Nullable String otherIndex(@org.jspecify.annotations.Nullable
      String message) {
    if (message == null) {
      return null;
    }
    int at = message.indexOf(" index: ");
    if (at < 0) {
      return null;
    }
    int from = at + " index: ".length();
    int to = message.indexOf(' ', from);
    String name = to < 0 ? message.substring(from) : message.substring(from, to);
    return name.equals("_id_") || name.isEmpty() ? null : name;
  }

  /**
   * The error for one of Arbor's own documents (a fence, the lock document) that a unique index
   * of the user's refused: it names the index. Arbor's own documents carry none of the user's
   * fields, so such an index lets only one of them exist.
   */
  static dev.arbor.core.TreeException refusedByIndex(String tree, String index, String what,
      MongoException cause) {
    return new dev.arbor.core.TreeException("Tree '" + tree + "': the collection's unique index '"
        + index + "' refused " + what + ", one of Arbor's own documents, which carry none of your"
        + " fields: make that index partial on its fields (partialFilterExpression: {<field>:"
        + " {$exists: true}}) or sparse; the server said: " + cause.getMessage(), cause);
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
