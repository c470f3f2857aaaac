package dev.arbor.mongo.internal.doctor;

import static dev.arbor.mongo.internal.doctor.DoctorComparisons.apply;
import static dev.arbor.mongo.internal.doctor.DoctorComparisons.compareReads;
import static dev.arbor.mongo.internal.doctor.DoctorComparisons.compareTrees;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.MongoTree;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.doctor.DoctorScript.Op;
import java.util.List;
import java.util.function.Consumer;
import org.bson.Document;

/**
 * {@link Doctor}'s check of the contract through one protocol: it loads the {@linkplain
 * DoctorScript#fixture() fixture}, runs every operation of the {@linkplain DoctorScript#script()
 * script} on a store of the scratch collection and on {@link InMemoryTreeStore}, comparing
 * outcomes, trees, {@code check()} and the reads of the nodes each operation names; then the reads
 * of every node, {@code repair()}, and a reload of the whole tree from a stream. The store runs
 * its changes under the lock and journal, in Arbor's own transactions, or in transactions of a
 * session of the caller's (here: of the doctor's), of which an aborted one must leave no trace.
 */
public final class DoctorContractCheck {
  /** The store a script runs on, for the scratch collection. */
  private interface Opener {
    MongoTree open(MongoCollection<Document> collection);
  }

  private final DoctorScratch scratch;

  public DoctorContractCheck(DoctorScratch scratch) {
    this.scratch = scratch;
  }

  /** The script on a store without a client: every change under the lock and journal. */
  public DoctorVerdict lockAndJournal(TreePattern pattern) {
    return script(pattern, c -> pattern.open(c), false);
  }

  /** The script on a store given the doctor's client: Arbor's own transactions. */
  public DoctorVerdict transactions(TreePattern pattern) {
    return script(pattern,
        c -> pattern.open(c, TreeOptions.defaults().withTransactions(scratch.client())), false);
  }

  /** The script with each change in a transaction of a session of the caller's. */
  public DoctorVerdict callersSession(TreePattern pattern) {
    return script(pattern,
        c -> pattern.open(c, TreeOptions.defaults().withTransactions(scratch.client())), true);
  }

  /**
   * Runs the script on the store {@code opener} opens on the emptied scratch collection.
   *
   * @param inCallersSession whether each change runs in a transaction of a session of ours
   */
  private DoctorVerdict script(TreePattern pattern, Opener opener, boolean inCallersSession) {
    MongoCollection<Document> c = scratch.fresh();
    MongoTree tree = opener.open(c);
    tree.ensureIndexes();
    InMemoryTreeStore reference = new InMemoryTreeStore();
    Tree fixture = DoctorScript.fixture();
    tree.load(fixture);
    reference.load(fixture);
    compareTrees("load", tree, reference);
    MongoTreeStore store = (MongoTreeStore) tree;
    String protocol = inCallersSession ? "the caller's transactions"
        : store.usesTransactions() ? "transactions"
            : "the lock and journal";
    int ops = 0;
    try (ClientSession session = inCallersSession ? scratch.client().startSession() : null) {
      MongoTree view = session == null ? tree : tree.withSession(session);
      for (Op op : DoctorScript.script()) {
        Consumer<TreeStore> run = session == null ? op.run() : s -> session.withTransaction(
            () -> {
              op.run().accept(s);
              return null;
            });
        apply(op.what(), run, op.run(), view, reference);
        compareTrees(op.what(), view, reference);
        compareReads(op.what(), view, reference, op.focus());
        ops++;
      }
      if (session != null) {
        // what the caller aborts never happened
        session.startTransaction();
        view.insert("aborted", Position.lastRoot());
        view.move("i", Position.firstRoot());
        session.abortTransaction();
        compareTrees("an aborted transaction", tree, reference);
      }
    }
    compareReads("every node", tree, reference, reference.snapshot().ids());
    List<Problem> left = tree.repair();
    if (!left.isEmpty()) {
      throw new DoctorMismatch("repair() of a sound tree left " + left);
    }
    compareTrees("repair()", tree, reference);
    Tree whole = tree.snapshot();
    for (String root : tree.roots()) {
      tree.delete(root);
    }
    if (tree.size() != 0) {
      throw new DoctorMismatch("deleting every root left " + tree.size() + " nodes");
    }
    tree.load(whole.entries().iterator());
    compareTrees("reload from a stream", tree, reference);
    return DoctorVerdict.passed(ops + " operations through " + protocol
        + ", each compared with InMemoryTreeStore; check, repair, reload");
  }
}
