package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.ChangeInterruptedException.Outcome;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The caller who takes the tree's lock over completes the journal its stopped holder left, and
 * ends that replay with a fence that clears the journal and records it done. That fence's
 * answer is lost and it is sent again; the first sending reaches the server late, after the caller
 * went on to its own change and committed that change's journal. Matched by its owner alone, the
 * late fence cleared the caller's own pending journal; the caller then paused past its lease, the
 * next caller found no journal to complete, and the change — committed, half written or not at
 * all — was told applied (the first caller's settling reads its commit as completed). The fence
 * now clears only the journal it completed, and a sending that finds that journal cleared already
 * (by an earlier sending whose answer was lost) counts as done.
 */
class LateJournalCompletionTest {
  private static final Tree FIXTURE = Tree.parse("a(b(c d) e) f(g) h");
  private static final long LEASE = 150;

  /** Under the tree's lock: every pattern, on both server behaviours. */
  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void aLateCompletionNeverClearsTheNextJournalOfItsCaller(TreePattern pattern) {
    for (boolean ordered : new boolean[] {false, true}) {
      run(pattern, ordered, false);
    }
  }

  /**
   * The completion's first sending lands and only its answer is lost: the one sent again finds
   * the journal cleared and the holder still the caller, which is the completion done, not the
   * lock lost nor a batch to send again for ever.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"NESTED_SETS", "MATERIALIZED_PATHS"})
  void aCompletionWhoseAnswerWasLostIsDoneWhenSentAgain(TreePattern pattern) {
    for (boolean ordered : new boolean[] {false, true}) {
      run(pattern, ordered, true);
    }
  }

  /**
   * A journal left pending by an earlier build, whose lock document names no writer's token for
   * it: the replay's completion still clears it and records its writer done, so that the holder,
   * once it goes on, is told its change applied.
   */
  @ParameterizedTest
  @EnumSource(value = TreePattern.class, names = {"NESTED_SETS", "PARENT_REFERENCES"})
  void aJournalAnEarlierBuildLeftPendingIsCompleted(TreePattern pattern) {
    for (boolean ordered : new boolean[] {false, true}) {
      String where = pattern + ", ordered " + ordered;
      MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
      pattern.open(c).load(FIXTURE);
      StoppedHolder h = StoppedHolder.deleting(pattern, c, capabilities(c), "b", where);
      c.updateOne(new Document("_id", new Document("arbor", "lock")),
          new Document("$unset", new Document(TreeLock.STATE + ".opt", "")));
      try {
        pattern.open(c, capabilities(c)).delete("a"); // takes over, completes the journal
      } finally {
        h.resume();
      }
      assertTrue(!(h.outcome.get() instanceof RuntimeException), "the holder's delete, completed"
          + " by the caller who took it over: " + h.outcome.get() + ", " + where);
      InMemoryTreeStore expected = new InMemoryTreeStore();
      expected.load(FIXTURE);
      expected.delete("a");
      assertEquals(expected.snapshot(), pattern.open(c).snapshot(), where);
      assertEquals(List.of(), pattern.open(c).check(), where);
    }
  }

  /** Whether {@code update} is the fence that ends a replay: it clears the journal, keeps the lock. */
  static boolean completion(Bson update) {
    BsonDocument d = update.toBsonDocument();
    return d.containsKey("$push") && !d.containsKey("$inc")
        && d.getDocument("$unset", new BsonDocument()).containsKey(TreeLock.JOURNAL);
  }

  private static boolean carriesCompletion(TreeLock.Batch batch) {
    return batch.statements().stream().anyMatch(s -> s.model()
        instanceof UpdateOneModel<BsonDocument> u && u.getUpdate() != null
        && completion(u.getUpdate()));
  }

  /**
   * A holder {@code H} deletes {@code b} and stops right after its commit; caller {@code A}
   * deletes {@code a}, taking the lock over and completing H's journal first; the replay's last
   * fence is lost on its way (or, {@code landed}, only its answer); after A's own commit the
   * first sending arrives, A pauses past its lease, and caller {@code B} takes the lock over.
   */
  private static void run(TreePattern pattern, boolean ordered, boolean landed) {
    String where = pattern + ", ordered " + ordered + (landed ? ", landed" : "");
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    pattern.open(c).load(FIXTURE);
    StoppedHolder h = StoppedHolder.deleting(pattern, c, capabilities(c), "b", where);
    TreeStore other = pattern.open(c, capabilities(c));
    AtomicReference<TreeLock.Batch> late = new AtomicReference<>();
    AtomicBoolean delivered = new AtomicBoolean();
    TreeLock.Sender sender = new LandedHookSender() {
      /** After this caller's own commit: the completion's first sending arrives, then a pause. */
      @Override
      void landed(MongoCollection<BsonDocument> coll, Bson update) {
        if (late.get() == null || delivered.get() || !StoppedHolder.commits(update)) {
          return;
        }
        delivered.set(true);
        if (!landed) {
          try {
            TreeLock.BULK.send(coll, late.get());
          } catch (MongoException e) {
            // refused: the journal it completed is no longer pending
          }
        }
        // this caller pauses (its thread is here) and the other takes the lock over once its
        // lease, grown by its own takeover, has run out
        other.insert("x", Position.lastChildOf("f"));
      }

      @Override
      void before(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        if (late.get() == null && carriesCompletion(batch)) {
          late.set(batch);
          if (landed) {
            TreeLock.BULK.send(coll, batch);
            throw new MongoSocketReadException("injected: the answer was lost",
                new ServerAddress("127.0.0.1", 1));
          }
          throw new MongoSocketWriteException("injected: the connection was cut after the"
              + " command left", new ServerAddress("127.0.0.1", 1), null);
        }
      }
    };
    TreeStore caller = pattern.open(c, capabilities(c).sender(sender));
    Outcome outcome = null;
    boolean returned = false;
    try {
      caller.delete("a");
      returned = true;
    } catch (ChangeInterruptedException e) {
      outcome = e.outcome();
    } finally {
      h.resume();
    }
    assertTrue(late.get() != null, "the replay's completion was lost: " + where);
    assertTrue(delivered.get(), "the caller committed after it: " + where);
    if (h.outcome.get() instanceof ChangeInterruptedException e) {
      assertNotEquals(Outcome.NOT_APPLIED, e.outcome(), "the holder's delete: " + where);
    }
    Tree stored = pattern.open(c).snapshot();
    assertEquals(List.of(), pattern.open(c).check(), where);
    assertTrue(!stored.contains("a") || !returned && outcome != Outcome.COMMITTED,
        "the delete of a " + (returned ? "returned" : "said " + outcome) + ", yet a is in the"
        + " tree: " + where);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(FIXTURE);
    expected.delete("b");
    if (!stored.contains("a")) {
      expected.delete("a");
    }
    expected.insert("x", Position.lastChildOf("f"));
    assertEquals(expected.snapshot(), stored, where);
  }

  private static ServerCapabilities capabilities(MongoCollection<Document> c) {
    return ServerCapabilities.probing(c).lease(LEASE, 20_000).keepAlive(false)
        .subtreeLocks(false);
  }
}
