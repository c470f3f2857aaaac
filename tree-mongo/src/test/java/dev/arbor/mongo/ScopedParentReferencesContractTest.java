package dev.arbor.mongo;


/** The contract on one of two trees in one collection, {@link TreePattern#PARENT_REFERENCES}. */
class ScopedParentReferencesContractTest extends ScopedStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.PARENT_REFERENCES;
  }
}
