package dev.arbor.mongo;

import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStoreProperties;

/** The equivalence property for one MongoDB pattern, a fresh collection per sequence. */
abstract class MongoStoreProperties extends TreeStoreProperties {
  abstract TreePattern pattern();

  @Override
  protected TreeStore newStore() {
    return pattern().open(MongoTestServer.get().freshCollection());
  }
}
