package dev.arbor.cli;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandSucceededEvent;
import dev.arbor.core.TreeStore;
import dev.arbor.embedded.EmbeddedMongo;
import dev.arbor.embedded.internal.DataDirectories;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * A connection to the MongoDB server a command works on: a server named by {@code --uri}, or an
 * {@link EmbeddedMongo} started in this process, kept in a file under {@code --data-dir} or in
 * memory (gone when the process exits).
 *
 * <p>With {@code --data-dir}, what a command writes reaches the directory only when the command
 * calls {@link #save} at its successful end, in one atomic step: a command that fails, or is
 * killed at any moment, leaves the directory as it was.
 */
final class Connection implements AutoCloseable {
  /** The file the embedded server keeps its data in, inside {@code --data-dir}. */
  static final String DATA_FILE = EmbeddedMongo.DATA_FILE;
  static final String DEFAULT_DATABASE = "arbor";
  static final int TIMEOUT_SECONDS = 10;
  /**
   * Node documents, whatever their id type: Arbor's own documents (lock, journal, fences) are
   * the only ones whose {@code _id} is a document.
   */
  private static final Bson NODES = Filters.not(Filters.type("_id", BsonType.DOCUMENT));

  private final String description;
  private final String uriDatabase;
  private final EmbeddedMongo server; // null for --uri
  private final MongoClient client;
  private final MongoClientSettings settings;
  private final Counter counter;

  private Connection(String description, String uriDatabase, EmbeddedMongo server,
      ConnectionString cs) {
    this.description = description;
    this.uriDatabase = uriDatabase;
    this.server = server;
    this.counter = new Counter();
    this.settings = MongoClientSettings.builder()
        .applyConnectionString(cs)
        .applyToClusterSettings(b -> b.serverSelectionTimeout(timeoutMillis(cs),
            TimeUnit.MILLISECONDS))
        .build();
    this.client = MongoClients.create(MongoClientSettings.builder(settings)
        .addCommandListener(counter)
        .build());
  }

  /** The settings of this connection's client (its URI and timeout), for clients of one's own. */
  MongoClientSettings settings() {
    return settings;
  }

  /** Counts the documents the server reports inserted and returns in cursor batches. */
  private static final class Counter implements CommandListener {
    final AtomicLong inserted = new AtomicLong();
    final AtomicLong returned = new AtomicLong();

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
      BsonDocument reply = event.getResponse();
      if (event.getCommandName().equals("insert") && reply.isNumber("n")) {
        inserted.addAndGet(reply.getNumber("n").longValue());
      }
      if (reply.isDocument("cursor")) {
        BsonDocument cursor = reply.getDocument("cursor");
        for (String batch : List.of("firstBatch", "nextBatch")) {
          if (cursor.isArray(batch)) {
            returned.addAndGet(cursor.getArray(batch).size());
          }
        }
      }
    }
  }

  /** Documents the server has reported inserted so far, for progress. */
  long documentsInserted() {
    return counter.inserted.get();
  }

  /** Documents the server has returned in cursor batches so far, for progress. */
  long documentsReturned() {
    return counter.returned.get();
  }

  /**
   * Connects to {@code uri} if given, else starts an embedded server on {@code dataDir} if given,
   * else an embedded in-memory server, and checks that the server answers.
   *
   * @param spec the command, for a malformed URI (a bad command line)
   * @param uriOption the option that gave the URI, for messages
   */
  static Connection open(CommandSpec spec, String uriOption, String uri, Path dataDir) {
    if (uri != null) {
      ConnectionString cs;
      try {
        cs = new ConnectionString(uri);
      } catch (IllegalArgumentException e) {
        // The URI is not repeated: it may hold a password.
        throw new ParameterException(spec.commandLine(), "invalid " + uriOption + ": "
            + firstLine(e.getMessage()));
      }
      Connection c = new Connection(String.join(",", cs.getHosts()), cs.getDatabase(), null, cs);
      c.ping(cs);
      return c;
    }
    EmbeddedMongo server;
    try {
      server = dataDir == null ? EmbeddedMongo.start() : EmbeddedMongo.start(dataDir);
    } catch (IllegalStateException | UncheckedIOException e) {
      throw new CliException("--data-dir " + dataDir + ": " + e.getMessage(), e);
    }
    return new Connection(dataDir == null ? "temporary in-memory server"
        : "embedded server, data in " + dataDir, null, server,
        new ConnectionString(server.uri()));
  }

  /** The server selection timeout: the URI's {@code serverSelectionTimeoutMS}, else 10 s. */
  static long timeoutMillis(ConnectionString cs) {
    Integer given = cs.getServerSelectionTimeout();
    return given != null ? given : TIMEOUT_SECONDS * 1000L;
  }

  private void ping(ConnectionString cs) {
    try {
      client.getDatabase("admin").runCommand(new Document("ping", 1));
    } catch (RuntimeException e) {
      client.close();
      throw new CliException(Errors.unreachable(description, timeoutMillis(cs), e), e);
    }
  }

  /** {@code --db} if given, else the database of the URI, else {@value #DEFAULT_DATABASE}. */
  MongoDatabase database(String db) {
    String name = db != null ? db : uriDatabase != null ? uriDatabase : DEFAULT_DATABASE;
    String problem = MongoNames.databaseProblem(name);
    if (problem != null) { // from the URI: --db is checked with the command line
      throw new CliException("invalid database name '" + name + "': " + problem);
    }
    return client.getDatabase(name);
  }

  /** Whether the database holds a collection of this name (possibly empty). */
  static boolean exists(MongoDatabase database, String collection) {
    // Lists all names: mongo-java-server ignores a filter on listCollections.
    for (String name : database.listCollectionNames()) {
      if (name.equals(collection)) {
        return true;
      }
    }
    return false;
  }

  /** Fails unless the database holds the collection. */
  void requireCollection(MongoDatabase database, String collection) {
    if (!exists(database, collection)) {
      throw new CliException("collection " + database.getName() + "." + collection
          + " does not exist" + (temporary() ? " (the temporary in-memory server starts empty: give"
              + " --uri or --data-dir)" : ""));
    }
  }

  /**
   * Whether the collection holds at least one node: a document with a string {@code _id} (the
   * stores keep their lock and journal documents in the collection under other {@code _id}s).
   */
  static boolean hasNodes(MongoCollection<Document> collection) {
    return collection.find(NODES).projection(new Document("_id", 1)).limit(1).first() != null;
  }

  /** The number of nodes in the collection (documents whose {@code _id} is not a document). */
  static long nodes(MongoCollection<Document> collection) {
    return collection.countDocuments(NODES);
  }

  /**
   * A store of {@code pattern} over {@code collection}, making changes in transactions where the
   * server runs them (replica sets) and with the stores' lock and journal elsewhere.
   */
  TreeStore open(TreePattern pattern, MongoCollection<Document> collection) {
    return pattern.open(collection, TreeOptions.defaults().withTransactions(client));
  }

  /** As {@link #open(TreePattern, MongoCollection)}, with the store options of the command line. */
  TreeStore open(TreePattern pattern, MongoCollection<Document> collection,
      dev.arbor.mongo.TreeOptions options) {
    return pattern.open(collection, options.withTransactions(client));
  }

  /** Where the data lives, for messages. */
  String description() {
    return description;
  }

  /**
   * Whether what the command writes is kept only if it {@link #save}s, or a stop leaves it
   * half-written as on a server: the embedded server with a data directory (which also saves
   * a large change as it goes, between two of its commands).
   */
  boolean savedOnSuccessOnly() {
    return server != null && server.dataDir().isPresent();
  }

  /** Whether the server is an embedded one in this process (with or without a data dir). */
  boolean embedded() {
    return server != null;
  }

  /** The data directory of the embedded server, or null (in memory, or {@code --uri}). */
  Path dataDir() {
    return server == null ? null : server.dataDir().orElse(null);
  }

  /** Whether this is the embedded in-memory server, which keeps nothing after exit. */
  boolean temporary() {
    return server != null && server.dataDir().isEmpty();
  }

  /**
   * Keeps what the command wrote: with {@code --data-dir}, saves it to the directory in one atomic
   * step; elsewhere it is already kept (or, in memory, never is). Call only at a successful end.
   */
  void save(Progress progress) {
    if (savedOnSuccessOnly()) {
      progress.phase("saving " + description);
      DataDirectories.checkpoint(server);
    }
  }

  /** Disconnects; the embedded server stops without saving what {@link #save} did not. */
  @Override
  public void close() {
    client.close();
    if (server != null) {
      DataDirectories.abandon(server);
    }
  }

  static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int newline = s.indexOf('\n');
    return (newline < 0 ? s : s.substring(0, newline)).trim();
  }
}
