package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Lanes;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Crashes every multi-document operation of every pattern after its 1st, 2nd, ..., k-th document
 * write — every k, not a sample — and recovers: afterwards the tree equals either the tree before
 * or the tree after the operation, {@code check()} is empty and no node is lost.
 *
 * <p>The crash is injected by a {@link StepwiseSender} that applies each planned step document by
 * document and throws before the k-th document write, leaving the lock held; the crashing store's
 * lease is a few milliseconds, as if it had died. Recovery is what the next user of the
 * collection does: a new store (another process) reads, takes the expired lock over, and replays
 * the journal.
 */
class FaultInjectionTest {
  private static final String FIXTURE = "a(b(c d(e f)) g(h)) i(j k)";

  /** A named operation on a store. */
  record Op(String name, Consumer<TreeStore> run) {
    @Override
    public String toString() {
      return name;
    }
  }

  static final List<Op> OPS = List.of(
      new Op("insert n firstChildOf(d)", s -> s.insert("n", Position.firstChildOf("d"))),
      new Op("insert n before(c)", s -> s.insert("n", Position.before("c"))),
      new Op("insert n firstRoot", s -> s.insert("n", Position.firstRoot())),
      new Op("move d lastChildOf(i)", s -> s.move("d", Position.lastChildOf("i"))),
      new Op("move b firstRoot", s -> s.move("b", Position.firstRoot())),
      new Op("move h before(c)", s -> s.move("h", Position.before("c"))),
      new Op("move i firstChildOf(f)", s -> s.move("i", Position.firstChildOf("f"))),
      new Op("delete b", s -> s.delete("b")),
      new Op("delete j", s -> s.delete("j")),
      new Op("delete b lifting its children",
          s -> s.delete("b", dev.arbor.core.Deletion.LIFT_CHILDREN)),
      new Op("delete i lifting its children",
          s -> s.delete("i", dev.arbor.core.Deletion.LIFT_CHILDREN)));

  private static MongoTreeStore open(TreePattern pattern, MongoCollection<Document> c) {
    return (MongoTreeStore) pattern.open(c);
  }

  /**
   * A store that sends through {@code sender}; with {@code pipelines}, one that rewrites subtrees
   * with pipeline updates (MongoDB 4.2+), each pipeline run by {@link PipelineEmulator} as a
   * {@link StepwiseSender} writes document by document.
   */
  private static MongoTreeStore open(TreePattern pattern, MongoCollection<Document> c,
      boolean pipelines, TreeLock.Sender sender) {
    return (MongoTreeStore) pattern.open(c, capabilities(c, pipelines).sender(sender));
  }

  private static ServerCapabilities capabilities(MongoCollection<Document> c,
      boolean pipelines) {
    return pipelines ? new ServerCapabilities(c, ServerCapabilities.Mode.PROBE,
        ServerCapabilities.Mode.ON) : ServerCapabilities.probing(c);
  }

  /**
   * A sender that sends as the store's own would ({@link StepwiseSender} with {@code pipelines},
   * else {@link TreeLock#BULK}) until the test switches it.
   */
  private static SwitchableSender switchable(boolean pipelines) {
    SwitchableSender sender = new SwitchableSender();
    if (pipelines) {
      sender.target = StepwiseSender.crashingAfter(-1);
    }
    return sender;
  }

  /**
   * As if the time of a lease had passed since the holder stopped: its last renewal is moved to
   * the epoch, so that the next caller finds the lease expired by the server's clock.
   */
  static void expireLease(MongoCollection<Document> c) {
    c.updateOne(com.mongodb.client.model.Filters.eq("_id", TreeLock.LOCK_ID),
        com.mongodb.client.model.Updates.set(TreeLock.STATE + ".renewed", new java.util.Date(0)));
    // and the leases of the lanes it held (the heads of its changes in subtrees)
    c.updateMany(com.mongodb.client.model.Filters.exists(Lanes.R),
        com.mongodb.client.model.Updates.set(Lanes.R, new java.util.Date(0)));
  }

  private static Tree after(Op op) {
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    op.run().accept(reference);
    return reference.snapshot();
  }

