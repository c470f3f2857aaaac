package dev.arbor.core;

/** The equivalence property against the reference itself: a check of the harness. */
class InMemoryTreeStorePropertiesTest extends TreeStoreProperties {
  @Override
  protected TreeStore newStore() {
    return new InMemoryTreeStore();
  }
}
