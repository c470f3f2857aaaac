package dev.arbor.cli;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.RenameCollectionOptions;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CliException;
import java.util.Iterator;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.bson.Document;

/**
 * Writes a whole tree into a collection so that a failure leaves nothing half-written: an empty
 * collection is filled by the pattern's bulk loader, which removes what it wrote if it fails; a
 * collection with documents is refused unless replacing, and then the tree is loaded into a
 * temporary collection beside it and renamed over it in one step.
 */
final class Loads {
  private Loads() {}

  /** {@code db.collection (pattern)}, for messages. */
  static String where(MongoDatabase db, String collection, TreePattern pattern) {
    return where(db, collection, pattern, null);
  }

  /** As {@link #where(MongoDatabase, String, TreePattern)}, naming the scope if there is one. */
  static String where(MongoDatabase db, String collection, TreePattern pattern,
      String scope) {
    return db.getName() + "." + collection + " (" + Patterns.name(pattern)
        + (scope == null ? "" : ", scope " + scope) + ")";
  }

  /**
   * Fails if the collection holds documents and {@code replace} is false; first lets a change a
   * stopped process left half-done there be completed or undone ({@link #settle}).
   *
   * @return whether it holds documents
   */
  static boolean checkTarget(Connection connection, MongoDatabase db, String collection,
      TreePattern pattern, TreeOptions options, boolean replace) {
    return checkTarget(connection, db, collection, pattern, options, null, replace);
  }

  /**
   * As {@link #checkTarget(Connection, MongoDatabase, String, TreePattern, TreeOptions,
   * boolean)}, for the tree of {@code scope} ({@code FIELD=VALUE}, in {@code options} too) if it
   * is not null: only that tree must be empty, and it cannot be replaced (the collection holds
   * the other trees, which a replacement by rename would take with it).
   *
   * @return whether it holds documents: false for a scope (it refuses one that does)
   */
  static boolean checkTarget(Connection connection, MongoDatabase db, String collection,
      TreePattern pattern, TreeOptions options, String scope, boolean replace) {
    MongoCollection<Document> target = db.getCollection(collection);
    if (scope != null) {
      if (!Connection.exists(db, collection)) {
        return false; // not created by a read: a failed load then drops it whole
      }
      long nodes = connection.open(pattern, target, options).size(); // settles a stopped load
      if (nodes > 0) {
        throw new CliException("the tree of " + where(db, collection, pattern, scope) + " is"
            + " not empty (" + nodes + (nodes == 1 ? " node" : " nodes") + "): "
            + (replace ? "--replace does not replace one tree of a collection that holds"
                + " several (its other trees would go with it): delete the tree's roots"
                + " (TreeStore.delete) first, or give another scope"
                : "give another scope, or delete the tree's roots (TreeStore.delete) first"));
      }
      return false;
    }
    settle(connection, target, pattern, options);
    boolean occupied = Connection.hasNodes(target);
    if (!occupied && !replace && Connection.scopedOnly(target)) {
      throw new CliException("collection " + db.getName() + "." + collection + " holds trees with"
          + " a scope (TreeOptions.withScope), which a tree without one does not join: give"
          + " another collection, a --scope of its own, or --replace to replace them");
    }
    if (occupied && !replace) {
      long nodes = Connection.nodes(target);
      throw new CliException("collection " + where(db, collection, pattern) + " is not empty ("
          + nodes + (nodes == 1 ? " node" : " nodes") + "): add --replace to replace it");
    }
    return occupied;
  }

  /**
   * Writes the entries (in preorder) into the collection as they come, replacing its documents if
   * {@code replace}: the store's streamed load holds one batch at a time, and undoes what it wrote
   * if anything fails, an entry the iterator cannot give included.
   *
   * <p>Replacing first loads the tree into a temporary collection beside the target, so that
   * everything the load checks (attribute names the pattern reserves, values BSON cannot hold)
   * is checked while the target is untouched, then renames it over the target in one step: a
   * process stopped before the rename leaves the target as it was (with {@code --data-dir} too,
   * where a large load is saved as it goes).
   *
   * @param size the number of entries if known (for progress), or -1: the caller shows progress
   * @return the number of nodes written
   */
  static long write(Iterator<? extends Node> entries, long size, Connection connection,
      MongoDatabase db, String collection, TreePattern pattern, TreeOptions options,
      boolean replace, Progress progress) {
    return write(entries, size, connection, db, collection, pattern, options, null, replace,
        progress);
  }

  /**
   * As {@link #write(Iterator, long, Connection, MongoDatabase, String, TreePattern,
   * TreeOptions, boolean, Progress)}, into the tree of {@code scope} if it is not null ({@link
   * #checkTarget}: an empty one only).
   */
  static long write(Iterator<? extends Node> entries, long size, Connection connection,
      MongoDatabase db, String collection, TreePattern pattern, TreeOptions options,
      String scope, boolean replace, Progress progress) {
    return write(store -> store.load(entries), size, connection, db, collection, pattern,
        options, scope, replace, progress);
  }

