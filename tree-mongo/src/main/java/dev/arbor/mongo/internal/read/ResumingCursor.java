package dev.arbor.mongo.internal.read;

import com.mongodb.MongoCursorNotFoundException;
import com.mongodb.client.MongoCursor;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.IntFunction;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * The cursor of a sorted query that a stream holds while its consumer is away: if the server
 * killed it meanwhile ({@code CursorNotFound}: a cursor idle for longer than the server's {@code
 * cursorTimeoutMillis}, 10 minutes by default, or whose session expired), the query is sent again,
 * skipping the documents already delivered, and the walk goes on where it was. The stream that
 * reads through it checks the tree's version at its end, as ever, so a change made while the
 * cursor was gone is reported ({@code TreeChangedException}), never mixed in silently.
 */
public final class ResumingCursor implements Iterator<Document>, AutoCloseable {
  private final IntFunction<MongoCursor<Document>> open;
  private @Nullable MongoCursor<Document> cursor;
  private int delivered;
  private int resumed;

  /**
   * @param open sends the query, skipping the given number of documents, and returns its cursor
   */
  public ResumingCursor(IntFunction<MongoCursor<Document>> open) {
    this.open = open;
  }

  @Override
  public boolean hasNext() {
    try {
      return cursor().hasNext();
    } catch (MongoCursorNotFoundException e) {
      return reopened().hasNext();
    }
  }

  @Override
  public Document next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Document d;
    try {
      d = cursor().next();
    } catch (MongoCursorNotFoundException e) {
      d = reopened().next();
    }
    delivered++;
    return d;
  }

  /** The documents in hand: given out without a round trip. */
  int available() {
    return cursor == null ? 0 : cursor.available();
  }

  /** Whether the server holds nothing more of this query (the last batch is in hand). */
  boolean drained() {
    return cursor != null && cursor.getServerCursor() == null;
  }

  /** How many times the query was sent again (for tests). */
  int resumed() {
    return resumed;
  }

  private MongoCursor<Document> cursor() {
    if (cursor == null) {
      cursor = open.apply(0);
    }
    return cursor;
  }

  private MongoCursor<Document> reopened() {
    close();
    resumed++;
    cursor = open.apply(delivered);
    return cursor;
  }

  @Override
  public void close() {
    if (cursor != null) {
      try {
        cursor.close();
      } catch (RuntimeException ignored) {
        // a cursor the server already forgot, or a closed client: nothing to release
      }
      cursor = null;
    }
  }
}
