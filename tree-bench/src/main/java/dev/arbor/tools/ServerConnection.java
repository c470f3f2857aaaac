package dev.arbor.tools;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.arbor.embedded.EmbeddedMongo;
import dev.arbor.embedded.internal.DataDirectories;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * The one way the command line and its benchmarks reach a MongoDB server: the server a URI
 * names, or an {@link EmbeddedMongo} started in this process, kept in a data directory or in
 * memory (gone when the process exits). Its client reports a server that does not answer after
 * the URI's {@code serverSelectionTimeoutMS}, else {@value #TIMEOUT_SECONDS} s, and every command
 * it sends goes past the connection's {@link CommandMeter}.
 *
 * <pre>{@code
 * --uri given       ->  client of that server, pinged once
 * --data-dir given  ->  EmbeddedMongo.start(dir), saved only at checkpoint()
 * neither           ->  EmbeddedMongo.start(), in memory
 * }</pre>
 *
 * <p>Closing disconnects and stops an embedded server without saving what {@link #checkpoint}
 * did not. Not thread-safe to open or close; the client is.
 */
public final class ServerConnection implements AutoCloseable {
  /** The server selection timeout when the URI gives none, in seconds. */
  public static final int TIMEOUT_SECONDS = 10;

  private final EmbeddedMongo embedded; // null for a URI
  private final String uri;
  private final String hosts;
  private final String database;
  private final long timeoutMillis;
  private final MongoClientSettings settings;
  private final CommandMeter meter;
  private final MongoClient client;

  private ServerConnection(EmbeddedMongo embedded, String uri, ConnectionString cs,
      CommandMeter meter) {
    this.embedded = embedded;
    this.uri = uri;
    this.hosts = String.join(",", cs.getHosts());
    this.database = cs.getDatabase();
    Integer given = cs.getServerSelectionTimeout();
    this.timeoutMillis = given != null ? given : TIMEOUT_SECONDS * 1000L;
    this.settings = MongoClientSettings.builder()
        .applyConnectionString(cs)
        .applyToClusterSettings(b -> b.serverSelectionTimeout(timeoutMillis,
            TimeUnit.MILLISECONDS))
        .build();
    this.meter = meter;
    this.client = MongoClients.create(MongoClientSettings.builder(settings)
        .addCommandListener(meter)
        .build());
  }

  /** Whether {@link #open} starts an embedded server for {@code uri}: none given, or blank. */
  public static boolean embedded(String uri) {
    return uri == null || uri.isBlank();
  }

  /**
   * Connects to {@code uri} if given (not null or blank) and checks that the server answers;
   * else starts an embedded server on {@code dataDir} if given, else in memory.
   *
   * @param meter the meter the client's commands go past
   * @throws MalformedUri if the URI cannot be parsed (a bad command line)
   * @throws Unusable if the server does not answer or refuses the first command, or the data
   *     directory cannot be used
   */
  public static ServerConnection open(String uri, Path dataDir, CommandMeter meter) {
    if (!embedded(uri)) {
      ConnectionString cs;
      try {
        cs = new ConnectionString(uri);
      } catch (IllegalArgumentException e) {
        throw new MalformedUri(Text.firstLine(e.getMessage()));
      }
      ServerConnection c = new ServerConnection(null, uri, cs, meter);
      try {
        c.client.getDatabase("admin").runCommand(new Document("ping", 1));
      } catch (RuntimeException e) {
        c.client.close();
        throw new Unusable(Errors.unreachable(c.hosts, c.timeoutMillis, e), e);
      }
      return c;
    }
    EmbeddedMongo server;
    try {
      server = dataDir == null ? EmbeddedMongo.start() : EmbeddedMongo.start(dataDir);
    } catch (IllegalStateException | UncheckedIOException e) {
      throw new Unusable("--data-dir " + dataDir + ": " + e.getMessage(), e);
    }
    return new ServerConnection(server, server.uri(), new ConnectionString(server.uri()), meter);
  }

  /** A URI that cannot be parsed; the message never repeats it (it may hold a password). */
  public static final class MalformedUri extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    MalformedUri(String message) {
      super(message);
    }
  }

  /** A server or data directory that cannot be used; the message is one line for the user. */
  public static final class Unusable extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    Unusable(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** The client; its commands go past {@link #meter()}. */
  public MongoClient client() {
    return client;
  }

  /** The meter on the client's commands. */
  public CommandMeter meter() {
    return meter;
  }

  /**
   * The settings of the client (its URI and timeout) without the meter, for clients of one's own.
   */
  public MongoClientSettings settings() {
    return settings;
  }

  /**
   * The URI of the server: the one given, or the embedded server's. Another process reaches the
   * same server with it (while this one runs).
   */
  public String uri() {
    return uri;
  }

  /** The hosts of the URI, for messages (never its credentials). */
  public String hosts() {
    return hosts;
  }

  /** The database the URI names, or null. */
  public String uriDatabase() {
    return database;
  }

  /** The server selection timeout in milliseconds. */
  public long timeoutMillis() {
    return timeoutMillis;
  }

  /** The embedded server, if this process runs it. */
  public Optional<EmbeddedMongo> embedded() {
    return Optional.ofNullable(embedded);
  }

  /** The data directory of the embedded server, if it keeps one. */
  public Optional<Path> dataDir() {
    return embedded == null ? Optional.empty() : embedded.dataDir();
  }

  /**
   * Saves what the embedded server holds to its data directory in one atomic step, if it has one.
   */
  public void checkpoint() {
    if (embedded != null && embedded.dataDir().isPresent()) {
      DataDirectories.checkpoint(embedded);
    }
  }

  /** Disconnects; an embedded server stops without saving what {@link #checkpoint} did not. */
  @Override
  public void close() {
    client.close();
    if (embedded != null) {
      DataDirectories.abandon(embedded);
    }
  }
}
