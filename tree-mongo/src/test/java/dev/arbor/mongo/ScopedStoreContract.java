package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.Scope;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * The whole contract run on one tree of a collection that holds two ({@link
 * TreeOptions#withScope}), with every structural field under a name of its own ({@link
 * TreeOptions#withFieldName}, {@link #NAMES}): before each test a second tree, with ids that
 * overlap the ones the contract uses, is loaded into the same collection under another scope
 * value (of another BSON type); after each test its raw documents, lock included, must be exactly
 * as loaded, no document of the collection may lack the scope field, and none may have a
 * structural field under its default name.
 */
abstract class ScopedStoreContract extends MongoStoreContract {
  static final String FIELD = "tenant";
  static final String OTHER_TREE = "a(b(c d) e) r(x first last) p(q) root n 1";

  /** The names the structural fields take in this suite: none of them a default. */
  static final Map<TreeField, String> NAMES = Map.of(TreeField.PARENT, "parentId",
      TreeField.CHILDREN, "childIds", TreeField.ANCESTORS, "ancestorIds",
      TreeField.PATH, "materializedPath", TreeField.LEFT, "lft", TreeField.RIGHT, "rgt",
      TreeField.DEPTH, "treeDepth", TreeField.RANK, "siblingOrder");

  MongoTree other;
  List<Document> otherBefore;
  Scope scope;

  /** The scope value of the tree under test. */
  Object value() {
    return "t1";
  }

  @Override
  protected TreeStore newStore() {
    collection = MongoTestServer.get().scratchCollection();
    other = pattern().open(collection, named(pattern()).withScope(FIELD, 2));
    other.ensureIndexes();
    other.load(Tree.parse(OTHER_TREE));
    otherBefore = otherRaw();
    ServerCapabilities caps = capabilities(collection).scope(FIELD, value())
        .names(named(pattern()).names());
    MongoTreeStore store = (MongoTreeStore) pattern().open(collection, caps);
    scope = store.scope;
    return store;
  }

  /** Options naming every structural field of {@code pattern} as {@link #NAMES} does. */
  static TreeOptions named(TreePattern pattern) {
    TreeOptions options = TreeOptions.defaults();
    for (TreeField f : TreeField.of(pattern)) {
      options = options.withFieldName(f, NAMES.get(f));
    }
    return options;
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
        .find(scope.filter(MongoTreeStore.NODES, collection.getCodecRegistry())),
        named(pattern()).names());
    assertEquals(otherBefore, otherRaw(), "the other tree of the collection was touched");
    assertEquals(Tree.parse(OTHER_TREE).toString(), other.snapshot().toString());
    assertEquals(List.of(), other.check());
    assertEquals(0, collection.countDocuments(Filters.exists(FIELD, false)),
        "documents without the scope field");
    for (TreeField f : TreeField.values()) {
      assertEquals(0, collection.countDocuments(Filters.exists(f.defaultName())),
          "documents with a structural field under its default name " + f.defaultName());
    }
  }
}
