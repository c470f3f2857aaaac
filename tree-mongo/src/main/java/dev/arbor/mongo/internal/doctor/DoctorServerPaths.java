package dev.arbor.mongo.internal.doctor;

import static dev.arbor.mongo.internal.doctor.DoctorComparisons.apply;
import static dev.arbor.mongo.internal.doctor.DoctorComparisons.compareReads;
import static dev.arbor.mongo.internal.doctor.DoctorComparisons.compareTrees;
import static dev.arbor.mongo.internal.doctor.DoctorComparisons.same;
import static dev.arbor.mongo.internal.doctor.DoctorScript.fixture;
import static dev.arbor.mongo.internal.doctor.DoctorScript.op;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CreateCollectionOptions;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.MongoTree;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.doctor.DoctorScript.Op;
import dev.arbor.mongo.internal.layout.MaterializedPathLayout;
import java.util.List;
import org.bson.Document;

/**
 * {@link Doctor}'s checks of the server paths the stores take where the server has them, each
 * compared with {@link InMemoryTreeStore}: {@code $graphLookup} for the reads of parent and child
 * references, pipeline updates for the moves of arrays of ancestors and materialized paths, a
 * collection whose default collation is a locale's, depth-bounded regexes of materialized paths,
 * and a level wide enough for a large {@code $in}. What the server lacks (probed as the stores
 * probe it) is not offered, not failed.
 */
public final class DoctorServerPaths {
  private final DoctorScratch scratch;
  /** Whether the {@code $graphLookup} check runs whatever the probe says (tests). */
  private final boolean assumeGraphLookup;

  public DoctorServerPaths(DoctorScratch scratch, boolean assumeGraphLookup) {
    this.scratch = scratch;
    this.assumeGraphLookup = assumeGraphLookup;
  }

  /** Reads of a 40-deep chain and a move with {@code $graphLookup} on, where it works. */
  public DoctorVerdict graphLookup() {
    MongoCollection<Document> c = scratch.fresh();
    Tree tree = deepTree();
    TreePattern.PARENT_REFERENCES.open(c).load(tree);
    if (!assumeGraphLookup && !ServerCapabilities.probing(c).graphLookup()) {
      return DoctorVerdict.notOffered("$graphLookup ignores startWith or is missing: the stores"
          + " walk level by level with $in (checked above)");
    }
    int reads = 0;
    for (TreePattern p : List.of(TreePattern.PARENT_REFERENCES, TreePattern.CHILD_REFERENCES)) {
      c = scratch.fresh();
      MongoTreeStore store = new MongoTreeStore(p, c, new ServerCapabilities(c,
          ServerCapabilities.Mode.ON, ServerCapabilities.Mode.PROBE));
      store.load(tree);
      InMemoryTreeStore reference = new InMemoryTreeStore();
      reference.load(tree);
      compareReads("load", store, reference, tree.ids());
      reads += tree.size();
      apply("move c30 lastChildOf(s5)", s -> s.move("c30", Position.lastChildOf("s5")), store,
          reference);
      compareReads("a move", store, reference, tree.ids());
      compareTrees("a move", store, reference);
    }
    return DoctorVerdict.passed("ancestors, descendants and subtrees of " + reads
        + " nodes (a 40-deep chain) read with $graphLookup");
  }

  /** A chain 40 deep with a few side branches. */
  private static Tree deepTree() {
    Tree.Builder b = Tree.builder();
    String parent = null;
    for (int i = 0; i < 40; i++) {
      String id = "c" + i;
      b.add(id, parent);
      if (i % 10 == 5) {
        b.add("s" + i, id).add("t" + i, "s" + i);
      }
      parent = id;
    }
    return b.build();
  }

  /** The script's moves and lifts with pipeline updates on, where the server takes them. */
  public DoctorVerdict pipelineUpdates() {
    MongoCollection<Document> c = scratch.fresh();
    if (!ServerCapabilities.probing(c).pipelineUpdates()) {
      return DoctorVerdict.notOffered("updates given as pipelines are refused (MongoDB 4.2+): moves"
          + " rewrite each document of the subtree (checked above)");
    }
    int moves = 0;
    for (TreePattern p : List.of(TreePattern.ARRAY_OF_ANCESTORS,
        TreePattern.MATERIALIZED_PATHS)) {
      c = scratch.fresh();
      MongoTreeStore store = new MongoTreeStore(p, c, new ServerCapabilities(c,
          ServerCapabilities.Mode.PROBE, ServerCapabilities.Mode.ON));
      InMemoryTreeStore reference = new InMemoryTreeStore();
      store.load(fixture());
      reference.load(fixture());
      for (Op op : DoctorScript.script()) {
        if (op.what().startsWith("move") || op.what().startsWith("delete b lifting")) {
          apply(op.what(), op.run(), store, reference);
          compareTrees(op.what(), store, reference);
          compareReads(op.what(), store, reference, op.focus());
          moves++;
        }
      }
    }
    return DoctorVerdict.passed(moves + " subtree moves and lifts with pipeline updates in array of"
        + " ancestors and materialized paths");
  }

