package dev.arbor.embedded;

import static java.util.Objects.requireNonNull;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import dev.arbor.embedded.internal.DataDirectories;
import dev.arbor.embedded.internal.OrderedBulkWrites;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;
import org.jspecify.annotations.Nullable;

/**
 * A MongoDB server inside this JVM, on a free loopback port, for tests, demos and tools that
 * should not need an installed server: <a
 * href="https://github.com/bwaldvogel/mongo-java-server">mongo-java-server</a>, which speaks the
 * MongoDB wire protocol, driven through the official driver exactly as a real server would be.
 *
 * <pre>{@code
 * try (EmbeddedMongo mongo = EmbeddedMongo.start()) {          // in memory
 *   MongoCollection<Document> c = mongo.client().getDatabase("demo").getCollection("c");
 *   ...                                                       // or MongoClients.create(mongo.uri())
 * }
 * }</pre>
 *
 * <h2>In memory or in a data directory</h2>
 *
 * <p>{@link #start()} keeps everything in memory and loses it at {@link #close()}. {@link
 * #start(Path)} keeps the data in one file, {@value #DATA_FILE} in the given directory (an H2
 * MVStore), so that the next server started on the same directory finds it.
 *
 * <p><b>What survives a crash.</b> Changes reach the file at {@link #close()}, at a checkpoint
 * (Arbor's command line takes one when a command succeeds), and whenever more than a 32nd of the
 * heap (at most 32 MB) of them is unsaved, each time in one atomic commit of the MVStore taken
 * between two commands (no command is in flight while it is written). A process that dies at any
 * moment, even killed with {@code SIGKILL} during a save, leaves the file as it was at the last
 * completed save, which the next start reads. (The H2 backend's own background commits, which are
 * turned off here, could capture a write half-way through, a document without its {@code _id} index
 * entry, and the next start would fail on it.) A save between two commands may capture an Arbor
 * change half-way, between two of its batches, as a crash of its process would on MongoDB: its
 * journal and lock are in the file too, and the next access to the tree completes it, or undoes a
 * load, once its lease has run out. Below the limit nothing is written between checkpoints, so
 * small changes are saved whole or not at all. (The command line's control of a data directory, to
 * save now or to stop without saving, is not API: {@code
 * dev.arbor.embedded.internal.DataDirectories}.)
 *
 * <p><b>Larger than the heap.</b> Since changes are saved as they grow, a load larger than the
 * heap goes through; so do reads of it: a query that asks for batches (the driver's {@code
 * batchSize}) is read from the file as its batches are taken, and a sorted one holds only the
 * sort keys of its matches, where mongo-java-server itself collects every matching document
 * first. Each save also rewrites the live pages of mostly-dead parts of the file, whose space the
 * next saves reuse, so that the file stays within a few times its data. A renamed collection
 * keeps its documents and indexes in the file (mongo-java-server 1.47's H2 backend left them
 * under the old name).
 *
 * <h2>Secondary indexes</h2>
 *
 * <p>mongo-java-server itself keeps only unique indexes (the {@code _id} index among them) and
 * ignores the others. This server keeps every non-unique index created with {@code createIndex}
 * or {@code createIndexes} in effect, in both modes, for one kind of query: an equality on a
 * string, an ObjectId, a number or a UUID, {@code {f: v}} or {@code {f: {$eq: v}}}, or an {@code
 * {f: {$in: [v1, ...]}}} of those, on the index's first key (or on its first keys
 * together: {@code {tree: "t", parent: "p"}} on {@code {tree: 1, parent: 1, rank: 1}}), found at
 * the top level of the filter or inside a top-level {@code $and}, whatever the filter's other
 * conditions. A field that holds an array is indexed by each of its elements, as on MongoDB. Such a
 * query reads only the documents the index names, then applies the whole filter to each as a scan
 * would: same documents, same order. This holds for {@code find}, {@code count}, {@code distinct},
 * updates, deletes, {@code findAndModify}, the leading {@code $match} of an aggregation and the
 * lookups of {@code $graphLookup}. In memory, an index also serves a string range ({@code $gt},
 * {@code $gte}, {@code $lt}, {@code $lte}) on its first key, or on the key after a prefix of keys
 * with equalities ({@code {tree: "t", path: {$gte: ",a,", $lt: ",a-"}}} on {@code {tree: 1, path:
 * 1, rank: 1}}, a scoped materialized path's subtree), as MongoDB's index bounds do. An {@code
 * $or} whose every clause an index (or the {@code _id} index) serves, at the top level or inside
 * {@code $and}s ({@code {$and: [{$or: [{_id: k}, {ancestors: k}]}, ...]}}), reads the union of
 * their documents. Every other query scans the collection as before: an equality on null (which
 * matches a missing field), on a document or a boolean; a regular expression; a dotted path; an
 * {@code $or} with a clause no index serves; a key that is not the index's first (nor after
 * equalities); and, on a collection of more than 1 000 documents, a query that the best index
 * narrows to no fewer than half of them. The indexes live in memory; with a data directory the file
 * keeps their descriptions and each start rebuilds them from the documents (a pass over the
 * collection). Sort, skip and limit still sort the matching documents in memory.
 *
 * <p>Likewise, an {@code _id} equality beside other conditions ({@code {_id: k, owner: t}}, as
 * the lock protocol's fenced writes filter, or inside a top-level {@code $and}), which
 * mongo-java-server itself scans for, is found by the {@code _id} index when {@code k} is a
 * string, an ObjectId or a document of those.
 *
 * <h2>What it is not</h2>
 *
 * <p>It answers as MongoDB 5.0 but has no sessions, transactions or {@code explain}, no pipeline
 * updates, and a {@code $graphLookup} that ignores {@code startWith}; it goes on with the
 * statements of an ordered update command after one failed, where MongoDB stops (Arbor's tests
 * switch MongoDB's behaviour on through {@code dev.arbor.embedded.internal.OrderedBulkWrites},
 * not API). Queries that no index
 * serves (see above) scan the collection, so latencies measured on it still count scans; run
 * against a real server for figures that mean something.
 *
 * <h2>Logging</h2>
 *
 * <p>The server and the driver log through SLF4J; this module ships no SLF4J binding. Without
 * one, SLF4J prints a warning once and discards the messages; add {@code org.slf4j:slf4j-nop}
 * (discard quietly) or the binding of your logging framework (route them) to your test
 * dependencies.
 *
 * <p>Thread-safe: the client may be shared; a checkpoint waits for the commands in flight and
 * saves between two commands; {@link #close()} must not run while another thread is using the
 * server.
 */
