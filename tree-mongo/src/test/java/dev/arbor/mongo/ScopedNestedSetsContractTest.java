package dev.arbor.mongo;


/** The contract on one of two trees in one collection, {@link TreePattern#NESTED_SETS}. */
class ScopedNestedSetsContractTest extends ScopedStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.NESTED_SETS;
  }
}
