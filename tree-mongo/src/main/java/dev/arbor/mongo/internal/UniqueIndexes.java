package dev.arbor.mongo.internal;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.protocol.Timing;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * Refuses, before a change writes anything, a collection with a unique index that would refuse
 * Arbor's own documents. The tree's lock, its fences and journals are documents of the tree's
 * collection ({@code _id: {arbor: …}}) that carry none of the user's fields: a unique index other
 * than {@code _id} that also indexes documents without its fields (neither sparse nor partial)
 * lets only one of them exist, so the first change that needs a second (its insert fence) would
 * be refused by the server half-way. Arbor creates no unique index of its own, so every such
 * index is the user's; it is named, with the remedy, in a {@link TreeException}.
 *
 * <p>The indexes are read ({@code listIndexes}, one round trip) before a store's first write
 * and again when the last reading is more than {@value #RECHECK_SECONDS} s old, so an index
 * created while the store is in use is seen within that time; a change that meets one meanwhile
 * fails with the server's message, which names it.
 */
final class UniqueIndexes {
  /** The server's code for a command the user may not run. */
  private static final int UNAUTHORIZED = 13;

  /** How long a reading that found no such index stands. */
  static final long RECHECK_SECONDS = 60;

  private final MongoCollection<Document> collection;
  private final Timing timing;
  private final String tree;
  /** The scope's field, which Arbor's own documents of a scoped tree carry too; or null. */
  private final @Nullable String scopeField;
  /** When the indexes were last read and found harmless ({@link Timing#nanoTime()}), or 0. */
  private volatile long checkedAt;

  UniqueIndexes(MongoCollection<Document> collection, Timing timing, String tree,
      @Nullable String scopeField) {
    this.collection = collection;
    this.timing = timing;
    this.tree = tree;
    this.scopeField = scopeField;
  }

  /**
   * Throws if the collection has a unique index that would refuse Arbor's own documents; reads
   * the indexes only when the last reading is older than {@value #RECHECK_SECONDS} s.
   *
   * @throws TreeException naming the index
   */
  void require() {
    require(0);
  }

  /**
   * {@link #require()}, its read bounded by {@code limitMillis} (a change's: the lock's command
   * limit, so that a stalled connection ends it as any read of a change does; 0: the client's own
   * settings).
   */
  void require(long limitMillis) {
    long now = timing.nanoTime();
    long at = checkedAt;
    if (at != 0 && now - at < TimeUnit.SECONDS.toNanos(RECHECK_SECONDS)) {
      return;
    }
    try {
      MongoCollection<Document> c = limitMillis > 0
          ? collection.withTimeout(limitMillis, TimeUnit.MILLISECONDS) : collection;
      for (Document index : c.listIndexes()) {
        String refusal = refusal(index);
        if (refusal != null) {
          checkedAt = 0;
          throw new TreeException(refusal);
        }
      }
    } catch (MongoCommandException e) {
      if (e.getErrorCode() != UNAUTHORIZED) {
        throw e;
      }
      // a user who may not list the indexes: the server's refusal of a fence will name one
    }
    checkedAt = now | 1;
  }

  /** Why {@code index} would refuse Arbor's own documents, or null if it would not. */
  @Nullable String refusal(Document index) {
    if (!Boolean.TRUE.equals(index.get("unique"))
        || index.get("partialFilterExpression") != null) {
      return null;
    }
    Object key = index.get("key");
    if (!(key instanceof Document k) || k.keySet().equals(java.util.Set.of("_id"))) {
      return null;
    }
    // A sparse index leaves out the documents that have none of its fields, as Arbor's own
    // are, unless one of its fields is the scope's, which they carry.
    if (Boolean.TRUE.equals(index.get("sparse"))
        && (scopeField == null || !k.containsKey(scopeField))) {
      return null;
    }
    String name = String.valueOf(index.get("name"));
    String first = k.keySet().stream().filter(f -> !f.equals(scopeField)).findFirst()
        .orElse(k.keySet().iterator().next());
    return "Tree '" + tree + "': the collection's unique index '" + name + "' " + k.toJson()
        + " indexes documents that lack its fields, so it would refuse Arbor's own documents"
        + " in the collection (the tree's lock, fences and journals, which carry none of your"
        + " fields): only one of them could exist. Nothing was written. Make the index partial"
        + " on your field, e.g. createIndex(" + k.toJson() + ", {unique: true,"
        + " partialFilterExpression: {" + first + ": {$exists: true}}})"
        + (k.containsKey(String.valueOf(scopeField)) ? "" : ", or sparse")
        + ", or keep the tree in a collection of its own";
  }

  /**
   * Wraps an index creation the server refused because the collection has another index on the
   * same keys ({@code IndexKeySpecsConflict}, {@code IndexOptionsConflict}: a unique index of
   * the user's where Arbor asks for a plain one) in a {@link TreeException} naming it.
   */
  RuntimeException conflict(MongoCommandException e) {
    if (e.getErrorCode() == 85 || e.getErrorCode() == 86) {
      return new TreeException("Tree '" + tree + "': ensureIndexes() could not create the"
          + " indexes this pattern's queries need: the collection has an index on the same keys"
          + " or with the same name and other options (" + e.getErrorMessage() + "); drop or"
          + " rename that index, or keep it and do without ensureIndexes()", e);
    }
    return e;
  }
}
