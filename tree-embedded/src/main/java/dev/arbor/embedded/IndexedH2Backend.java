package dev.arbor.embedded;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.DataType;
import org.jspecify.annotations.Nullable;

/**
 * The H2 MVStore backend of mongo-java-server with secondary indexes in effect: its databases
 * create a {@link HashIndex} where the server creates an {@code EmptyIndex}, and its collections
 * read the candidates an index gives ({@link IndexedQueries}) instead of scanning, for queries
 * and for the leading {@code $match} of a pipeline.
 *
 * <p>The indexes live in memory, not in the store: the file holds the documents and the
 * descriptions of the indexes ({@code system.indexes}), as the server's H2 backend writes them,
 * and a server opening the file re-creates each index from its description, which fills it from
 * the documents ({@code AbstractMongoCollection.addIndex} fills an empty index). Files written by
 * the plain H2 backend open unchanged, and the reverse.
 *
 * <p>Positions are the documents' {@code _id} values (a null one stored as {@code Missing}), the
 * keys of the collection's map; the scan reads them in the map's key order, and so do the
 * candidates.
 */
final class IndexedH2Backend extends H2Backend {
  /** The store of the database being constructed (its constructor opens its collections). */
  private static final ThreadLocal<MVStore> OPENING = new ThreadLocal<>();

  IndexedH2Backend(MVStore store) {
    super(store);
  }

  @Override
  public Document handleMessage(MongoMessage message) {
    return IndexedQueries.message(this, message, () -> super.handleMessage(message));
  }

  @Override
  protected MongoDatabase openOrCreateDatabase(String databaseName) {
    OPENING.set(getMvStore());
    try {
      return new IndexedDatabase(databaseName, getMvStore(), getCursorRegistry());
    } finally {
      OPENING.remove();
    }
  }

  private static final class IndexedDatabase extends H2Database {
    // The same map names as H2Database's, whose constants are not visible.
    private static final String DATA_PREFIX = "databases.";
    private static final String META_PREFIX = "meta.";

    private final @Nullable MVStore store; // null while the super constructor runs

    IndexedDatabase(String databaseName, MVStore store, CursorRegistry cursorRegistry) {
      super(databaseName, store, cursorRegistry);
      this.store = store;
    }

    private MVStore store() {
      MVStore s = store != null ? store : OPENING.get();
      if (s == null) {
        throw new IllegalStateException("no store for database " + getDatabaseName());
      }
      return s;
    }

    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName,
        CollectionOptions options) {
      String fullName = getFullCollectionNamespace(collectionName);
      MVMap<Object, Document> dataMap = store().openMap(DATA_PREFIX + fullName);
      MVMap<String, Object> metaMap = store().openMap(META_PREFIX + fullName);
      return new IndexedCollection(this, collectionName, options, dataMap, metaMap,
          cursorRegistry);
    }

    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName,
        List<IndexKey> keys, boolean sparse) {
      return new HashIndex<>(indexName, keys, Missing::ofNullable);
    }
  }

  private static final class IndexedCollection extends H2Collection
      implements IndexedQueries.Prefiltered {
    private final IndexedQueries.Prefilter prefilter = new IndexedQueries.Prefilter();
    private final DataType<Object> keyType;

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
        MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap,
        CursorRegistry cursorRegistry) {
      super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
      this.keyType = dataMap.getKeyType();
    }

    @Override
    protected QueryResult queryDocuments(Document query, @Nullable Document orderBy,
        int numberToSkip, int limit, int batchSize, @Nullable Document fieldSelector) {
      List<Document> candidates = candidates(query, isNaturalDescending(orderBy));
      if (candidates == null) {
        return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      return matchDocumentsFromStream(candidates.stream(), query, orderBy, numberToSkip, limit,
          batchSize, fieldSelector);
    }

    /** The documents an index gives for {@code query}, in the scan's order, or null. */
    private @Nullable List<Document> candidates(Document query, boolean descending) {
      List<Object> positions = IndexedQueries.candidates(getIndexes(), query, count());
      if (positions == null) {
        return null;
      }
      // The scan's order: the map's key order, or for $natural: -1 the server's descending
      // order of the keys. The set also drops a key listed twice.
      TreeSet<Object> keys = new TreeSet<>(keyType::compare);
      keys.addAll(positions);
      List<Object> ordered = new ArrayList<>(keys);
      if (descending) {
        ordered.sort(ValueComparator.desc());
      }
      return ordered.stream().map(this::getDocument).filter(Objects::nonNull).toList();
    }

    @Override
    public void prefilter(@Nullable Document match) {
      prefilter.set(match);
    }

    @Override
    public Stream<Document> queryAllAsStream() {
      return prefilter.stream(this, match -> candidates(match, false), queryAll());
    }

    @Override
    protected void removeDocument(Object position) {
      super.removeDocument(position);
      IndexedQueries.forget(getIndexes(), position);
    }

    // The server leaves these unsynchronized; they read or change the list of indexes, and
    // count reads documents through an index.

    @Override
    public synchronized int count(Document query, int skip, int limit) {
      return super.count(query, skip, limit);
    }

    @Override
    public synchronized void addIndex(Index<Object> index) {
      super.addIndex(index);
    }

    @Override
    public synchronized void dropIndex(String indexName) {
      super.dropIndex(indexName);
    }
  }
}
