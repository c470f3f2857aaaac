package dev.arbor.core;

/** The contract, against the reference store. */
class InMemoryTreeStoreTest extends TreeStoreContract {
  @Override
  protected TreeStore newStore() {
    return new InMemoryTreeStore();
  }
}
