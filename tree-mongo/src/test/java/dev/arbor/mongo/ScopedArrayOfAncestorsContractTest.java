package dev.arbor.mongo;


/** The contract on one of two trees in one collection, {@link TreePattern#ARRAY_OF_ANCESTORS}. */
class ScopedArrayOfAncestorsContractTest extends ScopedStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.ARRAY_OF_ANCESTORS;
  }
}
