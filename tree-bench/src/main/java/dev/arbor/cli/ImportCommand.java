package dev.arbor.cli;

import com.mongodb.client.MongoDatabase;
import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import dev.arbor.core.json.TreeJsonException;
import dev.arbor.core.json.TreeJsonReader;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
        "The whole file is read and checked before anything is written. A collection that holds "
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
    try (Progress progress = progress(); Connection connection = store.connect(progress)) {
      MongoDatabase db = connection.database(store.db);
      String where = Loads.where(db, store.collection, store.pattern);
      if (grafting) {
        Patterns.require(db, store.collection, store.pattern, store.treeOptions()); // first
      } else {
        Loads.checkTarget(db, store.collection, store.pattern, replace); // fail before reading
      }
      Tree tree = read(progress);
      long n = grafting
          ? Loads.graft(tree, under, connection, db, store.collection, store.pattern,
              store.treeOptions(), progress)
          : Loads.write(tree, connection, db, store.collection, store.pattern,
              store.treeOptions(), replace, progress);
      connection.save(progress);
      progress.done((grafting ? "grafted " : "imported ") + n + " nodes from " + file
          + " into " + where + (under != null ? " under '" + under + "'"
              : graft ? " as new roots" : "")
          + (connection.temporary() ? " (temporary: discarded now)" : ""));
      return Arbor.EXIT_OK;
    }
  }

  private Tree read(Progress progress) {
    boolean stdin = file.equals("-");
    try (Counting in = new Counting(stdin ? arbor.stdin() : Files.newInputStream(Path.of(file)));
        TreeJsonReader reader = TreeJson.reader(in).refusing(
            (name, attribute) -> store.pattern.nameRefusal(name, attribute, store.treeOptions())
                .map(r -> r.replace("this pattern", Patterns.name(store.pattern))).orElse(null))) {
      long size = stdin ? -1 : Files.size(Path.of(file));
      progress.phase("reading " + file, reader::count,
          () -> size <= 0 ? Double.NaN : Math.min(1.0, (double) in.count / size));
      return reader.readAll();
    } catch (TreeJsonException e) {
      throw new CliException(file + ": " + e.getMessage(), e);
    } catch (IOException e) {
      throw new CliException("cannot read " + file + ": " + Errors.message(e), e);
    } catch (UncheckedIOException e) {
      throw new CliException("cannot read " + file + ": " + Errors.message(e.getCause()), e);
    }
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
