package dev.arbor.mongo;


/** {@link TreePattern#MATERIALIZED_PATHS} against the reference, by generated sequences. */
class MaterializedPathsPropertiesTest extends MongoStoreProperties {
  @Override
  TreePattern pattern() {
    return TreePattern.MATERIALIZED_PATHS;
  }
}
