package dev.arbor.mongo;


/** {@link TreePattern#PARENT_REFERENCES} against the shared contract. */
class ParentReferencesContractTest extends MongoStoreContract {
  @Override
  TreePattern pattern() {
    return TreePattern.PARENT_REFERENCES;
  }
}
