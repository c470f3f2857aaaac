package dev.arbor.cli;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.RenameCollectionOptions;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreePattern;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.bson.Document;

/**
 * Writes a whole tree into a collection so that a failure leaves nothing half-written: an empty
 * collection is filled by the pattern's bulk loader, which removes what it wrote if it fails; a
 * collection with documents is refused unless replacing, and then the tree is loaded into a
 * temporary collection beside it and renamed over it in one step (with {@code --data-dir}, where
 * nothing reaches the directory before the command succeeds, the collection is dropped and loaded
 * again instead).
 */
final class Loads {
  private Loads() {}

  /** {@code db.collection (pattern)}, for messages. */
  static String where(MongoDatabase db, String collection, TreePattern pattern) {
    return db.getName() + "." + collection + " (" + Patterns.name(pattern) + ")";
  }

  /**
   * Fails if the collection holds documents and {@code replace} is false.
   *
   * @return whether it holds documents
   */
  static boolean checkTarget(MongoDatabase db, String collection, TreePattern pattern,
      boolean replace) {
    MongoCollection<Document> target = db.getCollection(collection);
    boolean occupied = Connection.hasNodes(target);
    if (occupied && !replace) {
      long nodes = Connection.nodes(target);
      throw new CliException("collection " + where(db, collection, pattern) + " is not empty ("
          + nodes + (nodes == 1 ? " node" : " nodes") + "): add --replace to replace it");
    }
    return occupied;
  }

  /**
   * Writes {@code tree} into the collection, replacing its documents if {@code replace}.
   *
   * <p>Replacing on a server first loads the tree into a temporary collection beside the target,
   * so that everything the load checks (attribute names the pattern reserves, values BSON cannot
   * hold) is checked while the target is untouched, then renames it over the target in one step.
   * With {@code --data-dir} the target is dropped and loaded again: what this command writes
   * reaches the directory only if it succeeds ({@link Connection#save}).
   */
  static void write(Tree tree, Connection connection, MongoDatabase db, String collection,
      TreePattern pattern, boolean replace, Progress progress) {
    String where = where(db, collection, pattern);
    boolean occupied = checkTarget(db, collection, pattern, replace);
    if (!occupied) {
      load(tree, connection, db, collection, pattern, progress);
      return;
    }
    if (connection.savedOnSuccessOnly()) {
      progress.phase("replacing " + where);
      db.getCollection(collection).drop();
      load(tree, connection, db, collection, pattern, progress);
      return;
    }
    String temporary = collection + ".arbor-tmp-"
        + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36)
            .toLowerCase(Locale.ROOT);
    MongoCollection<Document> aside = db.getCollection(temporary);
    try {
      load(tree, connection, db, temporary, pattern, progress);
      progress.phase("renaming " + temporary + " to " + collection);
      aside.renameCollection(new MongoNamespace(db.getName(), collection),
          new RenameCollectionOptions().dropTarget(true));
    } catch (RuntimeException e) {
      dropQuietly(aside, e);
      throw e;
    }
  }

  private static void load(Tree tree, Connection connection, MongoDatabase db,
      String collection, TreePattern pattern, Progress progress) {
    String where = where(db, collection, pattern);
    long before = connection.documentsInserted();
    progress.phase(String.format(Locale.ROOT, "loading %,d nodes into %s", tree.size(), where),
        () -> Math.min(tree.size(), connection.documentsInserted() - before), tree.size());
    TreeStore store = connection.open(pattern, db.getCollection(collection));
    store.load(tree); // refuses a collection filled meanwhile; removes what it wrote on failure
    progress.phase("creating the indexes of " + where);
    store.ensureIndexes();
  }

  private static void dropQuietly(MongoCollection<Document> collection, RuntimeException cause) {
    try {
      collection.drop();
    } catch (RuntimeException suppressed) {
      cause.addSuppressed(suppressed);
    }
  }
}
