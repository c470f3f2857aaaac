package dev.arbor.mongo;


/** The contract on one of two trees in one collection, {@link TreePattern#MATERIALIZED_PATHS}. */
class ScopedMaterializedPathsContractTest extends ScopedStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.MATERIALIZED_PATHS;
  }
}
