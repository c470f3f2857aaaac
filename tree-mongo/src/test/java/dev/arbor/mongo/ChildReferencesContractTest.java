package dev.arbor.mongo;


/** {@link TreePattern#CHILD_REFERENCES} against the shared contract. */
class ChildReferencesContractTest extends MongoStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.CHILD_REFERENCES;
  }
}
