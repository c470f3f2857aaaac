package dev.arbor.embedded;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The adapter of mongo-java-server's in-memory backend: the one place where tree-embedded
 * subclasses it. Its databases create a {@link HashIndex} where the server creates an {@code
 * EmptyIndex}, and its collections read the candidates an index gives ({@link IndexedQueries})
 * instead of scanning, for queries and for the leading {@code $match} of a pipeline ({@link
 * ServerAdapter#aggregate}); a sorted query reads each document's sort values once ({@link
 * ServerAdapter#sortByKeys}). The server's collection of index descriptions is indexed by {@code
 * ns} ({@link ServerAdapter#namespaceIndex}), and {@code dropIndexes} drops the collection's own
 * ({@link ServerAdapter#dropIndexes}).
 *
 * <p><b>The server's internals it relies on</b>, those of mongo-java-server {@value
 * ServerAdapter#PINNED_VERSION} (the version the parent pom pins): the protected methods it
 * overrides ({@code MemoryDatabase.openOrCreateCollection} and {@code
 * openOrCreateSecondaryIndex}, {@code MemoryCollection.queryDocuments}, {@code
 * matchDocumentsFromStream}, {@code removeDocument}, ...), which {@link #checkAssumptions} finds
 * by reflection before each backend starts; that the server asks {@code
 * openOrCreateSecondaryIndex} for every non-unique index and hands each removed document's
 * position to {@code removeDocument}; and what {@link ServerAdapter#aggregate} says of the
 * aggregations. {@code ServerAssumptionsTest} checks each. (A later server that sorted its
 * queries elsewhere would sort them with its own comparator: slower, the same answers.)
 *
 * <p>Positions are the indexes of the documents in the collection's list, reused after deletes;
 * the scan reads them in ascending order, and so do the candidates.
 */
final class MemoryServerAdapter extends MemoryBackend {
  /** The switch of MongoDB's ordered writes, off by default. */
  final OrderedWrites ordered = new OrderedWrites();

  private MemoryServerAdapter() {}

  /**
   * A backend in memory, with secondary indexes in effect.
   *
   * @throws IllegalStateException if an assumption on the server's internals no longer holds
   */
  static MemoryServerAdapter create() {
    checkAssumptions();
    return new MemoryServerAdapter();
  }

  /**
   * Checks the assumptions on the server's internals that can be checked without running it.
   *
   * @throws IllegalStateException naming the first that no longer holds
   */
  static void checkAssumptions() {
    ServerAdapter.checkOverrides(MemoryServerAdapter.class);
    ServerAdapter.checkOverrides(IndexedDatabase.class);
    ServerAdapter.checkOverrides(IndexedCollection.class, ServerAdapter.Prefiltered.class);
    ServerAdapter.checkIndexesCollection();
    DocumentSizes.checkAssumption();
  }

  @Override
  public Document handleMessage(MongoMessage message) {
    Document prefiltered = ServerAdapter.aggregate(this, message, oplog);
    if (prefiltered == null) {
      prefiltered = ServerAdapter.dropIndexes(this, message);
    }
    if (prefiltered != null) {
      return prefiltered;
    }
    return ordered.handle(message, super::handleMessage);
  }

  @Override
  public MemoryDatabase openOrCreateDatabase(String databaseName) {
    return new IndexedDatabase(databaseName, getCursorRegistry());
  }

  private static final class IndexedDatabase extends MemoryDatabase {
    IndexedDatabase(String databaseName, CursorRegistry cursorRegistry) {
      super(databaseName, cursorRegistry);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String collectionName,
        CollectionOptions options) {
      IndexedCollection c = new IndexedCollection(this, collectionName, options, cursorRegistry);
      if (collectionName.equals(ServerAdapter.INDEXES_COLLECTION)) {
        c.addIndex(ServerAdapter.namespaceIndex(UnaryOperator.identity()));
      }
      return c;
    }

    @Override
    protected Index<Integer> openOrCreateSecondaryIndex(String collectionName, String indexName,
        List<IndexKey> keys, boolean sparse) {
      return new HashIndex<>(indexName, keys, UnaryOperator.identity(), true);
    }
  }

  private static final class IndexedCollection extends MemoryCollection
      implements ServerAdapter.Prefiltered {

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
        CursorRegistry cursorRegistry) {
      super(database, collectionName, options, cursorRegistry);
    }

    @Override
    protected QueryResult queryDocuments(Document query, @Nullable Document orderBy,
        int numberToSkip, int limit, int batchSize, @Nullable Document fieldSelector) {
      Iterable<Integer> alone = IndexedQueries.byIdAlone(getIndexes(), query);
      if (alone != null) {
        return matchDocuments(new Document(), alone, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      IndexedQueries.Candidates<Integer> served = IndexedQueries.candidates(getIndexes(), query,
          count());
      if (served == null) {
        return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      return matchDocumentsFromStream(documents(served.positions(),
          isNaturalDescending(orderBy)).stream(), served.rest(), orderBy, numberToSkip, limit,
          batchSize, fieldSelector);
    }

    /**
     * The scan of a query no index serves: where the query requires an equality or an {@code
     * $in} of a field ({@link Equalities}: {@code {parent: {$in: [...128 ids]}}} on a collection
     * without indexes), each document is first tested as a hash index would key it ({@link
     * HashIndex#holdsAnyOf}), and the server's matcher runs on those that pass only. The matcher
     * compares a document's value with each value of an {@code $in} in turn, normalizing both
     * every time: two such shapes took 9.0 of the 18.0 s the embedded server spent in the scans of
     * tree-mongo's suite (stop 60, timed per query shape). The documents, their order and the
     * answer are the scan's ({@code SecondaryIndexPropertiesTest} compares them on collections
     * without indexes too). A scan in descending natural order is left as it is.
     */
    @Override
    protected QueryResult matchDocuments(Document query, @Nullable Document orderBy,
        int numberToSkip, int limit, int batchSize, @Nullable Document fieldSelector) {
      Map<String, Set<Object>> eq = isNaturalDescending(orderBy) ? null : Equalities.of(query);
      if (eq == null || eq.isEmpty()) {
        return super.matchDocuments(query, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      Map.Entry<String, Set<Object>> fewest = null;
      for (Map.Entry<String, Set<Object>> e : eq.entrySet()) {
        if (fewest == null || e.getValue().size() < fewest.getValue().size()) {
          fewest = e;
        }
      }
      String field = fewest.getKey();
      Set<Object> wanted = HashIndex.compacted(fewest.getValue());
      return matchDocumentsFromStream(streamAllDocumentsWithPosition()
          .map(DocumentWithPosition::getDocument)
          .filter(d -> HashIndex.holdsAnyOf(d.get(field), wanted)), query, orderBy,
          numberToSkip, limit, batchSize, fieldSelector);
    }

    /**
     * A sorted query (of candidates or of the scan) is sorted by {@link ServerAdapter#sortByKeys}:
     * the same documents in the same order as the server's sort, whose comparator reads each
     * document's sort values again at every comparison.
     */
    @Override
    protected QueryResult matchDocumentsFromStream(Stream<Document> documentStream,
        Document query, @Nullable Document orderBy, int numberToSkip, int limit, int batchSize,
        @Nullable Document fieldSelector) {
      if (!ServerAdapter.sortsByKeys(orderBy)) {
        return super.matchDocumentsFromStream(documentStream, query, orderBy, numberToSkip,
            limit, batchSize, fieldSelector);
      }
      List<Document> matched = documentStream.filter(d -> documentMatchesQuery(d, query))
          .collect(Collectors.toCollection(ArrayList::new));
      ServerAdapter.sortByKeys(matched, orderBy);
      return super.matchDocumentsFromStream(EVERY_DOCUMENT, matched.stream(), numberToSkip,
          limit, batchSize, null, fieldSelector);
    }

    /** The query every document matches: what is left of a query already applied. */
    private static final Document EVERY_DOCUMENT = new Document();

    /** The documents at {@code positions}, in the scan's order. */
    private List<Document> documents(List<Integer> positions, boolean descending) {
      positions.sort(descending ? Collections.reverseOrder() : null);
      // distinct: an $in may name a document twice
      return positions.stream().distinct().map(this::getDocument).filter(Objects::nonNull)
          .toList();
    }

    @Override
    public Stream<Document> prefiltered(Document match) {
      List<Document> found;
      synchronized (this) {
        IndexedQueries.Candidates<Integer> served = IndexedQueries.candidates(getIndexes(), match,
            count());
        found = served == null ? null : documents(served.positions(), false);
      }
      return found != null ? found.stream() : queryAllAsStream();
    }

    @Override
    protected void removeDocument(Integer position) {
      IndexedQueries.removing(getIndexes(), position, this::getDocument,
          () -> super.removeDocument(position));
    }

    /**
     * The collection's size is not kept up to date on every write: the server would encode the
     * old and the new document of every update, and every inserted or removed one, to adjust it
     * (about a fifth of the server's time in updates in a profile of {@code arbor scope}, more
     * for large documents such as a tree's lock document). It is computed when asked ({@link
     * #getDataSize}: collStats, validate).
     */
    @Override
    protected boolean tracksDataSize() {
      return false;
    }

    /** The encoded size of every document, computed now ({@link #tracksDataSize}). */
    @Override
    protected synchronized int getDataSize() {
      long size = 0;
      for (Document d : queryAll()) {
        size += DocumentSizes.of(d);
      }
      return (int) Math.min(Integer.MAX_VALUE, size);
    }

    // The server leaves these unsynchronized; they read or change the list of indexes, and
    // count reads documents through an index.

    @Override
    public synchronized int count(Document query, int skip, int limit) {
      return super.count(query, skip, limit);
    }

    @Override
    public synchronized void addIndex(Index<Integer> index) {
      super.addIndex(index);
    }

    @Override
    public synchronized void dropIndex(String indexName) {
      super.dropIndex(indexName);
    }

    /** Drops the index descriptions' own index first ({@link ServerAdapter#NAMESPACE_INDEX}). */
    @Override
    public synchronized void drop() {
      if (getCollectionName().equals(ServerAdapter.INDEXES_COLLECTION)
          && getIndexes().stream().anyMatch(i -> i.getName().equals(ServerAdapter.NAMESPACE_INDEX))) {
        dropIndex(ServerAdapter.NAMESPACE_INDEX);
      }
      super.drop();
    }
  }
}
