package dev.arbor.mongo.internal;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.bson.FieldNames;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.layout.Layout;
import dev.arbor.mongo.internal.layout.Layouts;
import dev.arbor.mongo.internal.protocol.ReadRetry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * What a store checks before it writes (and, of the layout, before its first read: {@link
 * #requireForReads}), shared by the store and its views: a collection laid out in another
 * pattern, or holding another id type's tree ({@link Layouts#require}, one sample read until
 * nodes of this pattern have been seen); before a change, a sample node that lacks
 * what the layout adds to the manual's fields ({@link Layout#changeProblem}: a collection in the
 * manual's shape that {@code repair()} has not completed, where the pattern's changes need
 * those fields); and a unique index of the user's
 * that would refuse Arbor's own documents ({@link UniqueIndexes}).
 */
final class FirstWrite {
  private final TreePattern pattern;
  private final Layout layout;
  private final MongoCollection<Document> data;
  private final @Nullable Scope scope;
  private final FieldNames names;
  private final LongSupplier commandLimitMillis;
  final UniqueIndexes uniqueIndexes;
  /** Whether a sample read has seen nodes laid out in this pattern (or a load wrote them). */
  private volatile boolean layoutSeen;

  FirstWrite(TreePattern pattern, Layout layout, MongoCollection<Document> data,
      @Nullable Scope scope, FieldNames names, LongSupplier commandLimitMillis,
      UniqueIndexes uniqueIndexes) {
    this.pattern = pattern;
    this.layout = layout;
    this.data = data;
    this.scope = scope;
    this.names = names;
    this.commandLimitMillis = commandLimitMillis;
    this.uniqueIndexes = uniqueIndexes;
  }

  /**
   * Throws, before anything is written, what stops a write; {@code change}: before a change
   * (not a {@code repair()}, whose work it is to complete a collection in the manual's shape),
   * so that a change that starts from no node (a new root) does not write into such a
   * collection either.
   *
   * @throws TreeException naming what stops it
   */
  void require(boolean change) {
    List<Document> sample = sample();
    if (sample == null) {
      return;
    }
    if (change) {
      for (Document d : sample) {
        String problem = layout.changeProblem(d);
        if (problem != null) {
          throw new TreeException("Node '" + d.get(MongoTreeStore.ID) + "' is not in the "
              + pattern + " layout: " + problem + " (run check() to see all problems,"
              + " repair() to complete derivable fields)");
        }
      }
    }
    layoutSeen = !sample.isEmpty();
  }

  /**
   * Throws, before {@code ensureIndexes()} creates an index, what {@link #require} throws of a
   * unique index of the user's, a collection laid out in another pattern or one holding another
   * id type's tree; it notes nothing, so that the first change still checks its sample for what
   * {@code repair()} has to complete.
   *
   * @throws TreeException naming what stops it
   */
  void requireForIndexes() {
    sample();
  }

  /**
   * Checks the unique indexes and, until nodes of this pattern have been seen, the layout of a
   * sample of the collection, each read bounded as a change's reads are ({@code Reads}: a
   * stalled connection ends the change); returns that sample, or null if the layout was seen.
   * A closed client ends it as {@link ReadRetry#closed}, not the driver's raw {@code
   * IllegalStateException}.
   */
  private @Nullable List<Document> sample() {
    long limit = commandLimitMillis.getAsLong();
    try {
      uniqueIndexes.require(limit);
      return layoutSeen ? null : Layouts.require(pattern,
          data.withTimeout(limit, TimeUnit.MILLISECONDS), scope, names);
    } catch (IllegalStateException e) {
      throw ReadRetry.clientClosed(e) ? ReadRetry.closed("write to collection '"
          + data.getNamespace().getCollectionName() + "'", e) : e;
    }
  }

  /** Notes that the collection holds nodes of this pattern (a change or a load wrote them). */
  void seen() {
    layoutSeen = true;
  }

  /** Whether the first read has looked at the collection's layout ({@link #requireForReads}). */
  private volatile boolean readsChecked;

  /**
   * Throws, before a store's first read answers, if the collection is laid out in another
   * pattern or under other field names ({@link Layouts#requireLaidOut}: the sample a change
   * takes, bounded as a change's reads are; a tree of another id type reads as empty). Read as
   * this pattern, its nodes would come out as a forest of roots whose structural fields are node
   * data. Looked at once per store and its views, whatever the answer (an empty collection is not
   * read again at every read); not for {@code check()}, which lists such a collection's problems.
   * A transient error is the caller's to retry, as the read's own.
   *
   * @throws TreeException naming the pattern the collection is laid out in, or its fields
   */
  void requireForReads() {
    if (layoutSeen || readsChecked) {
      return;
    }
    try {
      Layouts.requireLaidOut(pattern, data.withTimeout(commandLimitMillis.getAsLong(),
          TimeUnit.MILLISECONDS), scope, names);
    } catch (IllegalStateException e) {
      throw ReadRetry.clientClosed(e) ? ReadRetry.closed("read collection '"
          + data.getNamespace().getCollectionName() + "'", e) : e;
    }
    readsChecked = true;
  }
}
