package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;

/**
 * The whole contract run on one tree of a collection that holds two ({@link
 * TreeOptions#withScope}): before each test a second tree, with ids that overlap the ones the
 * contract uses, is loaded into the same collection under another scope value (of another BSON
 * type); after each test its raw documents, lock included, must be exactly as loaded, and no
 * document of the collection may lack the scope field.
 */
abstract class ScopedStoreContract extends MongoStoreContract {
  static final String FIELD = "tenant";
  static final String OTHER_TREE = "a(b(c d) e) r(x first last) p(q) root n 1";

  MongoTree other;
  List<Document> otherBefore;
  Scope scope;

  /** The scope value of the tree under test. */
  Object value() {
    return "t1";
  }

  @Override
  protected TreeStore newStore() {
    collection = MongoTestServer.get().freshCollection();
    other = pattern().open(collection, TreeOptions.defaults().withScope(FIELD, 2)
        .capabilities(collection));
    other.ensureIndexes();
    other.load(Tree.parse(OTHER_TREE));
    otherBefore = otherRaw();
    ServerCapabilities caps = capabilities(collection).scope(FIELD, value());
    MongoTreeStore store = (MongoTreeStore) pattern().open(collection, caps);
    scope = store.scope;
    return store;
  }

  @Override
  ServerCapabilities capabilities(MongoCollection<Document> collection) {
    return ServerCapabilities.probing(collection);
  }

  private List<Document> otherRaw() {
    return collection.find(Filters.eq(FIELD, 2)).sort(Sorts.ascending("_id"))
        .into(new ArrayList<>());
  }

  @Override
  protected void verifyStoredInvariants(TreeStore store) {
    StoredLayout.assertLayout(pattern(), store.snapshot(), scope.collection(collection)
        .find(scope.filter(MongoTreeStore.NODES, collection.getCodecRegistry())));
    assertEquals(otherBefore, otherRaw(), "the other tree of the collection was touched");
    assertEquals(Tree.parse(OTHER_TREE).toString(), other.snapshot().toString());
    assertEquals(List.of(), other.check());
    assertEquals(0, collection.countDocuments(Filters.exists(FIELD, false)),
        "documents without the scope field");
  }
}
