package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.InvalidMoveException;
import dev.arbor.core.LockLostException;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Lanes;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Changes in lanes ({@link LaneProtocol}): writers in disjoint subtrees of one tree run at the
 * same time; writers whose changes meet wait for each other; crossing moves held by different
 * writers never build a cycle; a stalled lane is taken over and its late writes change nothing.
 */
class LanesTest {
  private static final String FIXTURE = "r(a(b(c d(e f)) g(h)) i(j k) m(n(o p) q))";

  /**
   * Whether {@code batch} is the claim of a lane's marks after its head (one {@code updateMany}),
   * not a batch of its writes (whose last statement bounds it by the lane's deadline).
   */
  static boolean claimOfMarks(TreeLock.Batch batch) {
    return batch.statements().size() == 1 && batch.statements().get(0).model()
        instanceof com.mongodb.client.model.UpdateManyModel<?>;
  }

  /** Holds the first batch of writes sent while {@link #hold} is set, until released. */
  static final class HoldingSender implements TreeLock.Sender {
    volatile boolean hold;
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
      if (hold && !claimOfMarks(batch)) {
        hold = false;
        held.countDown();
        await(release);
      }
      return TreeLock.BULK.send(collection, batch);
    }
  }

  /** A single-document exchange with the lock's server ({@link TreeLock.Sender#exchange}). */
  @FunctionalInterface
  interface Exchange {
    BsonDocument exchange(MongoCollection<BsonDocument> collection,
        org.bson.conversions.Bson filter, org.bson.conversions.Bson update,
        com.mongodb.client.model.FindOneAndUpdateOptions options);
  }

  /** A sender whose batches go as they are and whose exchanges go through {@code exchange}. */
  static TreeLock.Sender exchanging(Exchange exchange) {
    return new TreeLock.Sender() {
      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> collection, TreeLock.Batch batch) {
        return TreeLock.BULK.send(collection, batch);
      }

      @Override
      public BsonDocument exchange(MongoCollection<BsonDocument> collection,
          org.bson.conversions.Bson filter, org.bson.conversions.Bson update,
          com.mongodb.client.model.FindOneAndUpdateOptions options) {
        return exchange.exchange(collection, filter, update, options);
      }
    };
  }

  /** A fresh collection holding {@link #FIXTURE} in {@code pattern}. */
  private static MongoCollection<Document> loaded(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    pattern.open(c).load(Tree.parse(FIXTURE));
    return c;
  }

  private static MongoTreeStore store(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender, long lease) {
    return store(pattern, c, sender, lease, true, v -> {});
  }

  private static MongoTreeStore store(TreePattern pattern, MongoCollection<Document> c,
      TreeLock.Sender sender, long lease, boolean keepAlive,
      java.util.function.LongConsumer onSettled) {
    return (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c).lease(lease, 20_000)
        .sender(sender).subtreeLocks(true).optimisticChanges(false).keepAlive(keepAlive)
        .onSettled(onSettled));
  }

  private static Class<?> outcome(Runnable call) {
    try {
      call.run();
      return null;
    } catch (TreeException e) {
      if (System.getProperty("lanes.debug") != null) {
        e.printStackTrace();
      }
      return e.getClass();
    }
  }

  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void writersInDisjointSubtreesRunAtTheSameTime(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    HoldingSender holding = new HoldingSender();
    MongoTreeStore a = store(pattern, c, holding, 30_000);
    MongoTreeStore b = store(pattern, c, TreeLock.BULK, 30_000);
    holding.hold = true;
    // A's move inside subtree a is held half-way: its marks stay on a's nodes
    CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
        () -> outcome(() -> a.move("e", Position.lastChildOf("h"))));
    assertTrue(holding.held.await(10, TimeUnit.SECONDS), "A reached its writes");
    // B, in the disjoint subtrees i and m, completes while A holds its change open
    long t0 = System.nanoTime();
    b.insert("x", Position.lastChildOf("j"));
    b.move("o", Position.firstChildOf("q"));
    b.delete("k");
    b.update("p", java.util.Map.of("seen", true));
    long bMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertFalse(runA.isDone(), "A is still held");
    assertTrue(bMillis < 10_000, "B did not wait for A: " + bMillis + " ms");
    // C, whose change meets A's (under the same parent h), waits for A
    CompletableFuture<Class<?>> runC = CompletableFuture.supplyAsync(
        () -> outcome(() -> b.insert("y", Position.lastChildOf("h"))));
    Thread.sleep(300);
    assertFalse(runC.isDone(), "C waits for A's marks");
    holding.release.countDown();
    assertEquals(null, runA.get(20, TimeUnit.SECONDS));
    assertEquals(null, runC.get(20, TimeUnit.SECONDS));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.insert("x", Position.lastChildOf("j"));
    reference.move("o", Position.firstChildOf("q"));
    reference.delete("k");
    reference.update("p", java.util.Map.of("seen", true));
    reference.move("e", Position.lastChildOf("h"));
    reference.insert("y", Position.lastChildOf("h"));
    assertEquals(reference.snapshot(), b.snapshot());
    assertEquals(List.of(), b.check());
    assertEquals(0, c.countDocuments(new Document(Lanes.T, new Document("$exists", true))),
        "no mark is left");
  }

  /**
   * A read of a subtree beside lanes elsewhere in the tree: it does not wait for a lane held
   * half-way in another subtree (the lane's gate logged its marks, none of which the read
   * depends on), and it does wait for one held half-way, its first step written, inside the
   * subtree it reads, whose result it then shows whole.
   */
  /**
   * A lane that meets at the gate a holder of the tree's lock that stalled (a paused process:
   * nothing renews its lease) joins the lock's queue, which takes the holder over once its lease
   * expired by the server's clock; the holder's late write changes nothing.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aLaneAtTheGateTakesAStalledHolderOfTheTreesLockOver(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    HoldingSender holding = new HoldingSender();
    MongoTreeStore holder = store(pattern, c, holding, 200, false, v -> {}); // a paused process
    holding.hold = true;
    CompletableFuture<Class<?>> top = CompletableFuture.supplyAsync(
        () -> outcome(() -> holder.insert("top", Position.lastRoot())));
    assertTrue(holding.held.await(10, TimeUnit.SECONDS), "the holder reached its writes");
    MongoTreeStore lane = store(pattern, c, TreeLock.BULK, 30_000);
    long t0 = System.nanoTime();
    assertEquals(null, outcome(() -> lane.insert("x", Position.lastChildOf("j"))));
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(lane.lock.takeovers.get() >= 1, "the stalled holder was taken over");
    assertTrue(millis < 10_000, "the lane waited " + millis + " ms");
    holding.release.countDown();
    assertEquals(LockLostException.class, top.get(20, TimeUnit.SECONDS));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.insert("x", Position.lastChildOf("j"));
    Tree now = lane.snapshot();
    assertEquals(reference.snapshot(), now);
    assertEquals(List.of(), lane.check());
    Thread.sleep(200); // anything the holder still sends lands now, or never
    assertEquals(now, lane.snapshot(), "the holder's late write changed the tree");
  }

  /**
   * A lane whose gate a holder of the tree's lock shut, with nobody in the lock's queue, waits
   * at the gate a moment and passes it once the holder is done, instead of queuing behind it and
   * shutting the gate to every lane after it until the queue drains: that convoy cost four
   * writers in disjoint subtrees 3.2 s of lock wait in 2 of 6 cold runs of {@code arbor scope}
   * (parent references; none in 6 with the wait). The change then runs in its lane: the lanes'
   * count of raises of the version grows by its gate and its release (before, it ran under the
   * tree's lock, which counts none).
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aLaneWaitsAtAGateShutByAHolderBeforeItQueues(TreePattern pattern) {
    MongoCollection<Document> c = loaded(pattern);
    MongoTreeStore other = (MongoTreeStore) pattern.open(c);
    TreeLock.Hold h = other.lock.acquire("a short change of another store");
    AtomicLong gates = new AtomicLong();
    java.util.concurrent.atomic.AtomicBoolean released =
        new java.util.concurrent.atomic.AtomicBoolean();
    Runnable done = () -> {
      if (released.compareAndSet(false, true)) {
        other.lock.release(h);
      }
    };
    // The holder is done as the lane comes back to the gate; a lane that queued instead is let
    // through after a second (its change then runs under the tree's lock).
    CompletableFuture.runAsync(done, CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS));
    TreeLock.Sender doneAfterTheGate = exchanging((coll, filter, update, options) -> {
      if (update.toBsonDocument().toJson().contains("arborLock.inflight.")
          && gates.incrementAndGet() == 2) {
        done.run();
      }
      return TreeLock.BULK.exchange(coll, filter, update, options);
    });
    MongoTreeStore lane = store(pattern, c, doneAfterTheGate, 30_000);
    long before = laneBumps(c);
    lane.insert("x", Position.lastChildOf("j"));
    assertTrue(gates.get() >= 2, "the lane came back to the gate instead of queuing");
    assertEquals(before + 2, laneBumps(c), "the change ran in its lane, not under the lock");
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.insert("x", Position.lastChildOf("j"));
    assertEquals(reference.snapshot(), lane.snapshot());
    assertEquals(List.of(), lane.check());
  }

  /** The lanes' count of raises of the tree's version, in its lock document. */
  private static long laneBumps(MongoCollection<Document> c) {
    Document lock = c.find(new Document("_id", new Document("arbor", "lock"))).first();
    Object state = lock == null ? null : lock.get("arborLock");
    return state instanceof Document d && d.get("laneBumps") instanceof Number n
        ? n.longValue() : 0;
  }

  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aReadOfASubtreeWaitsOnlyForLanesThatTouchIt(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicLong sent = new AtomicLong();
    // held after the journal and the first step (a move of parent references is one step: held
    // before it)
    long heldAt = pattern == TreePattern.PARENT_REFERENCES ? 1 : 3;
    TreeLock.Sender halfWay = (collection, batch) -> {
      if (!claimOfMarks(batch) && sent.incrementAndGet() == heldAt) {
        held.countDown();
        await(release);
      }
      return TreeLock.BULK.send(collection, batch);
    };
    MongoTreeStore a = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(30_000, 20_000).sender(halfWay).batchStatements(1).subtreeLocks(true)
        .optimisticChanges(false));
    MongoTreeStore reader = store(pattern, c, TreeLock.BULK, 30_000);
    // A moves b (with its subtree c, d, e, f) from a to under g: held half-way
    CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
        () -> outcome(() -> a.move("b", Position.lastChildOf("g"))));
    try {
      assertTrue(held.await(10, TimeUnit.SECONDS), "A is held half-way");
      // a subtree A does not touch: read at once, as often as asked
      for (int i = 0; i < 5; i++) {
        assertEquals(List.of("n", "o", "p", "q"), reader.descendants("m"));
        assertEquals(List.of("j", "k"), reader.children("i"));
        assertEquals(Tree.parse("i(j k)"), reader.subtree("i", Integer.MAX_VALUE));
        assertEquals(List.of("j", "k"), reader.childNodes("i").stream().map(Node::id).toList());
        assertEquals(List.of("n", "o", "p", "q"), reader.descendantNodes("m", Integer.MAX_VALUE)
            .stream().map(Node::id).toList());
        assertEquals(List.of("r", "m", "n"), reader.ancestors("o"));
        assertEquals(List.of("r", "i"), reader.ancestorNodes("k").stream().map(Node::id).toList());
      }
      // the subtree A changes, and the path up from a node A moves: the reads wait for A
      CompletableFuture<List<String>> inside = CompletableFuture.supplyAsync(
          () -> reader.descendants("a"));
      CompletableFuture<List<String>> up = CompletableFuture.supplyAsync(
          () -> reader.ancestors("e"));
      Thread.sleep(300);
      assertFalse(inside.isDone(), "a read of the subtree A changes waits for A");
      assertFalse(up.isDone(), "a read of the ancestors of a node A moves waits for A");
      release.countDown();
      assertEquals(null, runA.get(20, TimeUnit.SECONDS));
      assertEquals(List.of("g", "h", "b", "c", "d", "e", "f"), inside.get(20, TimeUnit.SECONDS));
      assertEquals(List.of("r", "a", "g", "b", "d"), up.get(20, TimeUnit.SECONDS));
    } finally {
      release.countDown();
    }
    assertEquals(List.of(), reader.check());
  }

  /**
   * A lane paused after the claim of its head, at the claim of its other marks, past its lease:
   * another writer takes the head over and completes its own change; the paused claim, bounded by
   * the lane's deadline, then marks nothing, and the change is made again in a new lane. (The
   * claim goes through the lock's {@code Sender}, as every other command of a lane, so that a
   * test can pause it there.)
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aLanePausedAtTheClaimOfItsOtherMarksIsTakenOverAndMarksNothingLate(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    CountDownLatch paused = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    TreeLock.Sender pausing = (collection, batch) -> {
      if (paused.getCount() > 0 && claimOfMarks(batch)) {
        paused.countDown();
        await(resume);
      }
      return TreeLock.BULK.send(collection, batch);
    };
    MongoTreeStore a = store(pattern, c, pausing, 300, false, v -> {}); // a paused process
    MongoTreeStore b = store(pattern, c, TreeLock.BULK, 300);
    CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
        () -> outcome(() -> a.move("e", Position.lastChildOf("h"))));
    assertTrue(paused.await(10, TimeUnit.SECONDS), "A paused at the claim of its other marks");
    b.insert("x", Position.lastChildOf("d")); // meets A's head d: waits out A's lease
    assertFalse(runA.isDone(), "A is still paused");
    resume.countDown();
    assertEquals(null, runA.get(30, TimeUnit.SECONDS));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.insert("x", Position.lastChildOf("d"));
    reference.move("e", Position.lastChildOf("h"));
    assertEquals(reference.snapshot(), b.snapshot());
    assertEquals(List.of(), b.check());
    assertEquals(0, c.countDocuments(new Document(Lanes.T, new Document("$exists", true))),
        "no mark is left");
  }

  /**
   * The two moves that, interleaved, would make a cycle (d under i, i under e, with e under d),
   * by writers in the two subtrees, again and again: one of them is refused, never both applied.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void crossingMovesBetweenSubtreesNeverBuildACycle(TreePattern pattern) throws Exception {
    for (int round = 0; round < 12; round++) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      pattern.open(c).load(Tree.parse(FIXTURE));
      AtomicLong va = new AtomicLong(-1);
      AtomicLong vb = new AtomicLong(-1);
      MongoTreeStore a = store(pattern, c, TreeLock.BULK, 30_000, true, va::set);
      MongoTreeStore b = store(pattern, c, TreeLock.BULK, 30_000, true, vb::set);
      CountDownLatch go = new CountDownLatch(1);
      Consumer<TreeStore> opA = s -> s.move("d", Position.lastChildOf("i"));
      Consumer<TreeStore> opB = s -> s.move("i", Position.lastChildOf("e"));
      CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(() -> {
        await(go);
        return outcome(() -> opA.accept(a));
      });
      CompletableFuture<Class<?>> runB = CompletableFuture.supplyAsync(() -> {
        await(go);
        return outcome(() -> opB.accept(b));
      });
      go.countDown();
      Class<?> oa = runA.get(30, TimeUnit.SECONDS);
      Class<?> ob = runB.get(30, TimeUnit.SECONDS);
      assertTrue(oa == null || ob == null, "one of them applies");
      assertTrue(oa == InvalidMoveException.class || ob == InvalidMoveException.class,
          "the other is refused: " + oa + ", " + ob);
      assertNotEquals(va.get(), vb.get());
      InMemoryTreeStore reference = new InMemoryTreeStore();
      reference.load(Tree.parse(FIXTURE));
      boolean aFirst = va.get() < vb.get();
      assertEquals(aFirst ? oa : ob, outcome(() -> (aFirst ? opA : opB).accept(reference)));
      assertEquals(aFirst ? ob : oa, outcome(() -> (aFirst ? opB : opA).accept(reference)));
      assertEquals(reference.snapshot(), a.snapshot(), "round " + round);
      assertEquals(List.of(), a.check(), "round " + round);
    }
  }

  /**
   * A writer whose change holds its marks, stalled before its writes past its lease (a paused
   * process: nothing renews): another writer who needs one of its marks takes its lane over,
   * and the stalled writer's writes, sent late, change nothing.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aStalledLaneIsTakenOverAndItsLateWritesChangeNothing(TreePattern pattern)
      throws Exception {
    List<Consumer<TreeStore>> changesOfA = List.of(
        s -> s.insert("x", Position.lastChildOf("d")),
        s -> s.move("d", Position.lastChildOf("i")),
        s -> s.delete("b"));
    for (Consumer<TreeStore> opA : changesOfA) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection();
      pattern.open(c).load(Tree.parse(FIXTURE));
      HoldingSender holding = new HoldingSender();
      AtomicLong va = new AtomicLong(-1);
      AtomicLong vb = new AtomicLong(-1);
      MongoTreeStore a = store(pattern, c, holding, 100, false, va::set); // a paused process
      MongoTreeStore b = store(pattern, c, TreeLock.BULK, 30_000, true, vb::set);
      holding.hold = true;
      CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
          () -> outcome(() -> opA.accept(a)));
      assertTrue(holding.held.await(10, TimeUnit.SECONDS));
      Consumer<TreeStore> opB = s -> s.insert("y", Position.lastChildOf("d")); // meets A
      Class<?> ob = outcome(() -> opB.accept(b)); // meets A's marks, waits out its lease
      assertTrue(b.lanes.takeovers.get() >= 1, "B took A's lane over");
      holding.release.countDown();
      Class<?> oa = runA.get(20, TimeUnit.SECONDS);
      InMemoryTreeStore reference = new InMemoryTreeStore();
      reference.load(Tree.parse(FIXTURE));
      if (oa != LockLostException.class && va.get() < vb.get()) {
        assertEquals(oa, outcome(() -> opA.accept(reference)));
      }
      String where = "A's change " + changesOfA.indexOf(opA) + ": A " + oa + " at " + va
          + ", B " + ob + " at " + vb;
      assertEquals(ob, outcome(() -> opB.accept(reference)), where);
      if (oa != LockLostException.class && va.get() > vb.get()) {
        assertEquals(oa, outcome(() -> opA.accept(reference)));
      }
      assertEquals(reference.snapshot(), b.snapshot());
      assertEquals(List.of(), b.check());
      Tree now = b.snapshot();
      Thread.sleep(200); // anything A still sends lands now, or never
      assertEquals(now, b.snapshot(), "A's late writes changed the tree");
      assertEquals(0, c.countDocuments(new Document(Lanes.T, new Document("$exists", true))),
          "no mark is left");
    }
  }

  /**
   * A lane's change of one update (no journal) whose command the server ran past the lane's
   * lease, after the lane was taken over and the same document rewritten by the writer who took
   * it: the command's own answer tells that its step matched nothing (a step that did not run in
   * time never will: the command has run), so the caller is told {@code NOT_APPLIED}. Before,
   * the writer read the document to tell, found it rewritten since, and said {@code UNKNOWN}.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aLateStepThatMatchedNothingIsToldNotAppliedThoughItsDocumentWasRewritten(
      TreePattern pattern) throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    HoldingSender holding = new HoldingSender();
    MongoTreeStore a = store(pattern, c, holding, 100, false, v -> {}); // a paused process
    MongoTreeStore b = store(pattern, c, TreeLock.BULK, 30_000);
    holding.hold = true;
    CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
        () -> outcome(() -> a.update("c", java.util.Map.of("by", "a"))));
    assertTrue(holding.held.await(10, TimeUnit.SECONDS), "A reached its write");
    b.update("c", java.util.Map.of("by", "b")); // meets A's marks, waits out its lease
    assertTrue(b.lanes.takeovers.get() >= 1, "B took A's lane over");
    holding.release.countDown();
    assertEquals(LockLostException.class, runA.get(20, TimeUnit.SECONDS),
        "A's step ran late and matched nothing");
    assertEquals(java.util.Map.of("by", "b"), b.find("c").orElseThrow().attributes());
    assertEquals(List.of(), b.check());
  }

  /**
   * A stream that runs while a lane is half-way through its writes (its journal and first step
   * sent, its second step held) never ends as if it had read one tree: it delivers the tree before
   * or after the move, or throws {@link dev.arbor.core.TreeChangedException}.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"NESTED_SETS", "PARENT_REFERENCES"},
      mode = EnumSource.Mode.EXCLUDE) // a move of parent references is one document's update
  void aStreamNeverEndsWithHalfOfALane(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    Tree before = pattern.open(c).snapshot();
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicLong sent = new AtomicLong();
    TreeLock.Sender secondHeld = (collection, batch) -> {
      if (!claimOfMarks(batch) && sent.incrementAndGet() == 3) {
        held.countDown();
        await(release);
      }
      return TreeLock.BULK.send(collection, batch);
    };
    MongoTreeStore a = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(30_000, 20_000).sender(secondHeld).batchStatements(1).subtreeLocks(true)
            .optimisticChanges(false));
    MongoTreeStore b = store(pattern, c, TreeLock.BULK, 30_000);
    CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
        () -> outcome(() -> a.move("a", Position.lastChildOf("j"))));
    try {
      assertTrue(held.await(10, TimeUnit.SECONDS), "A sent its journal and first step");
      List<dev.arbor.core.Node> streamed = null;
      try (java.util.stream.Stream<dev.arbor.core.Node> s = b.entries()) {
        streamed = s.toList();
      } catch (dev.arbor.core.TreeChangedException expected) {
        // told, not fooled
      }
      InMemoryTreeStore after = new InMemoryTreeStore();
      after.load(before);
      after.move("a", Position.lastChildOf("j"));
      assertTrue(streamed == null || streamed.equals(before.entries())
          || streamed.equals(after.snapshot().entries()),
          "the stream delivered half of A's move: " + streamed);
    } finally {
      release.countDown();
    }
    assertEquals(null, runA.get(20, TimeUnit.SECONDS));
  }

  /**
   * A step of a lane's journal that the server refuses after an earlier one ran (here a unique
   * index of the application's on the step marks: a step that writes several documents is
   * refused at its second) leaves the tree stuck, as under the tree's lock: nothing reads or
   * changes it, and once the cause is removed repair() completes the lane's journal and clears
   * its marks.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"ARRAY_OF_ANCESTORS", "MATERIALIZED_PATHS"})
  void aLaneStepTheServerRefusesLeavesTheTreeStuckUntilRepair(TreePattern pattern) {
    MongoCollection<Document> c = loaded(pattern);
    c.updateMany(com.mongodb.client.model.Filters.exists("_id.arbor", false),
        com.mongodb.client.model.Updates.unset(dev.arbor.mongo.internal.protocol.Step.MARK));
    c.createIndex(new Document(dev.arbor.mongo.internal.protocol.Step.MARK, 1),
        new com.mongodb.client.model.IndexOptions().unique(true).sparse(true));
    // writes stop at the first error, as MongoDB's do
    MongoTreeStore a = store(pattern, c, new StepwiseSender(written -> {}), 30_000);
    TreeException first = org.junit.jupiter.api.Assertions.assertThrows(TreeException.class,
        () -> a.move("a", Position.lastChildOf("j")));
    assertTrue(first.getMessage().contains("stuck"), first.getMessage());
    MongoTreeStore other = store(pattern, c, new StepwiseSender(written -> {}), 30_000);
    TreeException stuck = org.junit.jupiter.api.Assertions.assertThrows(TreeException.class,
        other::snapshot);
    assertTrue(stuck.getMessage().contains("move 'a'") && stuck.getMessage().contains(
        "repair()"), stuck.getMessage());
    org.junit.jupiter.api.Assertions.assertThrows(TreeException.class,
        () -> other.insert("x", Position.lastChildOf("q")));
    assertFalse(other.repair().isEmpty(), "repair() says what still stops the change");
    c.dropIndex(new Document(dev.arbor.mongo.internal.protocol.Step.MARK, 1));
    assertEquals(List.of(), other.repair());
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.move("a", Position.lastChildOf("j"));
    assertEquals(reference.snapshot(), other.snapshot());
    assertEquals(List.of(), other.check());
    assertEquals(0, c.countDocuments(new Document(Lanes.T, new Document("$exists", true))),
        "no mark is left");
  }

  /**
   * A lane stalled right after its gate, past its lease, is taken over by a writer whose move
   * makes the stalled one's a cycle. The stalled writer, resumed, must not refuse its move at its
   * own (earlier) version on what it read after the other's change: it plans again, and its
   * refusal takes effect after the other's change.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void aVerdictReadAfterTheLaneWasTakenOverDoesNotStand(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    CountDownLatch gated = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger exchanges = new java.util.concurrent.atomic
        .AtomicInteger();
    TreeLock.Sender stallAfterGate = exchanging((coll, filter, update, options) -> {
      BsonDocument r = TreeLock.BULK.exchange(coll, filter, update, options);
      if (exchanges.incrementAndGet() == 2) { // the claim of its head, then its gate
        gated.countDown();
        await(resume);
      }
      return r;
    });
    AtomicLong va = new AtomicLong(-1);
    AtomicLong vb = new AtomicLong(-1);
    MongoTreeStore a = store(pattern, c, stallAfterGate, 100, false, va::set); // a paused process
    MongoTreeStore b = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(30_000, 20_000).onSettled(vb::set));
    CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
        () -> outcome(() -> a.move("c", Position.lastChildOf("j")))); // a leaf: all its marks
    try {
      assertTrue(gated.await(10, TimeUnit.SECONDS), "A passed its gate");
      assertEquals(null, outcome(() -> b.move("j", Position.lastChildOf("c"))),
          "B's move, made while A stalled (B takes A's lane over)");
    } finally {
      resume.countDown();
    }
    Class<?> oa = runA.get(20, TimeUnit.SECONDS);
    assertEquals(InvalidMoveException.class, oa, "A's move, after B's, makes a cycle");
    assertTrue(va.get() > vb.get(), "A's refusal takes effect after B's move: A at " + va
        + ", B at " + vb);
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.move("j", Position.lastChildOf("c"));
    assertEquals(reference.snapshot(), b.snapshot());
    assertEquals(List.of(), b.check());
  }

  /**
   * With the default options: a store whose optimistic change found the tree moved by another
   * writer runs its next change in a lane, and while that change is held half-way, a writer of
   * another subtree (default options too) completes its changes.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void defaultStoresThatMeetGoToLanes(TreePattern pattern) throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    HoldingSender holding = new HoldingSender();
    MongoTreeStore a = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .sender(holding));
    MongoTreeStore b = (MongoTreeStore) pattern.open(c);
    a.snapshot(); // A knows the tree's version
    b.insert("x", Position.lastChildOf("j")); // and B moves it: A's next try meets another writer
    a.update("c", java.util.Map.of("seen", 1)); // planned on a stale version: then in a lane
    holding.hold = true;
    CompletableFuture<Class<?>> runA = CompletableFuture.supplyAsync(
        () -> outcome(() -> a.move("e", Position.lastChildOf("h"))));
    try {
      assertTrue(holding.held.await(10, TimeUnit.SECONDS), "A reached its writes");
      long t0 = System.nanoTime();
      b.insert("y", Position.lastChildOf("j"));
      b.move("o", Position.firstChildOf("q"));
      long bMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertFalse(runA.isDone(), "A is still held");
      assertTrue(bMillis < 10_000, "B did not wait for A: " + bMillis + " ms");
    } finally {
      holding.release.countDown();
    }
    assertEquals(null, runA.get(20, TimeUnit.SECONDS));
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.insert("x", Position.lastChildOf("j"));
    reference.update("c", java.util.Map.of("seen", 1));
    reference.insert("y", Position.lastChildOf("j"));
    reference.move("o", Position.firstChildOf("q"));
    reference.move("e", Position.lastChildOf("h"));
    assertEquals(reference.snapshot(), b.snapshot());
    assertEquals(List.of(), b.check());
  }

  /**
   * Two lanes insert the same new id under two parents at once: their footprints (the two
   * parents) do not meet, and each planned on a tree without the id. The one whose insert
   * command comes second must be told {@link dev.arbor.core.DuplicateNodeException}, and the node
   * has one parent. (Found by a trial: in child references, whose insert is journaled, the
   * second lane took the duplicate key for its own earlier sending and pushed the id into its
   * parent's children too: the node under two parents.)
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = "NESTED_SETS", mode = EnumSource.Mode.EXCLUDE)
  void twoLanesInsertingOneNewIdUnderTwoParentsInsertItOnce(TreePattern pattern)
      throws Exception {
    MongoCollection<Document> c = loaded(pattern);
    MongoTreeStore b = store(pattern, c, TreeLock.BULK, 30_000);
    java.util.concurrent.atomic.AtomicBoolean fired = new java.util.concurrent.atomic
        .AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<Class<?>> second = new java.util.concurrent
        .atomic.AtomicReference<>();
    TreeLock.Sender first = (coll, batch) -> {
      boolean insertsX = batch.statements().stream().anyMatch(s -> s.model()
          instanceof com.mongodb.client.model.InsertOneModel<org.bson.BsonDocument> i
          && new org.bson.BsonString("x").equals(i.getDocument().get("_id")));
      if (insertsX && !fired.getAndSet(true)) {
        // the other lane plans, inserts and returns before this command is sent
        Thread t = new Thread(() -> second.set(outcome(
            () -> b.insert("x", Position.lastChildOf("k")))));
        t.start();
        try {
          t.join(30_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return TreeLock.BULK.send(coll, batch);
    };
    MongoTreeStore a = store(pattern, c, first, 30_000);
    Class<?> outcomeOfA = outcome(() -> a.insert("x", Position.lastChildOf("h")));
    assertTrue(fired.get(), "the other insert ran in between");
    assertEquals(null, second.get(), "the insert that came first returned");
    assertEquals(dev.arbor.core.DuplicateNodeException.class, outcomeOfA);
    InMemoryTreeStore reference = new InMemoryTreeStore();
    reference.load(Tree.parse(FIXTURE));
    reference.insert("x", Position.lastChildOf("k"));
    assertEquals(reference.snapshot(), a.snapshot());
    assertEquals(List.of(), a.check());
  }

  /** Waits for {@code latch}, at most 30 s (a test that fails before releasing it ends). */
  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
