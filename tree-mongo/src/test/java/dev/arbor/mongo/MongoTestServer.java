package dev.arbor.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.arbor.embedded.EmbeddedMongo;
import dev.arbor.embedded.internal.DataDirectories;
import dev.arbor.embedded.internal.OrderedBulkWrites;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.Document;

/**
 * The one MongoDB server of a test JVM (the singleton-container pattern): the server named by the
 * system property {@code arbor.mongo.uri} or the environment variable {@code ARBOR_MONGO_URI} if
 * set, otherwise an embedded mongo-java-server started in-process on a loopback port. Every test
 * gets a fresh collection in a database made for this JVM, dropped when the JVM exits. {@link
 * #ordered()} is a second embedded server, one that stops ordered bulk writes as MongoDB does.
 */
public final class MongoTestServer {
  private static final AtomicInteger COLLECTIONS = new AtomicInteger();
  private static volatile MongoTestServer instance;
  private static volatile MongoTestServer orderedInstance;

  private final String uri;
  private final boolean embedded;
  private final MongoClient client;
  private final MongoDatabase database;

  private MongoTestServer(boolean ordered) {
    String configured = ordered ? null : System.getProperty("arbor.mongo.uri");
    if (!ordered && (configured == null || configured.isBlank())) {
      configured = System.getenv("ARBOR_MONGO_URI");
    }
    EmbeddedMongo server = null;
    if (configured == null || configured.isBlank()) {
      server = EmbeddedMongo.start();
      if (ordered || Boolean.getBoolean("arbor.embedded.ordered")) {
        OrderedBulkWrites.stopAtFirstError(server, true);
      }
      configured = server.uri();
      embedded = true;
    } else {
      embedded = false;
    }
    uri = configured;
    client = MongoClients.create(settings(uri));
    database = client.getDatabase("arbor_test_" + ProcessHandle.current().pid() + "_"
        + Long.toString(System.currentTimeMillis(), 36));
    EmbeddedMongo own = server;
    // One hook, in order. The embedded server lives in memory and goes with the JVM: it is
    // abandoned after the client is closed, without dropping its thousands of collections one by
    // one (two hooks racing, a drop against a server going away, held every test JVM 30 s at
    // its exit until surefire killed it). A server of one's own has the database dropped.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (own == null) {
        try {
          database.drop();
          for (String name : scratch) {
            client.getDatabase(name).drop();
          }
        } catch (RuntimeException ignored) {
          // best effort
        }
      }
      client.close();
      if (own != null) {
        DataDirectories.abandon(own);
      }
    }));
  }

  /** Client settings for a test connection: short timeouts so a wrong URI fails fast. */
  public static MongoClientSettings settings(String uri) {
    return MongoClientSettings.builder()
        .applyConnectionString(new ConnectionString(uri))
        .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
        .build();
  }

  /** The server of this JVM, started on first use. */
  public static MongoTestServer get() {
    MongoTestServer s = instance;
    if (s == null) {
      synchronized (MongoTestServer.class) {
        s = instance;
        if (s == null) {
          s = new MongoTestServer(false);
          instance = s;
        }
      }
    }
    return s;
  }

  /**
   * An embedded server of this JVM that stops an ordered bulk write at its first failed
   * statement, as MongoDB does ({@link OrderedBulkWrites}), started on first use: the tests of
   * the lock protocol's MongoDB path ({@code OrderedExecution}) run on it. (With {@code
   * -Darbor.embedded.ordered=true} the server of {@link #get()} stops so too, and every test
   * runs that path.)
   */
  public static MongoTestServer ordered() {
    MongoTestServer s = orderedInstance;
    if (s == null) {
      synchronized (MongoTestServer.class) {
        s = orderedInstance;
        if (s == null) {
          s = new MongoTestServer(true);
          orderedInstance = s;
        }
      }
    }
    return s;
  }

  /** The connection string of the server. */
  public String uri() {
    return uri;
  }

  /** Whether the server is the embedded mongo-java-server. */
  public boolean embedded() {
    return embedded;
  }

  /** The shared client. */
  public MongoClient client() {
    return client;
  }

  /** The database of this JVM. */
  public MongoDatabase database() {
    return database;
  }

  /** A new, empty collection with a name no other test uses. */
  public MongoCollection<Document> freshCollection() {
    return database.getCollection("tree_" + COLLECTIONS.incrementAndGet());
  }

  /**
   * The scratch collections per database: mongo-java-server keeps the index descriptions of every
   * collection of a database in one collection, which it scans to list, create or drop a
   * collection's indexes; with the thousands of collections of a test JVM in one database, those
   * scans examined 75% of the documents that all the scans of tree-mongo's suite examined.
   */
  private static final int SCRATCH_PER_DATABASE = 50;

  /** The scratch databases used so far, dropped with {@link #database()}. */
  private final java.util.Set<String> scratch =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * A new, empty collection with a name no other test uses, in one of this JVM's scratch
   * databases (a few dozen collections each), for a test that reaches it through the object
   * returned only (its database is not {@link #database()}): the contract and property suites,
   * which make thousands.
   */
  public MongoCollection<Document> scratchCollection() {
    int n = COLLECTIONS.incrementAndGet();
    String name = database.getName() + "_" + n / SCRATCH_PER_DATABASE;
    scratch.add(name);
    return client.getDatabase(name).getCollection("tree_" + n);
  }

  /**
   * A database of its own for a test that looks at every collection of its database (the other
   * tests of the JVM, running side by side, write theirs in {@link #database()}), dropped with it.
   */
  public MongoDatabase databaseOfItsOwn(String purpose) {
    String name = database.getName() + "_" + purpose;
    scratch.add(name);
    return client.getDatabase(name);
  }

  /** A client of its own that tells {@code listener} of every command it sends; close it. */
  public MongoClient recordingClient(com.mongodb.event.CommandListener listener) {
    return com.mongodb.client.MongoClients.create(MongoClientSettings.builder()
        .applyConnectionString(new ConnectionString(uri)).addCommandListener(listener).build());
  }

  /** A new, empty collection with a name no other test uses, reached through {@code client}. */
  public MongoCollection<Document> freshCollection(MongoClient client) {
    return client.getDatabase(database.getName()).getCollection(freshCollection().getNamespace()
        .getCollectionName());
  }
}
