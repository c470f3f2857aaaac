package dev.arbor.mongo;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStoreProperties;
import dev.arbor.mongo.internal.ServerCapabilities;
import org.bson.Document;

/**
 * The equivalence property for one MongoDB pattern, a fresh collection per sequence. The stores
 * get the test client, so on a server with transactions the property runs the transaction path
 * (the contract suites run the lock-and-journal path everywhere).
 */
abstract class MongoStoreProperties extends TreeStoreProperties {
  abstract TreePattern pattern();

  /** How the store finds out what the server supports; probing by default. */
  ServerCapabilities capabilities(MongoCollection<Document> collection) {
    // Single-threaded: nothing to isolate from, so reads skip the lock check (the contract,
    // integrity and concurrency tests cover isolated reads).
    return ServerCapabilities.probing(collection).client(MongoTestServer.get().client())
        .isolatedReads(false);
  }

  @Override
  protected int examples() {
    return Integer.getInteger("arbor.qt.examples", 80);
  }

  /**
   * A snapshot and a {@code check()} are a few round trips each, as many as a change: the trees
   * are compared every fourth step (and after the last), every step's outcome after each.
   */
  @Override
  protected int checkEvery() {
    return Integer.getInteger("arbor.qt.checkEvery", 4);
  }

  @Override
  protected TreeStore newStore() {
    MongoCollection<Document> collection = MongoTestServer.get().scratchCollection();
    return pattern().open(collection, capabilities(collection));
  }
}
