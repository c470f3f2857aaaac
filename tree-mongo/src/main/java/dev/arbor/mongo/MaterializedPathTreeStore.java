package dev.arbor.mongo;

/**
 * The old name of {@link MaterializedPathLayout}'s path-string constants and escaping, kept only
 * so that {@code Doctor} and {@code Fits}, which other branches are editing, compile unchanged.
 * Not a store: every pattern's store is a {@link MongoTreeStore} with its {@link Layout}. Once
 * those branches are merged, their references move to {@link MaterializedPathLayout} and this
 * class goes.
 */
final class MaterializedPathTreeStore {
  private MaterializedPathTreeStore() {}

  /** @see MaterializedPathLayout#MAX_REGEX_DEPTH */
  static final int MAX_REGEX_DEPTH = MaterializedPathLayout.MAX_REGEX_DEPTH;

  /** @see MaterializedPathLayout#MAX_REGEX_LENGTH */
  static final int MAX_REGEX_LENGTH = MaterializedPathLayout.MAX_REGEX_LENGTH;

  /** @see MaterializedPathLayout#escape */
  static String escape(String id) {
    return MaterializedPathLayout.escape(id);
  }
}
