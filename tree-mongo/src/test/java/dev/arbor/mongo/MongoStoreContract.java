package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStoreContract;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;

/**
 * The shared contract run against one MongoDB pattern on the test server, each test on a fresh
 * collection; after each test the raw documents are also compared with {@link StoredLayout}.
 */
abstract class MongoStoreContract extends TreeStoreContract {
  MongoCollection<Document> collection;

  abstract TreePattern pattern();

  /** How the store finds out what the server supports; probing by default. */
  ServerCapabilities capabilities(MongoCollection<Document> collection) {
    return ServerCapabilities.probing(collection);
  }

  @Override
  protected TreeStore newStore() {
    collection = MongoTestServer.get().scratchCollection();
    return pattern().open(collection, capabilities(collection));
  }

  @Override
  protected void verifyStoredInvariants(TreeStore store) {
    StoredLayout.assertLayout(pattern(), store.snapshot(), collection);
  }
}
