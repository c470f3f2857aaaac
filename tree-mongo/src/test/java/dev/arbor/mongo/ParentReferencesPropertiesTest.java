package dev.arbor.mongo;


/** {@link TreePattern#PARENT_REFERENCES} against the reference, by generated sequences. */
class ParentReferencesPropertiesTest extends MongoStoreProperties {
  @Override
  TreePattern pattern() {
    return TreePattern.PARENT_REFERENCES;
  }
}
