package dev.arbor.cli;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.arbor.core.Node;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeChangedException;
import dev.arbor.core.TreeStore;
import dev.arbor.core.json.TreeJson;
import dev.arbor.core.json.TreeJsonWriter;
import dev.arbor.tools.CliException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;
import org.bson.Document;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code arbor export}: a collection's tree as nested JSON. */
@Command(name = "export", mixinStandardHelpOptions = true,
    description = {
        "Write the tree of a collection as nested JSON, to FILE or to stdout.",
        "The same tree always gives the same bytes. A FILE is written aside and renamed into "
            + "place when complete. Nodes are streamed from the server in preorder: the "
            + "client holds a bounded part of the tree, not all of it (the check before it, "
            + "skipped with --no-check, reads the whole collection)."})
final class ExportCommand extends ArborCommand {
  /** Times a file export starts over when the tree changed while it was read. */
  private static final int CHANGED_ATTEMPTS = 3;

  @Parameters(index = "0", arity = "0..1", paramLabel = "FILE", defaultValue = "-",
      description = "The JSON file to write (replaced if it exists), or - for stdout (default).")
  String file;

  @Mixin
  StoreOptions store;

  @Option(names = "--no-check", negatable = false,
      description = "Skip the structural check of the collection before exporting (it reads the "
          + "collection once more; export refuses a collection with problems).")
  boolean noCheck;

  @Override
  public Integer call() {
    try (Progress progress = progress(); Connection connection = store.connect(progress)) {
      MongoDatabase db = connection.database(store.db);
      if (store.pattern == null) {
        connection.requireCollection(db, store.collection, store.scope);
        store.recognisePattern(db, progress);
      }
      String where = store.where(db);
      Source source = open(db, store.collection, store.pattern, store.treeOptions(),
          store.scope, !noCheck, connection, progress);
      long written;
      if (file.equals("-")) {
        written = write(source, arbor.stdout(), progress);
      } else {
        written = writeFile(source, Path.of(file), progress);
      }
      progress.done("exported " + CheckCommand.nodes(written) + " from " + where + " to "
          + (file.equals("-") ? "stdout" : file));
      return Arbor.EXIT_OK;
    }
  }

  /** A collection to export: its store, its number of node documents and its name for messages. */
  record Source(TreeStore store, long nodes, String where) {}

  /**
   * Opens a collection to read its whole tree (the tree of {@code scope}, {@code FIELD=VALUE},
   * if it is not null; {@code options} carry it too), refusing a missing collection and one with
   * structural problems (when {@code check}: a wrong {@code --pattern} or a damaged collection).
   */
  static Source open(MongoDatabase db, String collection, dev.arbor.mongo.TreePattern pattern,
      dev.arbor.mongo.TreeOptions options, String scope, boolean check, Connection connection,
      Progress progress) {
    String where = Loads.where(db, collection, pattern, scope);
    connection.requireCollection(db, collection, scope);
    Patterns.require(db, collection, pattern, options);
    MongoCollection<Document> c = db.getCollection(collection);
    TreeStore source = connection.open(pattern, c, options);
    Loads.settle(connection, c, pattern, options); // counts the tree, not a stopped load
    long nodes = Connection.nodes(c, scope, source);
    if (check) {
      progress.phase("checking " + where, reading(connection, nodes), nodes);
      List<Problem> problems = source.check();
      if (!problems.isEmpty()) {
        Problem first = problems.get(0);
        throw new CliException("collection " + where + " has " + problems.size()
            + (problems.size() == 1 ? " problem" : " problems") + ", the first: node "
            + CheckCommand.quote(first.nodeId()) + ": " + first.message()
            + " (a wrong --pattern, or damage: 'arbor check' lists them all, 'arbor repair' fixes"
            + " what it can)");
      }
    }
    return new Source(source, nodes, where);
  }

  /** Refuses a collection of which only {@code read} nodes formed the tree. */
  private static void requireAll(Source source, long read) {
    if (source.nodes() != read) {
      throw notAll(source, read);
    }
  }

  /** The error for a collection of which only {@code read} nodes formed the tree. */
  static CliException notAll(Source source, long read) {
    return new CliException("collection " + source.where() + " holds " + source.nodes()
        + " nodes but only " + read + " form a tree in this pattern: is --pattern right?"
        + " 'arbor check' lists the problems");
  }

  /** The documents read from now on, at most {@code nodes}: the progress of a scan. */
  static java.util.function.LongSupplier reading(Connection connection, long nodes) {
    long before = connection.documentsReturned();
    return () -> Math.min(nodes, connection.documentsReturned() - before);
  }

  /**
   * Streams the tree in preorder into the JSON writer: the client holds a bounded part of the
   * tree (see {@link TreeStore#entries()}), never all of it.
   *
   * @return the number of nodes written
   */
  private static long write(Source source, OutputStream out, Progress progress) {
    TreeJsonWriter writer = TreeJson.writer(out);
    progress.phase("exporting " + source.where(), writer::count, source.nodes());
    try (Stream<Node> entries = source.store().entries()) {
      entries.forEach(writer::write);
    }
    requireAll(source, writer.count());
    writer.finish();
    return writer.count();
  }

  /**
   * Writes the file beside the target under a name of its own and moves it into place when
   * complete; every failure names the target, never the file written beside it.
   */
  private static long writeFile(Source source, Path target, Progress progress) {
    Path absolute = target.toAbsolutePath();
    Path directory = absolute.getParent();
    if (Files.isDirectory(absolute)) {
      throw new CliException("cannot write " + target + ": it is a directory");
    }
    if (!Files.isDirectory(directory)) {
      throw new CliException("cannot write " + target + ": " + directory
          + (Files.exists(directory) ? " is not a directory" : " does not exist"));
    }
    Path aside = null;
    try {
      aside = Files.createTempFile(directory, ".arbor-export-", ".tmp");
      long written = 0;
      for (int attempt = 1; ; attempt++) {
        try (OutputStream out = Files.newOutputStream(aside)) {
          written = write(source, out, progress);
          break;
        } catch (TreeChangedException e) {
          if (attempt == CHANGED_ATTEMPTS) {
            throw e; // the file beside the target is deleted below
          }
        }
      }
      try {
        Files.move(aside, absolute, StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(aside, absolute, StandardCopyOption.REPLACE_EXISTING);
      }
      return written;
    } catch (IOException | UncheckedIOException e) {
      IOException cause = e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
      String reason;
      if (cause instanceof AccessDeniedException) {
        reason = "permission denied";
      } else if (cause instanceof FileSystemException f) {
        reason = f.getReason() != null ? f.getReason() : "cannot create or move a file there";
      } else {
        reason = cause.getMessage() != null ? cause.getMessage() : "I/O error";
      }
      throw new CliException("cannot write " + target + ": " + reason, e);
    } finally {
      if (aside != null) {
        try {
          Files.deleteIfExists(aside);
        } catch (IOException ignored) {
          // nothing more to do: it was written beside the target, which is intact
        }
      }
    }
  }
}
