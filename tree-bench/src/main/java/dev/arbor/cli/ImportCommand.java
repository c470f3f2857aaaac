package dev.arbor.cli;

import com.mongodb.client.MongoDatabase;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.internal.JsonReaders;
import dev.arbor.core.json.TreeJson;
import dev.arbor.core.json.TreeJsonException;
import dev.arbor.core.json.TreeJsonReader;
import dev.arbor.mongo.NodeIdType;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.TreeSizes;
import dev.arbor.tools.CliException;
import dev.arbor.tools.Errors;
import dev.arbor.tools.Text;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code arbor import}: a nested-JSON file into a collection, through the bulk loader, or grafted
 * into the tree the collection holds.
 */
@Command(name = "import", mixinStandardHelpOptions = true,
    description = {
        "Read a tree from a nested-JSON file into a collection, in the given pattern.",
        "The file (stdin is first copied to a temporary file) is read through and checked "
            + "before anything is written (its JSON, its names, each document's size and the "
            + "documents' total against what the target holds: see --accept-size), then read "
            + "again into the store node by node, in bounded memory. A collection that holds "
            + "documents is refused unless --replace is given (then the tree is loaded beside it "
            + "and renamed over it in one step) or --graft / --under adds the file's trees to "
            + "the tree it holds, all-or-nothing."})
final class ImportCommand extends ArborCommand {
  @Parameters(index = "0", paramLabel = "FILE", description = "The JSON file, or - for stdin.")
  String file;

  @Mixin
  StoreOptions store;

  @Option(names = "--replace", description = "Replace the collection if it holds documents.")
  boolean replace;

  @Option(names = "--graft", description = "Add the file's trees to the collection's tree as "
      + "its last roots; its nodes stay. All-or-nothing.")
  boolean graft;

  @Option(names = "--under", paramLabel = "ID", description = "Add the file's trees under node "
      + "ID of the collection's tree, as its last children; its nodes stay. All-or-nothing.")
  String under;

  @Option(names = "--accept-size", description = "Load even a tree whose documents total more "
      + "than the target is taken to hold. The first pass over the file sums the documents' "
      + "sizes in the pattern (in encoded BSON) and otherwise refuses, naming the total: past "
      + "1 GB on a server (--uri), past a quarter of the free disk of a --data-dir, past what "
      + "the heap holds for the in-memory server.")
  boolean acceptSize;

