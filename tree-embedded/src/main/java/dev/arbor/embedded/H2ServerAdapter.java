package dev.arbor.embedded;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractCursor;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.exception.CursorNotFoundException;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.DataType;
import org.jspecify.annotations.Nullable;

/**
 * The adapter of mongo-java-server's H2 MVStore backend: the one place where tree-embedded
 * subclasses it. Its databases create a {@link HashIndex} where the server creates an {@code
 * EmptyIndex}, and its collections read the candidates an index gives ({@link IndexedQueries})
 * instead of scanning, for queries and for the leading {@code $match} of a pipeline ({@link
 * ServerAdapter#aggregate}); their queries that ask for batches are read from the file as the
 * batches are taken; each command runs under the {@link DataFileSaver}, which saves between two.
 *
 * <p>The indexes live in memory, not in the store: the file holds the documents and the
 * descriptions of the indexes ({@code system.indexes}), as the server's H2 backend writes them,
 * and a server opening the file re-creates each index from its description, which fills it from
 * the documents ({@code AbstractMongoCollection.addIndex} fills an empty index). Files written by
 * the plain H2 backend open unchanged, and the reverse. {@code dropIndexes} drops the
 * collection's own descriptions ({@link ServerAdapter#dropIndexes}).
 *
 * <p><b>The server's internals it relies on</b>, those of mongo-java-server {@value
 * ServerAdapter#PINNED_VERSION} (the version the parent pom pins):
 *
 * <ul>
 *   <li>the protected methods it overrides ({@code H2Database.openOrCreateCollection}, {@code
 *       H2Collection.queryDocuments}, {@code matchDocuments}, {@code matchDocumentsFromStream},
 *       {@code removeDocument}, ...), found by reflection before each backend starts ({@link
 *       #checkAssumptions});
 *   <li>the names of the store's maps, private to {@code H2Database}: a collection's documents in
 *       {@value #DATA_PREFIX}{@code <db>.<collection>}, its metadata in {@value
 *       #META_PREFIX}{@code <db>.<collection>}, its unique indexes in {@code
 *       <db>.<collection>}{@value #INDEX_INFIX}{@code <name>}; the two prefixes are read from the
 *       server's constants by reflection at start-up, the infix is checked by {@code
 *       ServerAssumptionsTest};
 *   <li>that {@code H2Backend}'s constructor opens the databases it finds in the store, and {@code
 *       H2Database}'s its collections, before a subclass's constructor has run: the database is
 *       therefore an inner class that reads the store from its backend ({@code getMvStore()},
 *       set before), where a field of its own would still be null (no thread-local: javac sets
 *       an inner class's enclosing instance before calling the superclass constructor);
 *   <li>that {@code H2Database.openOrCreateUniqueIndex} opens its map with {@code
 *       MVStore.openMap(name)}, which returns the map the adapter opened just before with {@link
 *       KeyValueType} as its key type (if it did not, the index would compare its keys as the
 *       server does, in the same order, only slower);
 *   <li>that the server asks {@code openOrCreateSecondaryIndex} for every non-unique index, hands
 *       each removed document's key to {@code removeDocument}, and runs sorted queries through
 *       {@code matchDocuments} and unsorted ones through {@code matchDocumentsFromStream}; and
 *       what {@link ServerAdapter#aggregate} says of the aggregations.
 * </ul>
 *
 * <p>{@code ServerAssumptionsTest} checks each; a start-up check that fails throws an {@link
 * IllegalStateException} naming the assumption.
 *
 * <p>Positions are the documents' {@code _id} values (a null one stored as {@code Missing}), the
 * keys of the collection's map; the scan reads them in the map's key order, and so do the
 * candidates.
 */
final class H2ServerAdapter extends H2Backend {
  /** The prefix of the name of a collection's map of documents ({@code H2Database}'s). */
  static final String DATA_PREFIX = "databases.";
  /** The prefix of the name of a collection's map of metadata ({@code H2Database}'s). */
  static final String META_PREFIX = "meta.";
  /** Between a collection's full name and an index's in the name of a unique index's map. */
  static final String INDEX_INFIX = "._index_";

  private final DataFileSaver saver;
  /** The switch of MongoDB's ordered writes, off by default. */
  final OrderedWrites ordered = new OrderedWrites();

  private H2ServerAdapter(MVStore store, DataFileSaver saver) {
    super(store);
    this.saver = saver;
  }

