package dev.arbor.mongo.internal.layout;

import dev.arbor.mongo.internal.protocol.Reads;


/**
 * The {@link Walker} of a scoped tree or a tree of typed ids: always level by level, one query
 * per level, each of which the store's {@link Reads} scopes and rewrites.
 */
final class LevelWalker implements Walker {
  static final LevelWalker INSTANCE = new LevelWalker();

  private LevelWalker() {}

  @Override
  public <T> T run(Reads r, Walk<T> walk) {
    return walk.byLevels(r);
  }

  @Override
  public String toString() {
    return "level walk";
  }
}