  private static long write(java.util.function.ToLongFunction<TreeStore> loading, long size,
      Connection connection, MongoDatabase db, String collection, TreePattern pattern,
      TreeOptions options, String scope, boolean replace, Progress progress) {
    boolean occupied = checkTarget(connection, db, collection, pattern, options, scope,
        replace);
    if (!occupied) {
      return load(loading, size, connection, db, collection, pattern, options, scope,
          progress);
    }
    String temporary = collection + ".arbor-tmp-"
        + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36)
            .toLowerCase(Locale.ROOT);
    MongoCollection<Document> aside = db.getCollection(temporary);
    try {
      long n = load(loading, size, connection, db, temporary, pattern, options, null,
          progress);
      progress.phase("renaming " + temporary + " to " + collection);
      aside.renameCollection(new MongoNamespace(db.getName(), collection),
          new RenameCollectionOptions().dropTarget(true));
      return n;
    } catch (RuntimeException e) {
      dropQuietly(aside, e);
      keepTheUndo(connection, progress, e);
      throw e;
    }
  }

  /**
   * Lets a change that a stopped process left half-done in the collection be completed or undone
   * (a load killed half-way is undone), so that what is counted next is the tree: one read of
   * the store, which does that first (waiting out the stopped holder's lease). A collection the
   * store cannot open is left for the caller to report.
   */
  static void settle(Connection connection, MongoCollection<Document> collection,
      TreePattern pattern, TreeOptions options) {
    if (!Connection.hasNodes(collection)) {
      return;
    }
    try {
      connection.open(pattern, collection, options).size();
    } catch (dev.arbor.core.ChangeInterruptedException e) {
      throw e;
    } catch (RuntimeException e) {
      // not a tree of this pattern: the caller says so
    }
  }

  /**
   * Shows {@code "<doing> N nodes into <where>"} with the documents inserted so far, when the
   * number of nodes {@code size} is known (not -1).
   */
  private static void insertsPhase(String doing, long size, String where, Connection connection,
      Progress progress) {
    if (size >= 0) {
      long before = connection.documentsInserted();
      progress.phase(String.format(Locale.ROOT, "%s %,d nodes into %s", doing, size, where),
          () -> Math.min(size, connection.documentsInserted() - before), size);
    }
  }

  private static long load(java.util.function.ToLongFunction<TreeStore> loading, long size,
      Connection connection, MongoDatabase db, String collection, TreePattern pattern,
      TreeOptions options, String scope, Progress progress) {
    String where = where(db, collection, pattern, scope);
    insertsPhase("loading", size, where, connection, progress);
    MongoCollection<Document> target = db.getCollection(collection);
    boolean existed = db.listCollectionNames().into(new java.util.ArrayList<>())
        .contains(collection);
    TreeStore store = connection.open(pattern, target, options);
    long n;
    try {
      // refuses a collection filled meanwhile; removes what it wrote on failure
      n = loading.applyAsLong(store);
    } catch (RuntimeException e) {
      if (!existed && !Connection.hasNodes(target)) {
        dropQuietly(target, e); // nothing of it is left: not even its lock document
      }
      keepTheUndo(connection, progress, e);
      throw e;
    }
    progress.phase("creating the indexes of " + where);
    store.ensureIndexes();
    return n;
  }

  /**
   * Grafts the trees that {@code entries} give (in preorder) into the tree of the collection, as
   * {@link TreeStore#graft(String, Iterator)} does: under node {@code under} as its last
   * children, or as new last roots if {@code under} is null, all-or-nothing, in bounded memory
   * (the store writes batches as the entries come and undoes them if it fails).
   *
   * @param size the number of entries if known, else -1
   * @return the number of nodes added
   */
  static long graft(Iterator<? extends Node> entries, long size, String under,
      Connection connection, MongoDatabase db, String collection, TreePattern pattern,
      TreeOptions options, Progress progress) {
    insertsPhase("grafting", size, where(db, collection, pattern), connection, progress);
    TreeStore store = connection.open(pattern, db.getCollection(collection), options);
    return store.graft(under, entries);
  }

  /**
   * The entries of {@code source}, counted as they are taken; when they run out, fails (before
   * the load that takes them can finish, so that it is undone) unless there were exactly {@code
   * expected}.
   */
  static final class Counted implements Iterator<Node> {
    private final Iterator<? extends Node> source;
    private final long expected;
    private final java.util.function.LongFunction<RuntimeException> mismatch;
    private volatile long count;

    Counted(Iterator<? extends Node> source, long expected,
        java.util.function.LongFunction<RuntimeException> mismatch) {
      this.source = source;
      this.expected = expected;
      this.mismatch = mismatch;
    }

    long count() {
      return count;
    }

    @Override
    public boolean hasNext() {
      boolean more = source.hasNext();
      if (!more && expected >= 0 && count != expected) {
        throw mismatch.apply(count);
      }
      return more;
    }

    @Override
    public Node next() {
      Node e = source.next();
      count++;
      return e;
    }
  }

  /**
   * After a failed load whose writes were taken back (the store undoes what it wrote, and the
   * temporary collection of a replacement is dropped): with {@code --data-dir}, saves that, since
   * a large load saves as it goes and its saved half would otherwise stay in the directory (a
   * later command would undo it again, after waiting out its lease, and a temporary collection
   * would stay for good). Elsewhere the undo is already kept.
   */
  private static void keepTheUndo(Connection connection, Progress progress,
      RuntimeException cause) {
    try {
      connection.save(progress);
    } catch (RuntimeException suppressed) {
      cause.addSuppressed(suppressed);
    }
  }

  private static void dropQuietly(MongoCollection<Document> collection, RuntimeException cause) {
    try {
      collection.drop();
    } catch (RuntimeException suppressed) {
      cause.addSuppressed(suppressed);
    }
  }
}
