package dev.arbor.mongo;


/** {@link TreePattern#ARRAY_OF_ANCESTORS} against the reference, by generated sequences. */
class ArrayOfAncestorsPropertiesTest extends MongoStoreProperties {
  @Override
  TreePattern pattern() {
    return TreePattern.ARRAY_OF_ANCESTORS;
  }
}
