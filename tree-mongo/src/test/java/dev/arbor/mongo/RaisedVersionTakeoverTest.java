package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A caller who takes the tree's lock over from a stalled loader stops the loader's insert
 * commands by taking its next insert fence; the lock document's version may have risen while the
 * loader held the lock, as each lane's release raises it ({@code Lanes.bump}).
 *
 * <p>Found by writer processes with every kind of change (MongoDB's path, 10 ms leases, 15 %
 * faults): a graft told {@code NOT_APPLIED} whose last nodes were in the tree, in no parent's
 * children. The caller who took the graft over revoked the insert fences of the version it read
 * in the lock document, one above the graft's, which named none; it undid the graft, and the
 * graft's insert command in flight then passed its fence and inserted its nodes.
 */
class RaisedVersionTakeoverTest {

  @ParameterizedTest
  @MethodSource("dev.arbor.mongo.ResentStepTest#patternsOnBothServers")
  void aGraftTakenOverAfterTheVersionRoseInsertsNothing(TreePattern pattern, boolean ordered)
      throws Exception {
    MongoCollection<Document> c = ResentStepTest.server(ordered).freshCollection();
    Tree fixture = Tree.parse("a(b(c) d)");
    pattern.open(c).load(fixture);
    // The graft's first insert command is held (the holder's pause).
    FailThenPauseSender sender = new FailThenPauseSender(FailThenPauseSender.insertCommand(3),
        null);
    MongoTreeStore holder = (MongoTreeStore) pattern.open(c, ServerCapabilities.probing(c)
        .lease(300, 20_000).sender(sender).subtreeLocks(false).optimisticChanges(false)
        .keepAlive(false)); // a paused process: nothing renews its lease
    assertEquals(ordered, holder.lock.ordered(), "the server's behaviour");
    CompletableFuture<Object> graft = CompletableFuture.supplyAsync(() -> {
      try {
        return holder.graft("b", Tree.parse("x(y z)"));
      } catch (TreeException e) {
        return e;
      }
    });
    assertTrue(sender.reached.await(10, TimeUnit.SECONDS), "the graft's insert command");
    // A lane releases meanwhile: it raises the version of the lock document (Lanes.bump).
    assertEquals(1, c.updateOne(Filters.eq("_id", new Document("arbor", "lock")),
        Updates.combine(Updates.inc("arborLock.version", 1L),
            Updates.inc("arborLock.laneBumps", 1L),
            Updates.push("arborLock.laneLog", new Document("t", "a lane")))).getMatchedCount());
    TreeStore other = pattern.open(c, ServerCapabilities.probing(c).lease(300, 20_000)
        .subtreeLocks(false).optimisticChanges(false));
    other.delete("d"); // takes the lock over once the graft's lease ended, and undoes the graft
    sender.go.countDown();
    Object outcome = graft.get(20, TimeUnit.SECONDS);
    InMemoryTreeStore expected = new InMemoryTreeStore();
    expected.load(fixture);
    expected.delete("d");
    assertTrue(outcome instanceof TreeException, "the graft was undone, told " + outcome);
    assertEquals(expected.snapshot(), other.snapshot(), "the graft, told " + outcome);
    assertEquals(List.of(), other.check());
  }
}