  /**
   * A backend over {@code store}, with secondary indexes in effect, that saves unsaved changes
   * past {@code autosaveBytes} between two commands.
   *
   * @throws IllegalStateException if an assumption on the server's internals no longer holds
   */
  static H2ServerAdapter create(MVStore store, long autosaveBytes) {
    checkAssumptions();
    return new H2ServerAdapter(store, new DataFileSaver(store, autosaveBytes));
  }

  /**
   * Checks the assumptions on the server's internals that can be checked without running it.
   *
   * @throws IllegalStateException naming the first that no longer holds
   */
  static void checkAssumptions() {
    ServerAdapter.checkOverrides(H2ServerAdapter.class);
    ServerAdapter.checkOverrides(IndexedDatabase.class);
    ServerAdapter.checkOverrides(IndexedCollection.class, ServerAdapter.Prefiltered.class);
    ServerAdapter.checkOverrides(StreamingCursor.class);
    ServerAdapter.check(DATA_PREFIX.equals(constant("DATABASES_PREFIX")),
        "H2Database.DATABASES_PREFIX, the prefix of a collection's map of documents, is \""
            + DATA_PREFIX + "\"");
    ServerAdapter.check(META_PREFIX.equals(constant("META_PREFIX")),
        "H2Database.META_PREFIX, the prefix of a collection's map of metadata, is \""
            + META_PREFIX + "\"");
  }

