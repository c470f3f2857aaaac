package dev.arbor.cli;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import dev.arbor.core.TreeStore;
import dev.arbor.embedded.EmbeddedMongo;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CliException;
import dev.arbor.tools.CommandMeter;
import dev.arbor.tools.ServerConnection;
import java.nio.file.Path;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * A connection to the MongoDB server a command works on ({@link ServerConnection}): a server named
 * by {@code --uri}, or an {@link EmbeddedMongo} started in this process, kept in a file under
 * {@code --data-dir} or in memory (gone when the process exits).
 *
 * <p>With {@code --data-dir}, what a command writes reaches the directory only when the command
 * calls {@link #save} at its successful end, in one atomic step: a command that fails, or is
 * killed at any moment, leaves the directory as it was.
 */
final class Connection implements AutoCloseable {
  /** The file the embedded server keeps its data in, inside {@code --data-dir}. */
  static final String DATA_FILE = EmbeddedMongo.DATA_FILE;
  static final String DEFAULT_DATABASE = "arbor";
  /**
   * Node documents, whatever their id type: Arbor's own documents (lock, journal, fences) are
   * the only ones whose {@code _id} is a document.
   */
  private static final Bson NODES = Filters.not(Filters.type("_id", BsonType.DOCUMENT));
  /** The node documents of trees with a scope: an {@code _id} {@code {s: scope, id: node id}}. */
  private static final Bson SCOPED = Filters.and(Filters.exists("_id.s"),
      Filters.exists("_id.id"));

  private final String description;
  private final ServerConnection server;

  private Connection(String description, ServerConnection server) {
    this.description = description;
    this.server = server;
  }

  /** The settings of this connection's client (its URI and timeout), for clients of one's own. */
  MongoClientSettings settings() {
    return server.settings();
  }

  /** Documents the server has reported inserted so far, for progress. */
  long documentsInserted() {
    return server.meter().documentsInserted();
  }

  /** Documents the server has returned in cursor batches so far, for progress. */
  long documentsReturned() {
    return server.meter().documentsReturned();
  }

  /**
   * Connects to {@code uri} if given, else starts an embedded server on {@code dataDir} if given,
   * else an embedded in-memory server, and checks that the server answers.
   *
   * @param spec the command, for a malformed URI (a bad command line)
   * @param uriOption the option that gave the URI, for messages
   */
  static Connection open(CommandSpec spec, String uriOption, String uri, Path dataDir) {
    ServerConnection server;
    try {
      server = ServerConnection.open(uri, dataDir,
          new CommandMeter(CommandMeter.Tally.DOCUMENTS));
    } catch (ServerConnection.MalformedUri e) {
      throw new ParameterException(spec.commandLine(), "invalid " + uriOption + ": "
          + e.getMessage());
    } catch (ServerConnection.Unusable e) {
      throw new CliException(e.getMessage(), e);
    }
    String description = server.embedded().isEmpty() ? server.hosts()
        : dataDir == null ? "temporary in-memory server" : "embedded server, data in " + dataDir;
    return new Connection(description, server);
  }

  /** {@code --db} if given, else the database of the URI, else {@value #DEFAULT_DATABASE}. */
  MongoDatabase database(String db) {
    String uriDatabase = server.uriDatabase();
    String name = db != null ? db : uriDatabase != null ? uriDatabase : DEFAULT_DATABASE;
    String problem = MongoNames.databaseProblem(name);
    if (problem != null) { // from the URI: --db is checked with the command line
      throw new CliException("invalid database name '" + name + "': " + problem);
    }
    return server.client().getDatabase(name);
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

  /**
   * Fails unless the database holds the collection, and if it holds trees with a scope and no
   * node of a tree without one ({@link #scopedOnly}).
   */
  void requireCollection(MongoDatabase database, String collection) {
    requireCollection(database, collection, null);
  }

  /**
   * As {@link #requireCollection(MongoDatabase, String)}, for the tree of {@code scope} ({@code
   * --scope FIELD=VALUE}) if it is not null: a collection of trees with a scope is then what is
   * expected.
   */
  void requireCollection(MongoDatabase database, String collection, String scope) {
    if (!exists(database, collection)) {
      throw new CliException("collection " + database.getName() + "." + collection
          + " does not exist" + (temporary() ? " (the temporary in-memory server starts empty: give"
              + " --uri or --data-dir)" : ""));
    }
    if (scope == null && scopedOnly(database.getCollection(collection))) {
      throw new CliException("collection " + database.getName() + "." + collection + " holds"
          + " trees with a scope (TreeOptions.withScope: each node's _id is {s: scope, id: node"
          + " id}): name one with --scope FIELD=VALUE");
    }
  }

  /**
   * Whether the collection holds node documents of trees with a scope ({@code
   * TreeOptions.withScope}: an {@code _id} {@code {s: scope, id: node id}}) and no node of a tree
   * without one: the command line, which reads trees without a scope, would take it for empty.
   */
  static boolean scopedOnly(MongoCollection<Document> collection) {
    return !hasNodes(collection) && collection.find(SCOPED).projection(new Document("_id", 1))
        .limit(1).first() != null;
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
   * The number of nodes of {@code tree}, a store of {@code collection}: the collection's nodes,
   * or for the tree of {@code scope} ({@code --scope}) if it is not null, the store's.
   */
  static long nodes(MongoCollection<Document> collection, String scope, TreeStore tree) {
    return scope == null ? nodes(collection) : tree.size();
  }

  /**
   * A store of {@code pattern} over {@code collection}, making changes in transactions where the
   * server runs them (replica sets) and with the stores' lock and journal elsewhere.
   */
  TreeStore open(TreePattern pattern, MongoCollection<Document> collection) {
    return pattern.open(collection, TreeOptions.defaults().withTransactions(server.client()));
  }

  /** As {@link #open(TreePattern, MongoCollection)}, with the store options of the command line. */
  TreeStore open(TreePattern pattern, MongoCollection<Document> collection,
      dev.arbor.mongo.TreeOptions options) {
    return pattern.open(collection, options.withTransactions(server.client()));
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
    return server.dataDir().isPresent();
  }

  /** Whether the server is an embedded one in this process (with or without a data dir). */
  boolean embedded() {
    return server.embedded().isPresent();
  }

  /** The data directory of the embedded server, or null (in memory, or {@code --uri}). */
  Path dataDir() {
    return server.dataDir().orElse(null);
  }

  /** Whether this is the embedded in-memory server, which keeps nothing after exit. */
  boolean temporary() {
    return server.embedded().isPresent() && server.dataDir().isEmpty();
  }

  /**
   * Keeps what the command wrote: with {@code --data-dir}, saves it to the directory in one atomic
   * step; elsewhere it is already kept (or, in memory, never is). Call only at a successful end.
   */
  void save(Progress progress) {
    if (savedOnSuccessOnly()) {
      progress.phase("saving " + description);
      server.checkpoint();
    }
  }

  /** Disconnects; the embedded server stops without saving what {@link #save} did not. */
  @Override
  public void close() {
    server.close();
  }
}
