package dev.arbor.cli;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import dev.arbor.core.Problem;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CliException;
import dev.arbor.tools.Text;
import java.util.List;
import org.bson.Document;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code arbor repair}: rebuilds what the pattern can derive, reports what remains. */
@Command(name = "repair", mixinStandardHelpOptions = true,
    description = {
        "Repair the tree structure of a collection as far as it can be derived: finish an "
            + "interrupted change, rebuild the derived fields from the authoritative ones, "
            + "complete a collection written by hand in the manual's shape. Never deletes a "
            + "node; the change is all-or-nothing.",
        "Prints the problems found on stderr and the problems that remain (that repair could "
            + "not settle without guessing) on stdout, one line each, naming the node.",
        "Exit code 0 when the collection is sound afterwards, " + Arbor.EXIT_PROBLEMS
            + " when problems remain."})
final class RepairCommand extends ArborCommand {
  @Mixin
  StoreOptions store;

  @Option(names = "--force",
      description = "Repair even if no document has the field the pattern builds on (which "
          + "usually means a wrong --pattern: repair would add that pattern's fields).")
  boolean force;

  @Override
  public Integer call() {
    try (Progress progress = progress(); Connection connection = store.connect(progress)) {
      MongoDatabase db = connection.database(store.db);
      connection.requireCollection(db, store.collection, store.scope);
      store.recognisePattern(db, progress);
      String where = store.where(db);
      Patterns.require(db, store.collection, store.pattern, store.treeOptions());
      MongoCollection<Document> collection = db.getCollection(store.collection);
      if (!force && Connection.hasNodes(collection)) {
        String field = store.treeOptions().fieldName(authoritativeField(store.pattern));
        if (collection.find(Filters.exists(field)).limit(1).first() == null) {
          throw new CliException("no document of " + db.getName() + "." + store.collection
              + " has the field '" + field + "' that " + Patterns.name(store.pattern)
              + " builds on: is --pattern right? (--force repairs anyway)");
        }
      }
      TreeStore tree = connection.open(store.pattern, collection, store.treeOptions());
      long total = Connection.nodes(collection, store.scope, tree);
      progress.phase("checking " + where, ExportCommand.reading(connection, total), total);
      List<Problem> found = tree.check();
      for (Problem p : found) {
        progress.note("found: node " + CheckCommand.quote(p.nodeId()) + ": "
            + Text.oneLine(p.message()));
      }
      progress.phase("repairing " + where);
      List<Problem> remaining = tree.repair();
      connection.save(progress);
      CheckCommand.print(remaining, out());
      long nodes = Connection.nodes(collection, store.scope, tree);
      if (!remaining.isEmpty()) {
        progress.note("what remains needs your decision: " + (store.pattern
            == TreePattern.NESTED_SETS ? "set the left and right of each node named so that"
                + " the intervals nest, or delete it (TreeStore.delete), then run 'arbor"
                + " repair' again"
            : "move each node named to where it belongs (TreeStore.move) or delete it"
                + " (TreeStore.delete), then run 'arbor check'"));
      }
      if (found.isEmpty() && remaining.isEmpty()) {
        progress.done(where + ": sound, " + CheckCommand.nodes(nodes) + ", nothing to repair");
      } else {
        progress.done(where + ": " + CheckCommand.count(found.size()) + " found, "
            + remaining.size() + (remaining.size() == 1 ? " remains, " : " remain, ")
            + CheckCommand.nodes(nodes));
      }
      return remaining.isEmpty() ? Arbor.EXIT_OK : Arbor.EXIT_PROBLEMS;
    }
  }

  /**
   * The field every node document of a pattern has in the manual's shape, from which repair
   * derives the others.
   */
  static dev.arbor.mongo.TreeField authoritativeField(TreePattern pattern) {
    switch (pattern) {
      case PARENT_REFERENCES:
      case ARRAY_OF_ANCESTORS:
        return dev.arbor.mongo.TreeField.PARENT;
      case CHILD_REFERENCES:
        return dev.arbor.mongo.TreeField.CHILDREN;
      case MATERIALIZED_PATHS:
        return dev.arbor.mongo.TreeField.PATH;
      case NESTED_SETS:
        return dev.arbor.mongo.TreeField.LEFT;
      default:
        throw new AssertionError(pattern);
    }
  }
}