public final class EmbeddedMongo implements AutoCloseable {
  /** The file, inside the data directory, that holds the data. */
  public static final String DATA_FILE = "arbor.mv";

  static {
    DataDirectories.install(new DataDirectories.Control() {
      @Override
      public void checkpoint(EmbeddedMongo mongo) {
        mongo.checkpoint();
      }

      @Override
      public void abandon(EmbeddedMongo mongo) {
        mongo.abandon();
      }
    });
    OrderedBulkWrites.install((mongo, on) -> mongo.orderedWrites().stopAtFirstError = on);
  }

  private final MongoServer server;
  private final MongoBackend backend;
  private final @Nullable DataFileSaver saver; // null in memory
  private final @Nullable MVStore store; // null in memory
  private final @Nullable Path dataDir;
  private final String uri;
  private @Nullable MongoClient client;
  private boolean closed;

  private EmbeddedMongo(MongoBackend backend, @Nullable DataFileSaver saver,
      @Nullable MVStore store, @Nullable Path dataDir) {
    this.saver = saver;
    this.store = store;
    this.dataDir = dataDir;
    this.backend = backend;
    this.server = new MongoServer(backend);
    InetSocketAddress address;
    try {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      address = server.getLocalAddress();
    } catch (RuntimeException e) {
      server.shutdownNow();
      throw e;
    }
    this.uri = "mongodb://" + address.getHostString() + ":" + address.getPort();
  }

  /**
   * Starts a server that keeps its data in memory, gone at {@link #close()}.
   *
   * @throws IllegalStateException naming the assumption, if the mongo-java-server on the class
   *     path is not the one whose internals this module relies on
   */
  public static EmbeddedMongo start() {
    return new EmbeddedMongo(MemoryServerAdapter.create(), null, null, null);
  }

  /**
   * Starts a server that keeps its data in {@code dataDir}/{@value #DATA_FILE}, creating the
   * directory if needed, and finds there what an earlier server saved (see the class
   * documentation for when changes are saved).
   *
   * @throws UncheckedIOException if the directory cannot be created
   * @throws IllegalStateException if the file cannot be opened: in use by another process, or
   *     not an MVStore file; the message names the file. Also, naming the assumption, if the
   *     mongo-java-server on the class path is not the one whose internals this module relies on
   */
  public static EmbeddedMongo start(Path dataDir) {
    return start(dataDir, DataFileSaver.AUTOSAVE_BYTES);
  }

