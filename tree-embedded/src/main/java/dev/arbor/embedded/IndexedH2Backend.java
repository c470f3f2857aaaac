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
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.UnaryOperator;
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

  /**
   * Unsaved changes past this many bytes are saved between two commands: a 32nd of the heap, at
   * most 32 MB (H2 counts a document at about its serialized size, a fraction of what it takes in
   * the heap: an array of ancestors several times). A load larger than the heap then goes
   * through, its pages written as it goes instead of all at its end.
   */
  static final long AUTOSAVE_BYTES = Math.min(32L << 20, Runtime.getRuntime().maxMemory() / 32);

  private final long autosaveBytes;

  /** Commands hold it shared; a save holds it alone, so that it never captures half a command. */
  private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();

  /** Saves unsaved changes past {@code autosaveBytes} between two commands. */
  IndexedH2Backend(MVStore store, long autosaveBytes) {
    super(store);
    this.autosaveBytes = autosaveBytes;
  }

  @Override
  public Document handleMessage(MongoMessage message) {
    gate.readLock().lock();
    try {
      return IndexedQueries.message(this, message, () -> super.handleMessage(message));
    } finally {
      gate.readLock().unlock();
      if (getMvStore().getUnsavedMemory() > autosaveBytes) {
        save(autosaveBytes); // several threads may get here: the first saves
      }
    }
  }

  /** Saves every change made so far in one atomic commit, between two commands. */
  void save() {
    save(-1);
  }

  /** {@link #save()} if more than {@code unsaved} bytes are still unsaved once the server is held. */
  private void save(long unsaved) {
    gate.writeLock().lock();
    try {
      MVStore store = getMvStore();
      if (!store.isClosed() && store.getUnsavedMemory() > unsaved) {
        store.commit();
        // Pages rewritten by later saves leave chunks mostly dead: their live pages are moved on,
        // so that whole chunks are freed and their space reused (H2's own background thread,
        // which would do it, is off).
        store.compact(50, (int) Math.min(autosaveBytes, 16 << 20));
        // On disk before the next save may reuse the space this one freed (no retention time:
        // see EmbeddedMongo.start).
        store.sync();
      }
    } finally {
      gate.writeLock().unlock();
    }
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
    OPENING.set(getMvStore());
    try {
      return new IndexedDatabase(databaseName, getMvStore(), getCursorRegistry());
    } finally {
      OPENING.remove();
    }
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

  private static final class IndexedDatabase extends H2Database {
    // The same map names as H2Database's, whose constants are not visible.
    private static final String DATA_PREFIX = "databases.";
    private static final String META_PREFIX = "meta.";
    private static final String INDEX_INFIX = "._index_";

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

  private static final class IndexedCollection extends H2Collection
      implements IndexedQueries.Prefiltered {
    private final IndexedQueries.Prefilter prefilter = new IndexedQueries.Prefilter();
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
     * A sorted scan that asks for batches holds only the sort keys and positions of the matching
     * documents, sorted (the server's sort is stable, and so is this one), and reads each
     * document again as its batch is taken (a document deleted meanwhile is left out, one changed
     * so that it no longer matches too). The server's own sort holds every matching document.
     */
    @Override
    protected QueryResult matchDocuments(Document query, @Nullable Document orderBy,
        int numberToSkip, int limit, int batchSize, @Nullable Document fieldSelector) {
      Comparator<Document> order = orderBy == null ? null : deriveComparator(orderBy);
      if (order == null || batchSize <= 0) {
        return super.matchDocuments(query, orderBy, numberToSkip, limit, batchSize,
            fieldSelector);
      }
      List<String> tops = new ArrayList<>();
      for (String key : orderBy.keySet()) {
        int dot = key.indexOf('.');
        tops.add(dot < 0 ? key : key.substring(0, dot));
      }
      List<Keyed> keyed = new ArrayList<>();
      streamAllDocumentsWithPosition().forEach(dp -> {
        Document d = dp.getDocument();
        if (documentMatchesQuery(d, query)) {
          Document key = new Document();
          for (String top : tops) {
            if (d.containsKey(top)) {
              key.put(top, d.get(top));
            }
          }
          keyed.add(new Keyed(key, dp.getPosition()));
        }
      });
      keyed.sort((a, b) -> order.compare(a.key(), b.key()));
      Stream<Document> matched = keyed.stream().skip(Math.max(0, numberToSkip))
          .limit(limit > 0 ? limit : Long.MAX_VALUE)
          .map(k -> getDocument(k.position()))
          .filter(d -> d != null && documentMatchesQuery(d, query));
      return streamed(matched, batchSize, fieldSelector);
    }

    /** The sort key of a matching document and where it is. */
    private record Keyed(Document key, Object position) {}

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
    public void prefilter(@Nullable Document match) {
      prefilter.set(match);
    }

    @Override
    public Stream<Document> queryAllAsStream() {
      // Every document, read from the map as the stream is consumed: the server's own
      // queryAll() collects them all into a list first, which a collection larger than the heap
      // cannot hold (the file's documents are copies, deserialized as they are read).
      return prefilter.stream(this, match -> candidates(match, false),
          () -> streamAllDocumentsWithPosition().map(DocumentWithPosition::getDocument));
    }

    @Override
    protected void removeDocument(Object position) {
      IndexedQueries.removing(getIndexes(), position, this::getDocument,
          () -> super.removeDocument(position));
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
