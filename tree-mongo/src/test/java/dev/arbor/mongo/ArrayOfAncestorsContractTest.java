package dev.arbor.mongo;


/** {@link TreePattern#ARRAY_OF_ANCESTORS} against the shared contract. */
class ArrayOfAncestorsContractTest extends MongoStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.ARRAY_OF_ANCESTORS;
  }
}
