package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Crashes every multi-document operation of every pattern after its 1st, 2nd, ..., k-th document
 * write — every k, not a sample — and recovers: afterwards the tree equals either the tree before
 * or the tree after the operation, {@code check()} is empty and no node is lost.
 *
 * <p>The crash is injected by an executor that applies each planned step document by document
 * (an {@code updateMany} becomes one {@code updateOne} per matching document, which is what the
 * server does too) and throws after the k-th document. Recovery is what the next user of the
 * collection does: a new store (another process) reads, or repairs.
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
      new Op("delete j", s -> s.delete("j")));

  /** Thrown by the executor to simulate a crash. */
  static final class Crash extends RuntimeException {
    Crash(int k) {
      super("injected crash after " + k + " document writes");
    }
  }

  /** Applies steps document by document, crashing after {@code limit} writes (-1: never). */
  static final class FaultyExecutor implements TreeLock.Executor {
    final int limit;
    int writes;

    FaultyExecutor(int limit) {
      this.limit = limit;
    }

    private void tick() {
      if (writes == limit) {
        throw new Crash(limit);
      }
      writes++;
    }

    @Override
    public BulkWriteResult execute(MongoCollection<Document> c, List<WriteModel<Document>> steps) {
      int inserted = 0;
      int deleted = 0;
      int modified = 0;
      for (WriteModel<Document> step : steps) {
        if (step instanceof InsertOneModel<Document> i) {
          tick();
          c.insertOne(i.getDocument());
          inserted++;
        } else if (step instanceof UpdateOneModel<Document> u) {
          for (Object id : ids(c, u.getFilter(), 1)) {
            tick();
            modified += (int) c.updateOne(and(id, u.getFilter()), u.getUpdate()).getModifiedCount();
          }
        } else if (step instanceof UpdateManyModel<Document> u) {
          for (Object id : ids(c, u.getFilter(), 0)) {
            tick();
            modified += (int) c.updateOne(and(id, u.getFilter()), u.getUpdate()).getModifiedCount();
          }
        } else if (step instanceof DeleteManyModel<Document> d) {
          for (Object id : ids(c, d.getFilter(), 0)) {
            tick();
            deleted += (int) c.deleteOne(and(id, d.getFilter())).getDeletedCount();
          }
        } else if (step instanceof DeleteOneModel<Document> d) {
          for (Object id : ids(c, d.getFilter(), 1)) {
            tick();
            deleted += (int) c.deleteOne(and(id, d.getFilter())).getDeletedCount();
          }
        } else {
          throw new AssertionError(step);
        }
      }
      return BulkWriteResult.acknowledged(inserted, modified, deleted, modified, List.of(),
          List.of());
    }

    private static List<Object> ids(MongoCollection<Document> c, Bson filter, int limit) {
      List<Object> ids = new ArrayList<>();
      for (Document d : c.find(filter).projection(Projections.include("_id")).limit(limit)) {
        ids.add(d.get("_id"));
      }
      return ids;
    }

    private static Bson and(Object id, Bson filter) {
      return Filters.and(Filters.eq("_id", id), filter);
    }
  }

  private static MongoTreeStore open(TreePattern pattern, MongoCollection<Document> c) {
    return (MongoTreeStore) pattern.open(c);
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
      tests.add(DynamicTest.dynamicTest(pattern + ": load", () -> crashLoadEverywhere(pattern)));
    }
    return tests;
  }

  private void crashEverywhere(TreePattern pattern, Op op, int inlineJournalBytes) {
    Tree before = Tree.parse(FIXTURE);
    Tree after = after(op);
    // A clean run counts the document writes of the operation.
    MongoCollection<Document> clean = MongoTestServer.get().freshCollection();
    MongoTreeStore counting = open(pattern, clean);
    counting.load(before);
    FaultyExecutor counter = new FaultyExecutor(-1);
    counting.lock.executor = counter;
    op.run().accept(counting);
    assertEquals(after, counting.snapshot());
    int total = counter.writes;
    assertTrue(total >= 1, "the operation writes something");
    for (int k = 0; k <= total; k++) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      MongoTreeStore crashing = open(pattern, c);
      crashing.load(before);
      crashing.lock.executor = new FaultyExecutor(k);
      crashing.lock.inlineJournalBytes = inlineJournalBytes;
      int crashAt = k;
      if (k < total) {
        assertThrows(Crash.class, () -> op.run().accept(crashing),
            () -> "crash after " + crashAt + " of " + total + " writes");
      } else {
        op.run().accept(crashing); // the executor never reaches the limit
      }
      // Another process opens the collection; its first read finishes the interrupted change.
      MongoTreeStore next = open(pattern, c);
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
      MongoTreeStore crashing = open(pattern, c);
      crashing.lock.executor = new FaultyExecutor(k);
      assertThrows(Crash.class, () -> crashing.load(tree));
      MongoTreeStore next = open(pattern, c);
      assertEquals(Tree.empty(), next.snapshot(), pattern + " load crashed after " + k);
      next.load(tree);
      assertEquals(tree, next.snapshot());
    }
  }

  @TestFactory
  List<DynamicTest> aDeadHolderIsTakenOverAfterItsLease() {
    List<DynamicTest> tests = new ArrayList<>();
    for (TreePattern pattern : TreePattern.values()) {
      tests.add(DynamicTest.dynamicTest(pattern.toString(), () -> {
        Op op = OPS.get(7); // delete b: a multi-document change in every pattern
        MongoCollection<Document> c = MongoTestServer.get().freshCollection();
        MongoTreeStore crashing = open(pattern, c);
        crashing.load(Tree.parse(FIXTURE));
        crashing.lock.executor = new FaultyExecutor(1);
        assertThrows(Crash.class, () -> op.run().accept(crashing));
        // As if the holder had died holding the lock: an owner whose lease has run out.
        c.withDocumentClass(BsonDocument.class).updateOne(
            Filters.eq("_id", TreeLock.LOCK_ID), Updates.combine(Updates.set("owner", "dead"),
                Updates.set("expires", new Date(System.currentTimeMillis() - 1))));
        MongoTreeStore next = open(pattern, c);
        next.insert("z", Position.lastRoot()); // a writer takes over and finishes the delete
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
