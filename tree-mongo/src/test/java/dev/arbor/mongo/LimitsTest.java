package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** What cannot fit in a document is refused before anything is written, naming the node. */
class LimitsTest {

  @Test
  void aChildrenArrayThatWouldPassSixteenMegabytesIsRefusedUpFront() {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    MongoTreeStore store = (MongoTreeStore) TreePattern.CHILD_REFERENCES.open(c);
    Tree.Builder builder = Tree.builder().add("p", null);
    String pad = "x".repeat(15_000);
    for (int i = 0; i < 1_050; i++) {
      builder.add(pad + i, "p");
    }
    Tree tree = builder.build();
    store.load(tree);
    String big = "y".repeat(1_100_000);
    TreeException e = assertThrows(TreeException.class,
        () -> store.insert(big, Position.lastChildOf("p")));
    assertTrue(e.getMessage().contains("children of 'p'") && e.getMessage().contains("16 MB"),
        e.getMessage());
    assertEquals(tree.size(), store.size(), "nothing was written");
    assertEquals(List.of(), store.check());
    store.insert("small", Position.lastChildOf("p")); // a short id still fits
    assertEquals(tree.size() + 1, store.size());
  }
}
