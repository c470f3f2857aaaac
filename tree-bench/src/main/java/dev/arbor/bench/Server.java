package dev.arbor.bench;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.arbor.tools.CommandMeter;
import dev.arbor.tools.Errors;
import dev.arbor.tools.ServerConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Properties;
import org.bson.Document;

/**
 * The MongoDB server the benchmark runs against ({@link ServerConnection}), with the benchmark's
 * own client (its commands counted by the connection's {@link CommandMeter} while armed) and a
 * database made for this run, dropped at {@link #close()}.
 *
 * <p>Without a URI it starts mongo-java-server in this process, on a free loopback port, with its
 * in-memory backend. That server's secondary indexes serve only string ranges on their first key,
 * and equalities and {@code $in} on
 * strings, ObjectIds and numbers (every other query not by {@code _id} scans the collection) and it
 * has no {@code explain}: many of its latencies grow with the tree, which is why the counts, not
 * the times, are the headline figures.
 */
final class Server implements AutoCloseable {
  private final ServerConnection connection;
  private final MongoDatabase database;
  private final String description;
  private final String version;
  private final boolean explain;

  private Server(ServerConnection connection, MongoDatabase database, String description,
      String version, boolean explain) {
    this.connection = connection;
    this.database = database;
    this.description = description;
    this.version = version;
    this.explain = explain;
  }

  /**
   * Starts the embedded server ({@code uri} null or blank) or connects to {@code uri}.
   *
   * @throws MalformedUri if the URI is malformed (never repeating it: it may hold a password)
   * @throws IllegalStateException if the server cannot be reached or used, naming the hosts
   *     (never the credentials)
   */
  static Server start(String uri) {
    ServerConnection connection;
    try {
      connection = ServerConnection.open(uri, null, new CommandMeter());
    } catch (ServerConnection.MalformedUri e) {
      throw new MalformedUri("malformed MongoDB URI (--uri or ARBOR_MONGO_URI): "
          + e.getMessage());
    }
    try {
      MongoDatabase database = connection.client().getDatabase("arbor_bench_"
          + Long.toString(System.currentTimeMillis(), 36) + "_" + ProcessHandle.current().pid());
      Document buildInfo = database.runCommand(new Document("buildInfo", 1));
      String version = String.valueOf(buildInfo.get("version"));
      String description = connection.embedded().isPresent()
          ? "embedded mongo-java-server " + versions().getProperty("mongo-java-server", "?")
              + " (answers as MongoDB " + version + ")"
          : "MongoDB " + version + " at " + connection.hosts();
      boolean explain = probeExplain(database);
      return new Server(connection, database, description, version, explain);
    } catch (MongoException e) {
      connection.close();
      throw new IllegalStateException(Errors.unreachable(connection.hosts(),
          connection.timeoutMillis(), e), e);
    }
  }

  /** A URI that cannot be parsed: a bad command line. */
  static final class MalformedUri extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    MalformedUri(String message) {
      super(message);
    }
  }

  private static boolean probeExplain(MongoDatabase database) {
    try {
      database.runCommand(new Document("explain",
          new Document("find", "arbor_explain_probe").append("filter", new Document()))
          .append("verbosity", "executionStats"));
      return true;
    } catch (MongoException e) {
      return false;
    }
  }

  /** Versions of the libraries the benchmark was built with (filtered in by Maven). */
  static Properties versions() {
    Properties p = new Properties();
    try (InputStream in = Server.class.getResourceAsStream("versions.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read versions.properties", e);
    }
    return p;
  }

  /** Whether this is the embedded server. */
  boolean embedded() {
    return connection.embedded().isPresent();
  }

  /** The meter on the benchmark client's commands. */
  CommandMeter meter() {
    return connection.meter();
  }

  /** What the server is, in a few words ("MongoDB 7.0.5 at db1:27017"). */
  String description() {
    return description;
  }

  /** The version the server reports ({@code buildInfo}). */
  String version() {
    return version;
  }

  /** Whether the server answers {@code explain} with execution statistics. */
  boolean explainSupported() {
    return explain;
  }

  /** The benchmark's client (its commands are counted). */
  MongoClient client() {
    return connection.client();
  }

  /** The benchmark's database. */
  MongoDatabase database() {
    return database;
  }

  /** A collection of the benchmark's database. */
  MongoCollection<Document> collection(String name) {
    return database.getCollection(name);
  }

  /**
   * The storage figures of a collection: {@code $collStats} where the server has it, else the
   * {@code collStats} command; index sizes only where the server reports them in bytes.
   *
   * @return the figures, or null if the server answers neither
   */
  Storage storage(MongoCollection<Document> collection) {
    String name = collection.getNamespace().getCollectionName();
    try {
      Document stats = collection.aggregate(List.of(new Document("$collStats",
          new Document("storageStats", new Document())))).first();
      if (stats != null && stats.get("storageStats") instanceof Document s) {
        return Storage.of(s);
      }
    } catch (MongoException e) {
      // fall back to the command
    }
    try {
      return Storage.of(database.runCommand(new Document("collStats", name)));
    } catch (MongoException e) {
      return null;
    }
  }

  /**
   * Storage figures of one collection.
   *
   * @param documents the number of documents
   * @param avgDocBytes the average BSON size of a document
   * @param dataBytes the uncompressed size of all documents
   * @param indexBytes the total size of the indexes, or null where the server does not say
   */
  record Storage(long documents, double avgDocBytes, long dataBytes, Long indexBytes) {
    static Storage of(Document stats) {
      long count = longOf(stats.get("count"));
      long size = longOf(stats.get("size"));
      double avg = stats.get("avgObjSize") instanceof Number n ? n.doubleValue()
          : count == 0 ? 0 : (double) size / count;
      Long index = stats.get("totalIndexSize") instanceof Number n ? n.longValue() : null;
      return new Storage(count, avg, size, index);
    }

    private static long longOf(Object o) {
      return o instanceof Number n ? n.longValue() : 0;
    }
  }

  @Override
  public void close() {
    try {
      database.drop();
    } catch (MongoException e) {
      // best effort: the run's results are already written
    }
    connection.close();
  }
}
