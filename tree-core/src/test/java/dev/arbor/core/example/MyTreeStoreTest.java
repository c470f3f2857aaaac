package dev.arbor.core.example;

import dev.arbor.core.TreeStore;
import dev.arbor.core.TreeStoreContract;
import dev.arbor.core.TreeStoreProperties;

// docs-own-store:begin
class MyTreeStoreTest extends TreeStoreContract {
  @Override protected TreeStore newStore() { return new MyTreeStore(); }
}
class MyTreeStorePropertiesTest extends TreeStoreProperties {
  @Override protected TreeStore newStore() { return new MyTreeStore(); }
}
// docs-own-store:end