  /** {@link #start(Path)}, saving between two commands past {@code autosaveBytes} unsaved. */
  static EmbeddedMongo start(Path dataDir, long autosaveBytes) {
    requireNonNull(dataDir, "dataDir");
    H2ServerAdapter.checkAssumptions(); // before the file is opened
    try {
      Files.createDirectories(dataDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the data directory " + dataDir + ": "
          + whyNotCreated(dataDir, e), e);
    }
    Path file = dataDir.resolve(DATA_FILE);
    MVStore store;
    try {
      // No background commit: it could save a write half-done. Saved between commands only.
      store = new MVStore.Builder().fileName(file.toString()).autoCommitDisabled()
          .autoCommitBufferSize(0).open();
      // The space of old pages is reused from the next save on, instead of after 45 s: a load
      // saved as it goes rewrites its pages every few seconds, and would leave a file several
      // times its data. Safe here: every read of a map ends within one command, before a save
      // (the server's cursors keep the version they read, see H2ServerAdapter), and each save
      // is synced to disk before the next.
      store.setRetentionTime(0);
    } catch (MVStoreException e) {
      throw new IllegalStateException("cannot open " + file + ": " + (e.getErrorCode()
          == DataUtils.ERROR_FILE_LOCKED ? "it is in use by another process"
          : firstLine(e.getMessage())), e);
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot open " + file + ": " + firstLine(e.getMessage()),
          e);
    }
    try {
      H2ServerAdapter backend = H2ServerAdapter.create(store, autosaveBytes);
      return new EmbeddedMongo(backend, backend.saver(), store, dataDir);
    } catch (RuntimeException e) {
      store.closeImmediately();
      throw new IllegalStateException("cannot open " + file + ": " + firstLine(e.getMessage()),
          e);
    }
  }

  /** The connection string of the server: {@code mongodb://127.0.0.1:<port>}. */
  public String uri() {
    return uri;
  }

  /**
   * A client of this server, created on first call and closed by {@link #close()}: the driver's
   * defaults, except that a server that does not answer is reported after 10 seconds instead of
   * 30. For other settings create a client of your own from {@link #uri()}.
   */
  public synchronized MongoClient client() {
    if (closed) {
      throw new IllegalStateException("the embedded server is closed");
    }
    if (client == null) {
      client = MongoClients.create(MongoClientSettings.builder()
          .applyConnectionString(new ConnectionString(uri))
          .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
          .build());
    }
    return client;
  }

  /** The data file's store, or null in memory; for the tests. */
  @Nullable MVStore store() {
    return store;
  }

  /** The server's backend, for the tests that look at its indexes. */
  MongoBackend backend() {
    return backend;
  }

  /** The switch of MongoDB's ordered writes ({@link OrderedBulkWrites}). */
  private OrderedWrites orderedWrites() {
    return backend instanceof H2ServerAdapter h2 ? h2.ordered
        : ((MemoryServerAdapter) backend).ordered;
  }

  /** The data directory, or empty for a server in memory. */
  public Optional<Path> dataDir() {
    return Optional.ofNullable(dataDir);
  }

  /** {@link DataDirectories#checkpoint}. */
  synchronized void checkpoint() {
    if (closed) {
      throw new IllegalStateException("the embedded server is closed");
    }
    if (saver != null) {
      saver.save();
    }
  }

  /** {@link DataDirectories#abandon}. */
  synchronized void abandon() {
    if (closed) {
      return;
    }
    closed = true;
    closeClient();
    if (store != null) {
      store.closeImmediately(); // before the server closes the store, which would save
    }
    server.shutdownNow();
  }

  /**
   * Stops the server, saving every change to the data file first if there is one. Does nothing if
   * already closed.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeClient();
    server.shutdown(); // waits for the connections to close, then commits and closes the file
  }

  private void closeClient() {
    if (client != null) {
      client.close();
      client = null;
    }
  }

  @Override
  public String toString() {
    return "EmbeddedMongo[" + uri + (dataDir == null ? ", in memory" : ", " + dataDir) + "]";
  }

  /**
   * Why {@code dataDir} could not be created, in words: a file in its place or in that of one of
   * its parents, permission denied, or the file system's reason; never the exception's class.
   */
  private static String whyNotCreated(Path dataDir, IOException e) {
    for (Path p = dataDir; p != null; p = p.getParent()) {
      if (Files.exists(p) && !Files.isDirectory(p)) {
        return (p.equals(dataDir) ? "it" : p.toString()) + " exists and is not a directory";
      }
    }
    if (e instanceof AccessDeniedException denied) {
      return "permission denied" + (denied.getFile() == null ? "" : " on " + denied.getFile());
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return (f.getFile() == null ? "" : f.getFile() + ": ") + f.getReason();
    }
    return e.getMessage() != null ? firstLine(e.getMessage()) : "an I/O error";
  }

  private static String firstLine(@Nullable String s) {
    if (s == null) {
      return "";
    }
    int newline = s.indexOf('\n');
    return (newline < 0 ? s : s.substring(0, newline)).trim();
  }
}
