package dev.arbor.cli;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreePattern;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * A connection to the MongoDB server a command works on: a server named by {@code --uri}, or an
 * embedded mongo-java-server started in this process, kept in a file under {@code --data-dir} (the
 * H2 MVStore backend) or in memory (gone when the process exits).
 */
final class Connection implements AutoCloseable {
  /** The file the embedded server keeps its data in, inside {@code --data-dir}. */
  static final String DATA_FILE = "arbor.mv";
  static final String DEFAULT_DATABASE = "arbor";
  static final int TIMEOUT_SECONDS = 10;
  private static final Bson NODES = Filters.type("_id", BsonType.STRING);

  private final String description;
  private final String uriDatabase;
  private final MongoServer server; // null for --uri
  private final MongoClient client;
  private final boolean temporary;
  private final boolean renamesPersist;

  private Connection(String description, String uriDatabase, MongoServer server,
      MongoClient client, boolean temporary, boolean renamesPersist) {
    this.description = description;
    this.uriDatabase = uriDatabase;
    this.server = server;
    this.client = client;
    this.temporary = temporary;
    this.renamesPersist = renamesPersist;
  }

  /**
   * Connects to {@code uri} if given, else starts an embedded server on {@code dataDir} if given,
   * else an embedded in-memory server, and checks that the server answers.
   */
  static Connection open(String uri, Path dataDir) {
    if (uri != null) {
      ConnectionString cs;
      try {
        cs = new ConnectionString(uri);
      } catch (IllegalArgumentException e) {
        throw new CliException("invalid --uri '" + uri + "': " + e.getMessage(), e);
      }
      MongoClient client = MongoClients.create(settings(cs));
      Connection c = new Connection(String.join(",", cs.getHosts()), cs.getDatabase(), null,
          client, false, true);
      c.ping();
      return c;
    }
    MongoBackend backend;
    String description;
    if (dataDir != null) {
      try {
        Files.createDirectories(dataDir);
      } catch (IOException e) {
        throw new CliException("cannot create data directory '" + dataDir + "': " + e, e);
      }
      Path file = dataDir.resolve(DATA_FILE);
      try {
        backend = new H2Backend(file.toString());
      } catch (RuntimeException e) {
        throw new CliException("cannot open data directory '" + dataDir + "' (is another arbor"
            + " using it?): " + firstLine(e.getMessage()), e);
      }
      description = "embedded server, data in " + dataDir;
    } else {
      backend = new MemoryBackend();
      description = "temporary in-memory server";
    }
    MongoServer server = new MongoServer(backend);
    InetSocketAddress address;
    try {
      address = server.bind(); // a free port on the loopback interface
    } catch (RuntimeException e) {
      server.shutdownNow();
      throw e;
    }
    ConnectionString cs = new ConnectionString(
        "mongodb://" + address.getHostString() + ":" + address.getPort());
    return new Connection(description, null, server, MongoClients.create(settings(cs)),
        dataDir == null, dataDir == null);
  }

  private static MongoClientSettings settings(ConnectionString cs) {
    return MongoClientSettings.builder()
        .applyConnectionString(cs)
        .applyToClusterSettings(b -> b.serverSelectionTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS))
        .build();
  }

  private void ping() {
    try {
      client.getDatabase("admin").runCommand(new Document("ping", 1));
    } catch (com.mongodb.MongoTimeoutException e) {
      client.close();
      throw new CliException("cannot reach MongoDB at " + description + ": no server answered"
          + " within " + TIMEOUT_SECONDS + " s", e);
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  /** {@code --db} if given, else the database of the URI, else {@value #DEFAULT_DATABASE}. */
  MongoDatabase database(String db) {
    String name = db != null ? db : uriDatabase != null ? uriDatabase : DEFAULT_DATABASE;
    try {
      return client.getDatabase(name);
    } catch (IllegalArgumentException e) {
      throw new CliException("invalid database name '" + name + "': " + e.getMessage(), e);
    }
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
          + " does not exist" + (temporary ? " (the temporary in-memory server starts empty: give"
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

  /** The number of nodes in the collection (documents with a string {@code _id}). */
  static long nodes(MongoCollection<Document> collection) {
    return collection.countDocuments(NODES);
  }

  /**
   * A store of {@code pattern} over {@code collection}, making changes in transactions where the
   * server runs them (replica sets) and with the stores' lock and journal elsewhere.
   */
  TreeStore open(TreePattern pattern, MongoCollection<Document> collection) {
    return pattern.open(client, collection);
  }

  /** Where the data lives, for messages. */
  String description() {
    return description;
  }

  /**
   * Whether a renamed collection keeps its documents. Not so with the H2 backend of
   * mongo-java-server 1.47: after a restart, a collection renamed (or written by {@code $out}) is
   * empty, so {@code --data-dir} replaces collections without renaming.
   */
  boolean renamesPersist() {
    return renamesPersist;
  }

  /** Whether this is the embedded in-memory server, which keeps nothing after exit. */
  boolean temporary() {
    return temporary;
  }

  @Override
  public void close() {
    client.close();
    if (server != null) {
      server.shutdown(); // closes the backend: the H2 store commits and closes its file
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