  @Override
  public Integer call() {
    boolean grafting = graft || under != null;
    if (grafting && replace) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(),
          "--replace and " + (graft ? "--graft" : "--under") + " exclude each other: give one");
    }
    if (graft && under != null) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(),
          "--graft adds roots and --under adds children of a node: give one");
    }
    if (!grafting) {
      store.pattern("the pattern to store the tree in");
    }
    try (Progress progress = progress(); Connection connection = store.connect(progress)) {
      MongoDatabase db = connection.database(store.db);
      if (grafting && store.pattern == null) {
        connection.requireCollection(db, store.collection, store.scope);
        store.recognisePattern(db, progress);
      }
      String where = store.where(db);
      if (grafting) {
        Patterns.require(db, store.collection, store.pattern, store.treeOptions()); // first
      } else {
        Loads.checkTarget(connection, db, store.collection, store.pattern, store.treeOptions(),
            store.scope, replace); // fail before reading
      }
      long n = stream(progress, connection, db, grafting);
      connection.save(progress);
      progress.done((grafting ? "grafted " : "imported ") + CheckCommand.nodes(n) + " from "
          + file + " into " + where + (under != null ? " under '" + under + "'"
              : graft ? " as new roots" : "")
          + (connection.temporary() ? " (temporary: discarded now)" : ""));
      return Arbor.EXIT_OK;
    }
  }

  /**
   * Reads the file node by node into the store: the file is first read once through and checked
   * (JSON, names, and every document's size in the pattern, all refused before anything is
   * written), then read again into the store's load or graft, which writes batches
   * as they come. Stdin is first copied to a temporary file, so it is checked the same way. An
   * id the file repeats is refused by the store's unique {@code _id} index, which undoes the
   * load; the file is then read once more to name the line of the repeat. The client holds a
   * batch of nodes and the path from the root, never the tree nor its ids.
   */
  private long stream(Progress progress, Connection connection, MongoDatabase db,
      boolean grafting) {
    Path source = file.equals("-") ? spool() : Path.of(file);
    try {
      long size = check(source, connection, progress);
      try {
        return reading(source, (in, reader) -> grafting
            ? Loads.graft(reader, size, under, connection, db, store.collection, store.pattern,
                store.treeOptions(), progress)
            : Loads.write(reader, size, connection, db, store.collection, store.pattern,
                store.treeOptions(), store.scope, replace, progress));
      } catch (NodeNotFoundException e) {
        if (under != null && under.equals(e.id())) { // checked before the graft wrote anything
          throw new CliException("--under " + CheckCommand.quote(under) + ": no such node in the"
              + " tree of " + store.where(db)
              + "; nothing was written", e);
        }
        throw e;
      } catch (DuplicateNodeException e) {
        // the load is undone; where the file repeats the id (a graft may meet one in the tree)
        TreeJsonException at = repeat(source, e.id());
        if (at != null) {
          throw new CliException(file + ": " + at.getMessage(), e);
        }
        if (grafting) { // the tree holds the id already: the graft wrote nothing
          throw new CliException(file + ": node " + CheckCommand.quote(e.id())
              + " already exists in the tree of " + store.where(db)
              + ": a graft adds new nodes only; remove it from the file; nothing was written", e);
        }
        throw e;
      }
    } finally {
      if (file.equals("-")) {
        try {
          Files.deleteIfExists(source);
        } catch (IOException e) {
          source.toFile().deleteOnExit();
        }
      }
    }
  }

  /** Stdin copied to a temporary file, which is read twice. */
  private Path spool() {
    try {
      Path spooled = Files.createTempFile("arbor-import-", ".json");
      try (InputStream in = arbor.stdin()) {
        Files.copy(in, spooled, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException | RuntimeException e) {
        Files.deleteIfExists(spooled);
        throw e;
      }
      return spooled;
    } catch (IOException e) {
      throw new CliException("cannot read stdin: " + Errors.message(e), e);
    }
  }

  /**
   * Reads {@code source} through once, checking it whole before anything is written: the JSON,
   * the attribute names, every document's size in the pattern, and the total of the documents
   * against what the target holds ({@link Capacity}), unless {@code --accept-size}.
   *
   * @return the number of nodes in it
   */
  private long check(Path source, Connection connection, Progress progress) {
    return reading(source, (in, reader) -> {
      long size = Files.size(source);
      progress.phase("reading " + file, reader::count,
          () -> size <= 0 ? Double.NaN : Math.min(1.0, (double) in.count / size));
      TreeSizes sizes = TreePattern.measure(reader);
      var refusal = sizes.refusal(store.pattern);
      if (refusal.isPresent()) {
        throw refusal.get();
      }
      String excess = arbor.capacity().excess(connection, sizes.totalBytes(store.pattern),
          sizes.nodes());
      if (excess != null) {
        if (!acceptSize) {
          throw new CliException(tooLarge(sizes, excess, "would") + "; "
              + (!connection.embedded() ? "add --accept-size to load it"
                  : connection.dataDir() != null ? "free disk space, give a server with --uri,"
                      + " or add --accept-size to load it anyway"
                  : "run java with a larger -Xmx, give --data-dir or --uri, or add"
                      + " --accept-size to load it anyway"));
        }
        progress.note(tooLarge(sizes, excess, "will") + ": loading it (--accept-size)");
      }
      return reader.count();
    });
  }

  /**
   * {@code FILE as PATTERN would store about N of documents (the largest M, in encoded BSON),
   * <excess>; the patterns whose documents do not grow with depth would store it in: ...}.
   */
  private String tooLarge(TreeSizes sizes, String excess, String verb) {
    TreeSizes.Documents d = sizes.documents(store.pattern);
    StringBuilder s = new StringBuilder(file).append(" as ").append(Patterns.name(store.pattern))
        .append(' ').append(verb).append(" store about ").append(Text.bytes(d.totalBytes()))
        .append(" of documents (the largest ").append(Text.bytes(d.largestBytes()))
        .append(", in encoded BSON), ").append(excess);
    List<TreePattern> linear = sizes.linearPatterns();
    if (!linear.isEmpty() && verb.equals("would")) {
      s.append("; the patterns whose documents do not grow with depth would store it in ");
      for (int i = 0; i < linear.size(); i++) {
        s.append(i == 0 ? "" : i == linear.size() - 1 ? " and " : ", ")
            .append(Patterns.name(linear.get(i))).append(' ')
            .append(Text.bytes(sizes.totalBytes(linear.get(i))));
      }
    }
    return s.toString();
  }

  /** The error at the second node of {@code source} with id {@code id}, or null. */
  private TreeJsonException repeat(Path source, String id) {
    try (InputStream in = Files.newInputStream(source);
        TreeJsonReader reader = reader(in)) {
      return JsonReaders.findRepeat(reader, id);
    } catch (IOException | RuntimeException e) {
      return null; // the file was read twice already: keep the store's own error
    }
  }

  /** What is done with a reader of the file. */
  private interface Reading {
    long apply(Counting in, TreeJsonReader reader) throws IOException;
  }

  /** Runs {@code body} on a reader of {@code source}, its failures in words naming the file. */
  private long reading(Path source, Reading body) {
    try (Counting in = new Counting(Files.newInputStream(source));
        TreeJsonReader reader = reader(in)) {
      return body.apply(in, reader);
    } catch (TreeJsonException e) {
      throw new CliException(file + ": " + e.getMessage(), e);
    } catch (IOException e) {
      throw new CliException("cannot read " + file + ": " + Errors.message(e), e);
    } catch (UncheckedIOException e) {
      throw new CliException("cannot read " + file + ": " + Errors.message(e.getCause()), e);
    }
  }

  private TreeJsonReader reader(InputStream in) {
    NodeIdType idType = store.idType == null ? NodeIdType.STRING : store.idType;
    return JsonReaders.withoutDuplicateCheck(TreeJson.reader(in)).refusing(
        (name, attribute) -> store.pattern.nameRefusal(name, attribute, store.treeOptions())
            .map(r -> r.replace("this pattern", Patterns.name(store.pattern))).orElse(null))
        .refusingIds(id -> idType.refusal(id)
            .map(r -> r.replace("TreeOptions.withIdType", "--id-type " + IdTypes.name(idType)))
            .orElse(null));
  }

  /** An input stream that counts the bytes read, for the share of the file done. */
  private static final class Counting extends FilterInputStream {
    volatile long count;

    Counting(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        count++;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      if (n > 0) {
        count += n;
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      long skipped = super.skip(n);
      count += skipped;
      return skipped;
    }
  }
}
