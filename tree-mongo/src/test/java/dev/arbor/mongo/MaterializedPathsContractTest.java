package dev.arbor.mongo;


/** {@link TreePattern#MATERIALIZED_PATHS} against the shared contract. */
class MaterializedPathsContractTest extends MongoStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.MATERIALIZED_PATHS;
  }
}