  /**
   * Ids that sort differently under a locale collation than by code points: case, digits,
   * punctuation and accents.
   */
  private static Tree collationTree() {
    return Tree.builder()
        .add("B", null).add("a", null).add("a/", "a").add("a-b", "a").add("A", "a")
        .add("a b", "A").add("n10", "A").add("n9", "n10").add("é", "n9").add("e", "é")
        .add("Z", "B").add("z", "Z")
        .build();
  }

  /**
   * A few operations in every pattern on ids that sort differently under {@code en}, in a
   * collection whose default collation is {@code en} where the server keeps one.
   */
  public DoctorVerdict collation() {
    MongoCollection<Document> c = scratch.fresh();
    MongoDatabase database = scratch.database();
    String name = scratch.name();
    database.createCollection(name, new CreateCollectionOptions().collation(
        Collation.builder().locale("en").build()));
    Document options = null;
    for (Document d : database.listCollections()) {
      if (name.equals(d.get("name"))) {
        options = d.get("options", Document.class);
      }
    }
    if (options == null || options.get("collation") == null) {
      c.drop();
      return DoctorVerdict.notOffered("the server ignores a collection's default collation");
    }
    int ops = 0;
    for (TreePattern p : TreePattern.values()) {
      c.deleteMany(new Document()); // keeps the collection and its collation
      MongoTree tree = p.open(c);
      InMemoryTreeStore reference = new InMemoryTreeStore();
      tree.load(collationTree());
      reference.load(collationTree());
      List<Op> ops1 = List.of(
          op("move A firstRoot", s -> s.move("A", Position.firstRoot()), "A", "a"),
          op("insert a- after(a/)", s -> s.insert("a-", Position.after("a/")), "a", "a-"),
          op("move a/ lastChildOf(z)", s -> s.move("a/", Position.lastChildOf("z")), "a/", "z"),
          op("move n10 before(B)", s -> s.move("n10", Position.before("B")), "n10", "n9"),
          op("delete é", s -> s.delete("é"), "n9"));
      for (Op op : ops1) {
        apply(op.what(), op.run(), tree, reference);
        compareTrees(op.what(), tree, reference);
        compareReads(op.what(), tree, reference, op.focus());
        ops++;
      }
      compareReads("every node", tree, reference, reference.snapshot().ids());
    }
    return DoctorVerdict.passed(ops + " operations in every pattern on ids that sort differently"
        + " under 'en' (case, digits, accents, punctuation)");
  }

  /** Depth-limited reads of a chain deeper than a regex of materialized paths spans. */
  public DoctorVerdict boundedRegex() {
    MongoCollection<Document> c = scratch.fresh();
    Tree.Builder b = Tree.builder();
    String parent = null;
    for (int i = 0; i < 110; i++) {
      String id = "n" + i + ",$-\\.(" + "x".repeat(20);
      b.add(id, parent);
      parent = id;
    }
    Tree chain = b.build();
    MongoTree tree = TreePattern.MATERIALIZED_PATHS.open(c);
    tree.load(chain);
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(chain);
    List<String> ids = chain.ids();
    int reads = 0;
    for (int from : new int[] {0, 5, 105}) {
      for (int depth : new int[] {1, 2, 50, 101, 102, 1_000}) {
        String id = ids.get(from);
        same("a 110-deep chain", "descendants(n" + from + ", " + depth + ")",
            reference.descendants(id, depth), tree.descendants(id, depth));
        reads++;
      }
    }
    return DoctorVerdict.passed(reads + " depth-limited reads of a 110-deep chain of escaped ids"
        + " (regexes of at most " + MaterializedPathLayout.MAX_REGEX_DEPTH + " levels)");
  }

  /** A level of 1 000 ids walked with {@code $in}, and a subtree filter of all of them. */
  public DoctorVerdict largeIn() {
    MongoCollection<Document> c = scratch.fresh();
    int width = 1_000;
    Tree.Builder b = Tree.builder().add("root", null);
    for (int i = 0; i < width; i++) {
      b.add("w" + i, "root");
    }
    b.add("leaf", "w" + (width - 1));
    Tree wide = b.build();
    MongoTree tree = new MongoTreeStore(TreePattern.PARENT_REFERENCES, c, new ServerCapabilities(c,
        ServerCapabilities.Mode.OFF, ServerCapabilities.Mode.PROBE));
    tree.load(wide);
    List<String> expected = wide.ids().subList(1, wide.size());
    same("a 1 000-wide level", "descendants(root)", expected, tree.descendants("root"));
    long counted = c.countDocuments(tree.subtreeFilter("root"));
    same("a 1 000-wide level", "countDocuments(subtreeFilter(root))", (long) wide.size(),
        counted);
    return DoctorVerdict.passed("a level of " + width + " ids walked with $in, and a subtree filter"
        + " of " + wide.size() + " ids counted");
  }
}
