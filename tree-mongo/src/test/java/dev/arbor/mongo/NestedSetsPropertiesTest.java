package dev.arbor.mongo;


/** {@link TreePattern#NESTED_SETS} against the reference, by generated sequences. */
class NestedSetsPropertiesTest extends MongoStoreProperties {
  @Override
  TreePattern pattern() {
    return TreePattern.NESTED_SETS;
  }
}
