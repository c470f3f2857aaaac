package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.LockDocument;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * On MongoDB a batch of a change under the tree's lock is led by a fence that renews the lease,
 * and is given the time limit of that lease: a caller who takes the lock over after the lease
 * the lock document holds knows the batch cannot still run. A holder whose batch ran out of its
 * time renews the lease for twice as long and sends its batches again with the longer limit.
 * The first sending of an earlier batch, led by a fence with the shorter lease, whose answer was
 * lost, reached the server after that: the lock document then held the shorter lease while a
 * batch with the longer time limit could still be running, and a caller could have taken the
 * lock over under it. A fence now only ever lengthens the lease of a hold ({@code $max}).
 */
class LateLeaseFenceTest {
  private static final long LEASE = 300;

  @Test
  void aLateFenceNeverShortensTheLeaseOfALaterBatch() {
    MongoCollection<Document> c = MongoTestServer.ordered().freshCollection();
    Tree fixture = Tree.parse("a(b c d e f) g(h i j) k");
    TreePattern.NESTED_SETS.open(c).load(fixture);
    AtomicReference<TreeLock.Batch> late = new AtomicReference<>();
    List<Long> leases = new ArrayList<>();
    List<String> stages = new ArrayList<>();
    TreeLock.Sender sender = new TreeLock.Sender() {
      private boolean timedOut;
      private boolean delivered;

      @Override
      public BulkWriteResult send(MongoCollection<BsonDocument> coll, TreeLock.Batch batch) {
        long lease = leaseSet(batch);
        if (lease > 0 && late.get() == null) {
          late.set(batch); // its answer is lost; the command arrives later
          stages.add("lost " + lease);
          throw new MongoSocketWriteException("injected: the connection was cut after the"
              + " command left", new ServerAddress("127.0.0.1", 1), null);
        }
        if (lease > 0 && !timedOut) {
          timedOut = true; // this batch ran out of its time: the lease grows
          stages.add("timed out " + lease);
          throw new MongoOperationTimeoutException("injected: the batch ran out of its time");
        }
        BulkWriteResult r = TreeLock.BULK.send(coll, batch);
        if (lease > 0 && timedOut && !delivered) {
          delivered = true;
          stages.add("sent " + lease);
          try {
            TreeLock.BULK.send(coll, late.get());
          } catch (MongoException e) {
            // refused: nothing to say here
          }
          BsonDocument lock = coll.find(new BsonDocument("_id", TreeLock.LOCK_ID)).first();
          leases.add(lease);
          leases.add(lock == null ? -1 : lock.getDocument(TreeLock.STATE)
              .getNumber("lease").longValue());
        }
        return r;
      }
    };
    var store = TreePattern.NESTED_SETS.open(c, ServerCapabilities.probing(c)
        .lease(LEASE, 20_000).keepAlive(false).optimisticChanges(false).batchStatements(2)
        .sender(sender));
    store.move("k", Position.firstChildOf("a"));
    assertEquals(2, leases.size(), "the late fence was delivered after the grown lease's batch: "
        + stages);
    assertTrue(leases.get(1) >= leases.get(0), "a late fence shortened the lease to "
        + leases.get(1) + " ms while a batch given the time limit of " + leases.get(0)
        + " ms could still run: " + stages);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.move("k", Position.firstChildOf("a"));
    assertEquals(expected.snapshot(), TreePattern.NESTED_SETS.open(c).snapshot());
    assertEquals(List.of(), TreePattern.NESTED_SETS.open(c).check());
  }

  /** The lease a batch's leading fence sets, or 0 (none, or a statement that takes the lock). */
  private static long leaseSet(TreeLock.Batch batch) {
    if (!(batch.statements().get(0).model() instanceof UpdateOneModel<BsonDocument> u)
        || u.getUpdate() == null) {
      return 0;
    }
    BsonDocument d = u.getUpdate().toBsonDocument();
    for (String op : List.of("$max", "$set")) {
      BsonDocument fields = d.getDocument(op, new BsonDocument());
      if (fields.containsKey(LockDocument.LEASE) && !fields.containsKey(TreeLock.STATE + ".owner")) {
        return fields.getNumber(LockDocument.LEASE).longValue();
      }
    }
    return 0;
  }
}
