package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Deletion;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.Date;
import java.util.List;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An optimistic change's claim of the lock whose first sending is delivered late: the claim
 * matches the free lock at the version it claims whenever it arrives (nothing bounds it in
 * time), so once its writer has concluded that it never landed and planned the change again,
 * the late sending must find that version gone.
 *
 * <p>Found by writer processes on MongoDB's path (10 ms leases, 15 % faults): a leaf delete told
 * {@code NodeNotFoundException} (nothing written) whose node was gone. Its claim's first
 * sending was cut off and delivered late; the sending after it was refused (readers waited in
 * the lock's queue), the lock document still showed the version claimed and no journal of it,
 * and the writer planned the delete again in a lane. The late sending then took the lock with
 * the delete's journal, a caller who took the stopped claim over completed it, and the lane
 * found the node gone.
 */
class LateClaimTest {
  private static final Bson LOCK = Filters.eq("_id", new Document("arbor", "lock"));

  /**
   * Loses the answer of the change's first lead (claim) at once, with a reader queued in the
   * lock document so that the lead sent again is refused, and delivers the first sending at the
   * writer's next command after that refusal (the reader gone by then).
   */
  private static final class LateFirstClaim implements TreeLock.Sender {
    volatile boolean armed;
    private int leads;
    private @Nullable Runnable late;

    private <T> T lead(MongoCollection<BsonDocument> c, Supplier<T> sending) {
      if (!armed) {
        return sending.get();
      }
      if (late != null && leads >= 2) {
        deliverLate(c);
        return sending.get();
      }
      if (leads++ == 0) {
        // a reader in the lock's queue, gone from it in 150 ms
        c.updateOne(LOCK, Updates.set("arborLock.waiting.reader",
            new Document("at", new Date()).append("r", true).append("l", 150)));
        late = () -> {
          try {
            sending.get();
          } catch (RuntimeException e) {
            // refused: it did not land
          }
        };
        throw new MongoSocketReadException("injected: cut off after the command left; it"
            + " arrives later", new ServerAddress("127.0.0.1", 1));
      }
      return sending.get();
    }

    /** Delivers the first sending, if it was not yet, the reader gone from the queue. */
    void deliverLate(MongoCollection<?> c) {
      Runnable l = late;
      late = null;
      armed = false;
      if (l != null) {
        c.updateOne(LOCK, Updates.unset("arborLock.waiting.reader"));
        l.run();
      }
    }

    @Override
    public BulkWriteResult send(MongoCollection<BsonDocument> c, TreeLock.Batch batch) {
      return lead(c, () -> TreeLock.BULK.send(c, batch));
    }

    @Override
    public BsonDocument fence(MongoCollection<BsonDocument> c, Bson filter, Bson update) {
      return lead(c, () -> TreeLock.BULK.fence(c, filter, update));
    }

    @Override
    public @Nullable BsonDocument exchange(MongoCollection<BsonDocument> c, Bson filter,
        Bson update, FindOneAndUpdateOptions options) {
      return lead(c, () -> TreeLock.BULK.exchange(c, filter, update, options));
    }
  }

  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void aClaimDeliveredLateAfterItsRefusalDoesNotLand(TreePattern pattern, boolean ordered) {
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    Tree fixture = Tree.parse("a(b(c d) e)");
    LateFirstClaim sender = new LateFirstClaim();
    MongoTreeStore store = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(200, 20_000).sender(sender));
    assertEquals(ordered, store.lock.ordered(), "the server's behaviour");
    store.load(fixture);
    store.size(); // sees the tree quiet: the delete claims the lock optimistically
    sender.armed = true;
    String told = "returned";
    try {
      store.delete("d", Deletion.LEAF_ONLY);
    } catch (ChangeInterruptedException e) {
      assertEquals(ChangeInterruptedException.Outcome.UNKNOWN, e.outcome(), e.toString());
      told = e.toString();
    } catch (TreeException e) {
      told = e.toString(); // a refusal: the tree must be as before
    }
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    if (!told.startsWith("dev.arbor.core.NodeNotFoundException")) {
      expected.delete("d", Deletion.LEAF_ONLY);
    }
    sender.deliverLate(c); // if the writer sent nothing after the refusal: after the call
    MongoTreeStore reader = (MongoTreeStore) pattern.open(c);
    assertEquals(expected.snapshot(), reader.snapshot(), "the delete, told " + told);
    assertEquals(List.of(), reader.check());
  }
}
