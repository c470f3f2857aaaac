package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.protocol.Change;
import dev.arbor.mongo.internal.protocol.Reads;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A change's planning reads a document by {@code _id} once: a footprint read, then the plan's
 * reads of the same node (a move reads the moved node's parent, then that it exists, ...) are
 * answered from what the change read, while a read of more fields, of another node, or of a
 * missing one goes to the server. Reads outside a change (isolated reads, loads) keep no memory.
 */
class ChangeReadsTest {
  @Test
  void aChangeReadsADocumentByIdOnceForTheFieldsItRead() {
    AtomicInteger finds = new AtomicInteger();
    CommandListener l = new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent e) {
        if (e.getCommandName().equals("find")) {
          finds.incrementAndGet();
        }
      }
    };
    try (MongoClient client = MongoTestServer.get().recordingClient(l)) {
      MongoCollection<Document> c = MongoTestServer.get().freshCollection(client);
      c.insertMany(List.of(new Document("_id", "a").append("parent", null).append("x", 1),
          new Document("_id", "b").append("parent", "a").append("x", 2)));
      Change change = new Change(c, null, null, () -> {}, 1);
      assertEquals("a", change.require("b", Queries.fields("parent", "x")).getString("parent"));
      assertEquals(1, finds.get());
      // the same fields, fewer fields, _id alone: no query
      change.require("b", Queries.fields("parent", "x")).put("parent", "changed by a caller");
      assertEquals("a", change.require("b", Queries.fields("parent")).getString("parent"));
      assertEquals("b", change.require("b", Queries.fields("_id")).getString("_id"));
      assertEquals(2, change.documents(List.of("b"), Queries.fields("x")).get("b")
          .getInteger("x"));
      assertEquals(1, finds.get());
      // more fields, the whole document, another node, a missing one: a query each
      c.updateOne(new Document("_id", "b"), new Document("$set", new Document("y", 3)));
      assertEquals(3, change.require("b", Queries.fields("parent", "y")).getInteger("y"));
      assertEquals(2, finds.get());
      assertEquals(3, change.require("b", null).getInteger("y"));
      assertEquals(3, finds.get());
      assertEquals(3, change.require("b", Queries.fields("y", "x")).getInteger("y"));
      assertEquals(3, finds.get()); // the whole document answers any fields
      assertEquals(2, change.requireBoth("b", "a", Queries.fields("x"))[0].getInteger("x"));
      assertEquals(4, finds.get());
      assertEquals(1, change.requireBoth("b", "a", Queries.fields("x"))[1].getInteger("x"));
      assertEquals(4, finds.get());
      assertThrows(NodeNotFoundException.class, () -> change.require("z", null));
      assertThrows(NodeNotFoundException.class, () -> change.require("z", null));
      assertEquals(6, finds.get());

      Reads plain = new Reads(c, null, null, () -> {}, false);
      plain.require("b", Queries.fields("parent"));
      plain.require("b", Queries.fields("parent"));
      assertEquals(8, finds.get());
    }
  }

  /**
   * What a lane reads under its marks ({@code Layout.parentAndDescendants}, one query for a leaf
   * on three patterns) is what {@code parentOf} and {@code descendantIds} read, for every node of
   * a tree, a missing node included, in every pattern.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(TreePattern.class)
  void aNodesFamilyInOneReadIsItsParentAndItsDescendants(TreePattern pattern) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    dev.arbor.mongo.internal.MongoTreeStore store =
        (dev.arbor.mongo.internal.MongoTreeStore) pattern.open(c);
    dev.arbor.core.Tree tree = dev.arbor.core.Tree.parse("a(b(c d(e f)) g(h)) i(j k(l(m)))");
    store.load(tree);
    for (String id : tree.ids()) {
      Reads r = new Reads(c, null, null, () -> {}, false);
      dev.arbor.mongo.internal.layout.Layout.Family f = store.layout.parentAndDescendants(r, id);
      assertEquals(store.layout.parentOf(r, id), f.parent(), id);
      assertEquals(new java.util.HashSet<>(store.layout.descendantIds(r, id, Integer.MAX_VALUE)),
          new java.util.HashSet<>(f.descendants()), id);
      assertEquals(f.descendants().size(), new java.util.HashSet<>(f.descendants()).size(), id);
    }
    assertThrows(NodeNotFoundException.class, () -> store.layout.parentAndDescendants(
        new Reads(c, null, null, () -> {}, false), "zz"));
  }
}
