package dev.arbor.mongo.internal.read;

import com.mongodb.MongoCursorNotFoundException;
import com.mongodb.MongoException;
import com.mongodb.client.MongoCursor;
import dev.arbor.mongo.internal.protocol.ReadRetry;
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
  private final @Nullable ReadRetry retry;
  private @Nullable MongoCursor<Document> cursor;
  private int delivered;
  private int resumed;

  /**
   * @param open sends the query, skipping the given number of documents, and returns its cursor
   */
  public ResumingCursor(IntFunction<MongoCursor<Document>> open) {
    this(open, null);
  }

  /**
   * @param open sends the query, skipping the given number of documents, and returns its cursor
   * @param retry how a transient driver error (a cut connection, a stalled one past its time
   *     limit) is outlived: the query is sent again, skipping the documents already delivered,
   *     until the lock wait runs out; null: such errors are thrown
   */
  public ResumingCursor(IntFunction<MongoCursor<Document>> open, @Nullable ReadRetry retry) {
    this.open = open;
    this.retry = retry;
  }

  @Override
  public boolean hasNext() {
    for (;;) {
      try {
        boolean more;
        try {
          more = cursor().hasNext();
        } catch (MongoCursorNotFoundException e) {
          more = reopened().hasNext();
        }
        succeeded();
        return more;
      } catch (MongoException e) {
        failed(e);
      }
    }
  }

  @Override
  public Document next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Document d;
    for (;;) {
      try {
        try {
          d = cursor().next();
        } catch (MongoCursorNotFoundException e) {
          d = reopened().next();
        }
        succeeded();
        break;
      } catch (MongoException e) {
        failed(e); // hasNext() was true: the document is had again after the reopening
      }
    }
    delivered++;
    return d;
  }

  /**
   * After the driver error {@code e}: thrown when there is no retry, or when the retry gives up;
   * else the cursor is dropped, to be reopened past the documents delivered.
   */
  private void failed(MongoException e) {
    if (retry == null) {
      throw e;
    }
    retry.failed(e);
    close();
    resumed++;
  }

  private void succeeded() {
    if (retry != null) {
      retry.succeeded();
    }
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
      cursor = open.apply(delivered); // 0 at first; past the delivered ones after an error
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
