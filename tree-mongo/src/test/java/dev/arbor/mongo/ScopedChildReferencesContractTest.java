package dev.arbor.mongo;


/** The contract on one of two trees in one collection, {@link TreePattern#CHILD_REFERENCES}. */
class ScopedChildReferencesContractTest extends ScopedStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.CHILD_REFERENCES;
  }
}