  @TestFactory
  List<DynamicTest> everyCrashPointOfEveryOperationRecovers() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      for (Op op : OPS) {
        tests.add(DynamicTest.dynamicTest(pattern + ": " + op,
            () -> crashEverywhere(pattern, op, 4_000_000)));
      }
      // Journals too large for the lock document go into journal documents, one step each here.
      for (Op op : List.of(OPS.get(0), OPS.get(3), OPS.get(7))) {
        tests.add(DynamicTest.dynamicTest(pattern + ": " + op + ", journal documents",
            () -> crashEverywhere(pattern, op, 0)));
      }
      if (pattern == TreePattern.ARRAY_OF_ANCESTORS || pattern == TreePattern.MATERIALIZED_PATHS) {
        // The pipeline path: subtree moves as one pipeline updateMany, replayed from the journal.
        for (Op op : OPS.subList(3, 7)) {
          for (int inline : new int[] {4_000_000, 0}) {
            tests.add(DynamicTest.dynamicTest(pattern + ": " + op + ", pipeline updates"
                + (inline == 0 ? ", journal documents" : ""),
                () -> crashEverywhere(pattern, op, inline, true)));
          }
        }
      }
      tests.add(DynamicTest.dynamicTest(pattern + ": load", () -> crashLoadEverywhere(pattern)));
      tests.add(DynamicTest.dynamicTest(pattern + ": streamed load",
          () -> crashStreamEverywhere(pattern, null)));
      tests.add(DynamicTest.dynamicTest(pattern + ": streamed graft under a node",
          () -> crashStreamEverywhere(pattern, "d")));
      tests.add(DynamicTest.dynamicTest(pattern + ": streamed graft as roots",
          () -> crashStreamEverywhere(pattern, "")));
    }
    return tests;
  }

  private void crashEverywhere(TreePattern pattern, Op op, int inlineJournalBytes) {
    crashEverywhere(pattern, op, inlineJournalBytes, false);
  }

  private void crashEverywhere(TreePattern pattern, Op op, int inlineJournalBytes,
      boolean pipelines) {
    Tree before = Tree.parse(FIXTURE);
    Tree after = after(op);
    // A clean run counts the document writes of the operation.
    MongoCollection<Document> clean = MongoTestServer.get().freshCollection();
    SwitchableSender countingSender = switchable(pipelines);
    MongoTreeStore counting = open(pattern, clean, pipelines, countingSender);
    counting.load(before);
    StepwiseSender counter = StepwiseSender.crashingAfter(-1);
    countingSender.target = counter;
    op.run().accept(counting);
    assertEquals(after, counting.snapshot());
    int total = counter.written;
    assertTrue(total >= 1, "the operation writes something");
    for (int k = 0; k <= total; k++) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      SwitchableSender crashingSender = switchable(pipelines);
      MongoTreeStore crashing = (MongoTreeStore) pattern.open(c, capabilities(c, pipelines)
          .sender(crashingSender).inlineJournalBytes(inlineJournalBytes));
      crashing.load(before);
      crashingSender.target = StepwiseSender.crashingAfter(k);
      int crashAt = k;
      if (k < total) {
        assertThrows(StepwiseSender.Crash.class, () -> op.run().accept(crashing),
            () -> "crash after " + crashAt + " of " + total + " writes");
        expireLease(c); // the crashed holder is dead
      } else {
        op.run().accept(crashing); // the sender never reaches the limit
      }
      // Another process opens the collection; its first read finishes the interrupted change.
      MongoTreeStore next = open(pattern, c, pipelines, switchable(pipelines));
      Tree recovered = next.snapshot();
      String where = pattern + " " + op + ", crash after " + k + " of " + total + " writes";
      assertTrue(recovered.equals(before) || recovered.equals(after),
          () -> where + ": neither before nor after:\n" + recovered);
      assertEquals(List.of(), next.check(), where);
      assertEquals(List.of(), next.repair(), where);
      assertEquals(0, c.countDocuments(com.mongodb.client.model.Filters.eq("_id.arbor", "journal")),
          where + ": journal documents left");
      assertEquals(recovered, next.snapshot(), where);
      // and the tree is usable again
      next.insert("z", Position.lastRoot());
      assertEquals(List.of(), next.check(), where);
    }
  }

  private void crashLoadEverywhere(TreePattern pattern) {
    Tree tree = Tree.parse(FIXTURE);
    for (int k = 0; k < tree.size(); k++) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      MongoTreeStore crashing = open(pattern, c, false, StepwiseSender.crashingAfter(k));
      assertThrows(StepwiseSender.Crash.class, () -> crashing.load(tree));
      expireLease(c);
      MongoTreeStore next = open(pattern, c);
      assertEquals(Tree.empty(), next.snapshot(), pattern + " load crashed after " + k);
      next.load(tree);
      assertEquals(tree, next.snapshot());
    }
  }

  /** What the streamed tests graft: two top nodes, one with a subtree. */
  private static final String GRAFTED = "x(y(z1 z2) w) v";

  /**
   * Crashes a streamed load ({@code under} null) or graft (under a node, or "" for new roots),
   * written in batches of two documents so that late updates (a nested set's {@code right}, the
   * rest of a {@code children} array) and the graft's commit are crossed, after each of its
   * document writes; the next user finds the tree before or after it, never between.
   */
  private void crashStreamEverywhere(TreePattern pattern, String under) {
    Tree before = under == null ? Tree.empty() : Tree.parse(FIXTURE);
    Tree stream = under == null ? Tree.parse(FIXTURE) : Tree.parse(GRAFTED);
    String parent = under == null || under.isEmpty() ? null : under;
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(before);
    reference.graft(parent, stream);
    Tree after = reference.snapshot();
    java.util.function.BiFunction<MongoCollection<Document>, TreeLock.Sender, MongoTreeStore> run =
        (c, sender) -> {
      MongoTreeStore s = (MongoTreeStore) pattern.open(c,
          capabilities(c, false).sender(sender).loadBatchSize(2));
      s.load(before);
      return s;
    };
    java.util.function.Consumer<MongoTreeStore> op = s -> {
      if (under == null) {
        s.load(stream.entries().iterator());
      } else {
        s.graft(parent, stream.entries().iterator());
      }
    };
    SwitchableSender countingSender = new SwitchableSender();
    MongoTreeStore counting = run.apply(MongoTestServer.get().freshCollection(), countingSender);
    StepwiseSender counter = StepwiseSender.crashingAfter(-1);
    countingSender.target = counter;
    op.accept(counting);
    assertEquals(after, counting.snapshot());
    int total = counter.written;
    boolean late = pattern == TreePattern.NESTED_SETS || pattern == TreePattern.CHILD_REFERENCES;
    assertTrue(late ? total > stream.size() : total >= stream.size(),
        "the inserts, and late updates or a commit where the pattern needs them: " + total);
    for (int k = 0; k < total; k++) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      SwitchableSender crashingSender = new SwitchableSender();
      MongoTreeStore crashing = run.apply(c, crashingSender);
      crashingSender.target = StepwiseSender.crashingAfter(k);
      assertThrows(StepwiseSender.Crash.class, () -> op.accept(crashing));
      expireLease(c);
      MongoTreeStore next = open(pattern, c);
      Tree recovered = next.snapshot();
      String where = pattern + " " + (under == null ? "load" : "graft under '" + under + "'")
          + ", crash after " + k + " of " + total + " writes";
      if (under == null) {
        assertEquals(Tree.empty(), recovered, where);
      } else {
        assertTrue(recovered.equals(before) || recovered.equals(after),
            () -> where + ": neither before nor after:\n" + recovered);
      }
      assertEquals(List.of(), next.check(), where);
      assertEquals(recovered.size(), c.countDocuments(MongoTreeStore.NODES), where);
      assertEquals(0, c.countDocuments(com.mongodb.client.model.Filters.eq("_id.arbor",
          "journal")), where + ": journal documents left");
      if (recovered.equals(before)) {
        op.accept(next); // the tree takes the same stream again
        assertEquals(after, next.snapshot(), where);
      }
      next.insert("zz", Position.lastRoot());
      assertEquals(List.of(), next.check(), where);
    }
  }

  @TestFactory
  List<DynamicTest> aClientClosedMidChangeSaysWhatBecameOfIt() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      tests.add(DynamicTest.dynamicTest(pattern.toString(), () -> {
        Op op = OPS.get(3); // move d lastChildOf(i)
        Tree before = Tree.parse(FIXTURE);
        Tree after = after(op);
        SwitchableSender countingSender = new SwitchableSender();
        MongoTreeStore counting = open(pattern, MongoTestServer.get().freshCollection(), false,
            countingSender);
        counting.load(before);
        StepwiseSender counter = StepwiseSender.crashingAfter(-1);
        countingSender.target = counter;
        op.run().accept(counting);
        for (int k = 0; k < counter.written; k++) {
          MongoCollection<Document> c = MongoTestServer.get().freshCollection();
          open(pattern, c).load(before);
          com.mongodb.client.MongoClient own = com.mongodb.client.MongoClients.create(
              MongoTestServer.settings(MongoTestServer.get().uri()));
          MongoCollection<Document> mine = own.getDatabase(c.getNamespace().getDatabaseName())
              .getCollection(c.getNamespace().getCollectionName());
          int closeAt = k;
          MongoTreeStore closing = (MongoTreeStore) pattern.open(mine,
              ServerCapabilities.probing(mine).lease(200, 60_000).sender(
                  new StepwiseSender(written -> {
                    if (written == closeAt) {
                      own.close();
                    }
                  })));
          dev.arbor.core.ChangeInterruptedException e = org.junit.jupiter.api.Assertions
              .assertThrows(dev.arbor.core.ChangeInterruptedException.class,
                  () -> op.run().accept(closing));
          // The next access (after the closed client's lease) finishes or forgets the change.
          Tree now = open(pattern, c).snapshot();
          String where = pattern + ", client closed before write " + k + ": " + e.getMessage();
          switch (e.outcome()) {
            case NOT_APPLIED -> assertEquals(before, now, where);
            case COMMITTED -> assertEquals(after, now, where);
            default -> assertTrue(now.equals(before) || now.equals(after), where);
          }
          assertEquals(List.of(), open(pattern, c).check(), where);
        }
      }));
    }
    return tests;
  }

  @TestFactory
  List<DynamicTest> aDeadHolderIsTakenOverAfterItsLease() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      tests.add(DynamicTest.dynamicTest(pattern.toString(), () -> {
        Op op = OPS.get(7); // delete b: a multi-document change in every pattern
        MongoCollection<Document> c = MongoTestServer.get().freshCollection();
        SwitchableSender sender = new SwitchableSender();
        MongoTreeStore crashing = (MongoTreeStore) pattern.open(c,
            ServerCapabilities.probing(c).lease(300, 60_000).sender(sender));
        crashing.load(Tree.parse(FIXTURE));
        sender.target = StepwiseSender.crashingAfter(1);
        assertThrows(StepwiseSender.Crash.class, () -> op.run().accept(crashing));
        // The holder died holding the lock; a writer waits for its lease, takes the lock over
        // and finishes the delete before its own insert.
        RecordingLogger log = new RecordingLogger();
        MongoTreeStore next = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
            .log(log));
        long start = System.nanoTime();
        next.insert("z", Position.lastRoot());
        assertTrue(System.nanoTime() - start >= 200_000_000L, "waited for the lease");
        // One line each: the takeover, and the completion of the journal it left (and, on a
        // busy machine, the line that says a wait for the lock passed a second).
        log.lines.removeIf(l -> l.startsWith("INFO ") && l.contains("': waited "));
        assertEquals(2, log.lines.size(), log.lines.toString());
        assertTrue(log.lines.get(0).startsWith("WARN Tree '" + c.getNamespace().getFullName()
            + "': took the lock over") && log.lines.get(0).contains("300 ms")
            && log.lines.get(0).contains("delete 'b'"), log.lines.get(0));
        assertTrue(log.lines.get(1).startsWith("INFO Tree '") && log.lines.get(1).contains(
            "completing the journal of 'delete 'b''"), log.lines.get(1));
        InMemoryTreeStore expected = new InMemoryTreeStore();
        expected.load(Tree.parse(FIXTURE));
        op.run().accept(expected);
        expected.insert("z", Position.lastRoot());
        assertEquals(expected.snapshot(), next.snapshot());
        assertEquals(List.of(), next.check());
      }));
    }
    return tests;
  }
}
