package dev.arbor.tools;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import dev.arbor.core.TreeException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.Locale;

/**
 * Turns an exception into the one line the command line prints for it: in words, without the
 * driver's internals (its cluster state, its exception classes) and never with the URI, which may
 * hold a password.
 */
public final class Errors {
  private Errors() {}

  /** The one line for {@code e}. */
  public static String message(Throwable e) {
    return Text.oneLine(describe(e));
  }

  /**
   * The one line for a server that could not be used: not answering within {@code timeoutMillis},
   * refusing the credentials, or refusing the first command.
   *
   * @param hosts the hosts of the URI (never its credentials)
   */
  public static String unreachable(String hosts, long timeoutMillis, RuntimeException e) {
    if (e instanceof MongoTimeoutException) {
      return "cannot reach MongoDB at " + hosts + ": no server answered within "
          + String.format(Locale.ROOT, timeoutMillis % 1000 == 0 ? "%.0f s" : "%.1f s",
              timeoutMillis / 1e3);
    }
    return "cannot use MongoDB at " + hosts + ": " + message(e);
  }

  /**
   * The one line for running out of memory: which memory, how much this JVM has and what to do
   * (with an embedded server, its documents share the heap).
   */
  public static String outOfMemory(OutOfMemoryError e, long maxHeap) {
    String what = e.getMessage();
    if (what == null || what.contains("heap") || what.contains("GC overhead")
        || what.contains("array size")) {
      return "out of memory" + (what == null ? "" : " (" + what + ")") + ": this JVM's heap, at"
          + " most " + Text.bytes(maxHeap) + " (java -Xmx), cannot hold what the command"
          + " needs; run java with a larger -Xmx, or use --uri: an embedded server (--data-dir, or"
          + " neither --data-dir nor --uri) keeps its documents in this heap";
    }
    return "out of memory (" + what + ")" + (what.contains("Direct buffer")
        ? ": run java with a larger -XX:MaxDirectMemorySize" : "")
        + " (run with --stacktrace for details)";
  }

  /**
   * What is said after an error when the heap ran nearly full during the command (the command line
   * watches the collector): an embedded server that runs out of heap only closes its connections.
   */
  public static String heapRanFull(long maxHeap) {
    return "this JVM's heap, at most " + Text.bytes(maxHeap) + " (java -Xmx), ran nearly full"
        + " meanwhile: an embedded server (--data-dir, or neither --data-dir nor --uri) keeps its"
        + " documents in it and closes its connections when it runs out; run java with a larger"
        + " -Xmx, or use --uri";
  }

  private static String describe(Throwable e) {
    if (e instanceof OutOfMemoryError o) {
      return outOfMemory(o, Runtime.getRuntime().maxMemory());
    }
    if (e instanceof StackOverflowError) {
      return "internal error: the thread's stack overflowed (java -Xss sets its size; run with"
          + " --stacktrace for details)";
    }
    if (e instanceof CliException || e instanceof TreeException
        || e instanceof IllegalArgumentException || e instanceof UnsupportedOperationException) {
      return String.valueOf(e.getMessage());
    }
    if (e instanceof UncheckedIOException u) {
      return describe(u.getCause());
    }
    if (e instanceof NoSuchFileException f) {
      return "no such file: " + f.getFile();
    }
    if (e instanceof AccessDeniedException f) {
      return "permission denied: " + f.getFile();
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason() + ": " + f.getFile();
    }
    if (e instanceof java.io.IOException) {
      return "I/O error: " + e.getMessage();
    }
    if (e instanceof MongoTimeoutException) {
      return "MongoDB did not answer in time";
    }
    if (e instanceof MongoSecurityException) {
      return "MongoDB refused the credentials (authentication failed)";
    }
    if (e instanceof MongoSocketException) {
      return "lost the connection to MongoDB";
    }
    if (e instanceof MongoCommandException c) {
      return "MongoDB refused the command: " + c.getErrorMessage() + " (code " + c.getErrorCode()
          + ")";
    }
    if (e instanceof MongoWriteException w) {
      return "MongoDB refused a write: " + w.getError().getMessage() + " (code "
          + w.getError().getCode() + ")";
    }
    if (e instanceof MongoBulkWriteException b && !b.getWriteErrors().isEmpty()) {
      BulkWriteError first = b.getWriteErrors().get(0);
      return "MongoDB refused a write: " + first.getMessage() + " (code " + first.getCode() + ")";
    }
    if (e instanceof MongoException m) {
      return "MongoDB error " + m.getCode() + ": " + Text.firstLine(m.getMessage());
    }
    return "internal error: " + e + " (run with --stacktrace for details)";
  }
}