  /** The value of H2Database's static String field {@code name}, or null. */
  private static @Nullable Object constant(String name) {
    try {
      Field f = H2Database.class.getDeclaredField(name);
      f.setAccessible(true);
      return f.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** The cursor of {@code id}, for the tests: a query read as its batches are taken has one. */
  Object cursor(long id) {
    return getCursorRegistry().getCursor(id);
  }

  /** The saves of this backend's store. */
  DataFileSaver saver() {
    return saver;
  }

  @Override
  public Document handleMessage(MongoMessage message) {
    return saver.command(() -> {
      Document prefiltered = ServerAdapter.aggregate(this, message, oplog);
      if (prefiltered == null) {
        prefiltered = ServerAdapter.dropIndexes(this, message);
      }
      if (prefiltered != null) {
        return prefiltered;
      }
      return ordered.handle(message, super::handleMessage);
    });
  }

  @Override
  protected Document handleKillCursors(Document query) {
    if (query.get("cursors") instanceof List<?> ids) {
      for (Object id : ids) {
        if (id instanceof Number n) {
          try {
            if (getCursorRegistry().getCursor(n.longValue()) instanceof StreamingCursor c) {
              c.close();
            }
          } catch (CursorNotFoundException e) {
            // the server answers for it
          }
        }
      }
    }
    return super.handleKillCursors(query);
  }

  @Override
  protected MongoDatabase openOrCreateDatabase(String databaseName) {
    return new IndexedDatabase(databaseName, getMvStore(), getCursorRegistry());
  }

  /** The rest of a query's documents, read from the collection as {@code getMore} takes them. */
  private static final class StreamingCursor extends AbstractCursor {
    private final Iterator<Document> rest;
    private final UnaryOperator<List<Document>> project;
    private final MVStore store;
    // The version the cursor reads, kept readable: the store must not reuse the space of its
    // pages while the cursor is open, however many saves are made meanwhile.
    private MVStore.@Nullable TxCounter reading;
    private @Nullable Document next;

    /** Starts reading {@code documents} (a lazy stream over {@code store}'s maps). */
    StreamingCursor(long id, MVStore store, Stream<Document> documents,
        UnaryOperator<List<Document>> project) {
      super(id);
      this.store = store;
      this.project = project;
      this.reading = store.registerVersionUsage(); // before the map's cursor takes its root
      this.rest = documents.iterator();
      advance();
    }

    private void advance() {
      next = rest.hasNext() ? rest.next() : null;
      if (next == null) {
        close();
      }
    }

    /** Lets the store reuse the space of the version read. Idempotent. */
    synchronized void close() {
      if (reading != null) {
        store.deregisterVersionUsage(reading);
        reading = null;
      }
    }

    @Override
    public synchronized boolean isEmpty() {
      return next == null;
    }

    @Override
    public synchronized List<Document> takeDocuments(int numberToReturn) {
      // 0 asks for the server's default batch, as on MongoDB (101 documents).
      int n = numberToReturn > 0 ? numberToReturn : 101;
      List<Document> batch = new ArrayList<>(Math.min(n, 1_024));
      while (next != null && batch.size() < n) {
        batch.add(next);
        advance();
      }
      return project.apply(batch);
    }
  }

  /**
   * An inner class: H2Database's constructor opens the collections (openOrCreateCollection)
   * before a field of this class could be set, but the enclosing backend, and its store, are
   * already there.
   */
  private final class IndexedDatabase extends H2Database {
    IndexedDatabase(String databaseName, MVStore store, CursorRegistry cursorRegistry) {
      super(databaseName, store, cursorRegistry);
    }

    private MVStore store() {
      return getMvStore();
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

    /**
     * The server's unique index, over a map opened first with {@link KeyValueType} as its key
     * type: the server's own {@code openMap(name)} then finds it open and takes it as it is.
     * The keys, the file and the order are those of the server's map; only the comparison of
     * string keys is cheaper (should a later server open its own map, the index is as fast as
     * the server's, never wrong).
     */
    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName,
        List<IndexKey> keys, boolean sparse) {
      store().openMap(getFullCollectionNamespace(collectionName) + INDEX_INFIX + indexName,
          new MVMap.Builder<KeyValue, Object>().keyType(new KeyValueType()));
      return super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
    }

    /**
     * Moves the collection's maps to its new name: its documents, its metadata and its unique
     * indexes. The H2 backend of mongo-java-server 1.47 renames the maps of the new name
     * instead (it reads the collection's name after renaming it), which creates empty ones and
     * leaves the documents under the old name, where the next start does not look.
     */
    @Override
    public void moveCollection(MongoDatabase oldDatabase, MongoCollection<?> collection,
        String newCollectionName) {
      String oldName = collection.getFullName();
      super.moveCollection(oldDatabase, collection, newCollectionName);
      String newName = getFullCollectionNamespace(newCollectionName);
      MVStore s = store();
      for (String map : new ArrayList<>(s.getMapNames())) {
        String renamed = map.equals(DATA_PREFIX + oldName) ? DATA_PREFIX + newName
            : map.equals(META_PREFIX + oldName) ? META_PREFIX + newName
            : map.startsWith(oldName + INDEX_INFIX) ? newName + map.substring(oldName.length())
            : null;
        if (renamed != null) {
          if (s.hasMap(renamed)) {
            s.removeMap(renamed); // opened empty by the server's own rename
          }
          s.renameMap(s.openMap(map), renamed);
        }
      }
    }

    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName,
        List<IndexKey> keys, boolean sparse) {
      return new HashIndex<>(indexName, keys, Missing::ofNullable);
    }
  }

  private static final String ID = "_id";

  static final class IndexedCollection extends H2Collection
      implements ServerAdapter.Prefiltered {
    private final DataType<Object> keyType;
    private final MVStore store;

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
        MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap,
        CursorRegistry cursorRegistry) {
      super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
      this.keyType = dataMap.getKeyType();
      this.store = dataMap.getStore();
    }

    @Override
    protected QueryResult queryDocuments(Document query, @Nullable Document orderBy,
        int numberToSkip, int limit, int batchSize, @Nullable Document fieldSelector) {
      Iterable<Object> alone = IndexedQueries.byIdAlone(getIndexes(), query);
      if (alone != null) {
        return matchDocuments(new Document(), alone, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      IndexedQueries.Candidates<Object> served = IndexedQueries.candidates(getIndexes(), query,
          count());
      if (served == null) {
        return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      return matchDocumentsFromStream(documents(served.positions(),
          isNaturalDescending(orderBy)).stream(), served.rest(), orderBy, numberToSkip, limit,
          batchSize, fieldSelector);
    }

    /** The documents at {@code positions}, in the scan's order. */
    private List<Document> documents(List<Object> positions, boolean descending) {
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

    /**
     * A query in the map's order (no sort) that asks for batches is read as its batches are
     * taken: the first batch now, the rest at each {@code getMore}, from the map's snapshot of
     * when the query ran. The server's own version collects every matching document first,
     * which a collection larger than the heap cannot hold (the file's documents are copies,
     * deserialized as they are read). Same documents, same order. Internal queries (of updates,
     * deletes and counts) ask for no batches and are answered as before.
     */
    @Override
    protected QueryResult matchDocumentsFromStream(Document query, Stream<Document> documentStream,
        int numberToSkip, int limit, int batchSize,
        @Nullable Comparator<Document> documentComparator, @Nullable Document fieldSelector) {
      if (documentComparator != null || batchSize <= 0) {
        return super.matchDocumentsFromStream(query, documentStream, numberToSkip, limit,
            batchSize, documentComparator, fieldSelector);
      }
      Stream<Document> matched = documentStream.filter(d -> documentMatchesQuery(d, query));
      if (numberToSkip > 0) {
        matched = matched.skip(numberToSkip);
      }
      if (limit > 0) {
        matched = matched.limit(limit);
      }
      return streamed(matched, batchSize, fieldSelector);
    }

    /**
     * A sorted scan that asks for batches holds only the sort values ({@link
     * ServerAdapter.SortKeys}) and positions of the matching documents, sorted in the server's
     * order (the server's sort is stable, and so is this one), and reads each
     * document again as its batch is taken (a document deleted meanwhile is left out, one changed
     * so that it no longer matches too). The server's own sort holds every matching document.
     */
    @Override
    protected QueryResult matchDocuments(Document query, @Nullable Document orderBy,
        int numberToSkip, int limit, int batchSize, @Nullable Document fieldSelector) {
      if (!ServerAdapter.sortsByKeys(orderBy) || batchSize <= 0) {
        return super.matchDocuments(query, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      ServerAdapter.SortKeys keys = new ServerAdapter.SortKeys(orderBy);
      List<Keyed> keyed = new ArrayList<>();
      streamAllDocumentsWithPosition().forEach(dp -> {
        Document d = dp.getDocument();
        if (documentMatchesQuery(d, query)) {
          keyed.add(new Keyed(keys.of(d), dp.getPosition()));
        }
      });
      keyed.sort((a, b) -> keys.compare(a.values(), b.values()));
      Stream<Document> matched = keyed.stream().skip(Math.max(0, numberToSkip))
          .limit(limit > 0 ? limit : Long.MAX_VALUE)
          .map(k -> getDocument(k.position()))
          .filter(d -> d != null && documentMatchesQuery(d, query));
      return streamed(matched, batchSize, fieldSelector);
    }

    /** The sort values of a matching document and where it is. */
    private record Keyed(Object[] values, Object position) {}

    /** The first batch of {@code matched} and a cursor over the rest, read as it is taken. */
    private QueryResult streamed(Stream<Document> matched, int batchSize,
        @Nullable Document fieldSelector) {
      // The server's projection (not visible here) applied to a batch: its own query of the
      // batch's documents, matching all.
      UnaryOperator<List<Document>> project = fieldSelector == null
          || fieldSelector.keySet().isEmpty() ? batch -> batch
          : batch -> super.matchDocumentsFromStream(new Document(), batch.stream(), 0, 0, 0,
              null, fieldSelector).collectDocuments();
      StreamingCursor cursor = new StreamingCursor(cursorRegistry.generateCursorId(), store,
          matched, project);
      List<Document> first = cursor.takeDocuments(batchSize);
      if (cursor.isEmpty()) {
        return new QueryResult(first);
      }
      cursorRegistry.add(cursor);
      return new QueryResult(first, cursor);
    }

    @Override
    public Stream<Document> prefiltered(Document match) {
      List<Document> found;
      synchronized (this) {
        IndexedQueries.Candidates<Object> served = IndexedQueries.candidates(getIndexes(), match,
            count());
        found = served == null ? null : documents(served.positions(), false);
      }
      return found != null ? found.stream() : queryAllAsStream();
    }

    @Override
    public Stream<Document> queryAllAsStream() {
      // Every document, read from the map as the stream is consumed: the server's own
      // queryAll() collects them all into a list first, which a collection larger than the heap
      // cannot hold (the file's documents are copies, deserialized as they are read).
      return streamAllDocumentsWithPosition().map(DocumentWithPosition::getDocument);
    }

    @Override
    protected void removeDocument(Object position) {
      IndexedQueries.removing(getIndexes(), position, this::getDocument,
          () -> super.removeDocument(position));
    }

    /**
     * Stores a document whose {@code _id} is a document under a fresh copy of it ({@link
     * #fresh}): the map compares keys by their Java serialization, and an upsert's
     * {@code _id} is the server's clone, whose hash table (sized to its entries) serializes
     * otherwise than the same key read back from the file (sized as a fresh one). Once a save had
     * written and read back the map's page, the position the {@code _id} index held was no
     * longer found: an update of the lock document met a null document.
     */
    @Override
    protected Object addDocumentInternal(Document document) {
      if (document.get(ID) instanceof Document id) {
        document.put(ID, fresh(id));
      }
      return super.addDocumentInternal(document);
    }

    /** {@code d} rebuilt entry by entry, as the server's decoder builds a document. */
    static Document fresh(Document d) {
      Document out = new Document();
      for (var e : d.entrySet()) {
        out.put(e.getKey(), e.getValue() instanceof Document n ? fresh(n) : e.getValue());
      }
      return out;
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
