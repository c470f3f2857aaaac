package dev.arbor.cli;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import dev.arbor.core.TreeException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;

/** Turns an exception into the one line the command line prints for it. */
final class Errors {
  private Errors() {}

  static String message(Throwable e) {
    return oneLine(describe(e));
  }

  private static String describe(Throwable e) {
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
    if (e instanceof java.io.IOException) {
      return "I/O error: " + e.getMessage();
    }
    if (e instanceof MongoTimeoutException) {
      return "MongoDB did not answer within " + Connection.TIMEOUT_SECONDS + " s: "
          + Connection.firstLine(e.getMessage());
    }
    if (e instanceof MongoSocketException) {
      return "lost the connection to MongoDB: " + Connection.firstLine(e.getMessage());
    }
    if (e instanceof MongoCommandException c) {
      return "MongoDB refused the command: " + c.getErrorMessage() + " (code " + c.getErrorCode()
          + ")";
    }
    if (e instanceof MongoException) {
      return "MongoDB error: " + Connection.firstLine(e.getMessage());
    }
    return "internal error: " + e + " (run with --stacktrace for details)";
  }

  /** Escapes line breaks and other control characters so the message stays on one line. */
  static String oneLine(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\n') {
        sb.append("\\n");
      } else if (c == '\r') {
        sb.append("\\r");
      } else if (c == '\t') {
        sb.append("\\t");
      } else if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
