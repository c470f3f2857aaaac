package dev.arbor.mongo.internal.protocol;

import com.mongodb.MongoException;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * One try of an isolated read: what the body returned or threw, run on {@code reads}. A domain
 * exception of the body (no such node…) stands only if the read is accepted, so it is kept, not
 * thrown; a driver exception is thrown at once.
 *
 * @param <T> what the read returns
 */
final class ReadTry<T> {
  final Reads reads;
  private final @Nullable T result;
  private final @Nullable RuntimeException failed;

  private ReadTry(Reads reads, @Nullable T result, @Nullable RuntimeException failed) {
    this.reads = reads;
    this.result = result;
    this.failed = failed;
  }

  /** Runs {@code body} on {@code reads}. */
  static <T> ReadTry<T> run(Reads reads, Function<Reads, T> body) {
    try {
      return new ReadTry<>(reads, body.apply(reads), null);
    } catch (MongoException e) {
      throw e;
    } catch (RuntimeException e) {
      return new ReadTry<>(reads, null, e); // stands only if the read saw a quiet tree
    }
  }

  /** The lock document folded into the read's query, if it could be. */
  @Nullable BsonDocument folded() {
    return reads.foldedLock();
  }

  /**
   * Whether the read saw the tree at {@code before} with no change in flight: the lock document
   * {@code after} it shows the same quiet version and no lane, and no document the query returned
   * with the folded lock document was written after {@code before}.
   */
  boolean saw(TreeLock.Quiet before, TreeLock.State after) {
    return before.same(after) && !after.lanes
        && (folded() == null || reads.foldedMaxMark() <= before.version());
  }

  /** What the body returned, or null if it threw. */
  @Nullable T result() {
    return result;
  }

  /** The read's outcome, once accepted: its result, or the domain exception it threw. */
  @Nullable T outcome() {
    if (failed != null) {
      throw failed;
    }
    return result;
  }
}
