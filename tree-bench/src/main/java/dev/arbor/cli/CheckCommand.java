package dev.arbor.cli;

import com.mongodb.client.MongoDatabase;
import dev.arbor.core.Problem;
import dev.arbor.core.TreeStore;
import dev.arbor.tools.Text;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code arbor check}: the structural problems of a collection, one line each. */
@Command(name = "check", mixinStandardHelpOptions = true,
    description = {
        "Check the tree structure of a collection; print one line per problem on stdout, each "
            + "naming its node. Changes nothing.",
        "Exit code 0 when the collection is sound, " + Arbor.EXIT_PROBLEMS
            + " when problems were found."})
final class CheckCommand extends ArborCommand {
  @Mixin
  StoreOptions store;

  @Override
  public Integer call() {
    try (Progress progress = progress(); Connection connection = store.connect(progress)) {
      MongoDatabase db = connection.database(store.db);
      connection.requireCollection(db, store.collection, store.scope);
      store.recognisePattern(db, progress);
      String where = store.where(db);
      Patterns.require(db, store.collection, store.pattern, store.treeOptions());
      TreeStore tree = connection.open(store.pattern, db.getCollection(store.collection),
          store.treeOptions());
      long total = Connection.nodes(db.getCollection(store.collection), store.scope, tree);
      progress.phase("checking " + where, ExportCommand.reading(connection, total), total);
      List<Problem> problems = tree.check();
      print(problems, out());
      long nodes = Connection.nodes(db.getCollection(store.collection), store.scope, tree);
      if (problems.isEmpty()) {
        progress.done(where + ": sound, " + nodes(nodes) + ", no problem");
        return Arbor.EXIT_OK;
      }
      if (problems.stream().anyMatch(p -> !p.message().startsWith("_id is not"))) {
        // not for documents that are no node of this tree (another id type, a scope): their
        // problems say which option reads them, and repair leaves them
        progress.note("run 'arbor repair' with the same options: it rebuilds what the stored"
            + " structure determines and lists what it cannot settle without guessing");
      }
      progress.done(where + ": " + count(problems.size()) + " in " + nodes(nodes));
      return Arbor.EXIT_PROBLEMS;
    }
  }

  /** Prints one line per problem: {@code node 'id': message}. */
  static void print(List<Problem> problems, PrintWriter out) {
    for (Problem p : problems) {
      out.println("node " + quote(p.nodeId()) + ": " + Text.oneLine(p.message()));
    }
    out.flush();
  }

  /** {@code "1 node"}, {@code "2 nodes"}. */
  static String nodes(long n) {
    return n + (n == 1 ? " node" : " nodes");
  }

  static String count(int problems) {
    return problems + (problems == 1 ? " problem" : " problems");
  }

  /** An id in single quotes, control characters escaped. */
  static String quote(String id) {
    return "'" + Text.oneLine(id.replace("\\", "\\\\").replace("'", "\\'")) + "'";
  }
}
