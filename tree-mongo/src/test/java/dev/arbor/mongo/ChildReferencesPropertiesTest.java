package dev.arbor.mongo;


/** {@link TreePattern#CHILD_REFERENCES} against the reference, by generated sequences. */
class ChildReferencesPropertiesTest extends MongoStoreProperties {
  @Override
  TreePattern pattern() {
    return TreePattern.CHILD_REFERENCES;
  }
}
