package dev.arbor.mongo;


/** {@link TreePattern#NESTED_SETS} against the shared contract. */
class NestedSetsContractTest extends MongoStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.NESTED_SETS;
  }
}
