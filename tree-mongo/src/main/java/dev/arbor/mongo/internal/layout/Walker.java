package dev.arbor.mongo.internal.layout;

import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.bson.NodeIds;
import dev.arbor.mongo.internal.bson.Scope;
import dev.arbor.mongo.internal.protocol.Reads;


/**
 * How a reference pattern (parent or child references, which store only the links between a
 * node and its neighbours) reads recursively: with one {@code $graphLookup} ({@link
 * GraphLookupWalker}), or level by level with one query per level ({@link LevelWalker}). A store
 * chooses its walker once, when it is opened ({@link #of}); a walk describes both ways ({@link
 * Walk}) and the walker runs one.
 *
 * <p>Thread-safe: a store's walker serves all its calls.
 */
public interface Walker {

  /**
   * A recursive read, both ways: {@link #byGraphLookup} and {@link #byLevels} give the same
   * answer where both can run.
   *
   * @param <T> the answer
   */
  public interface Walk<T> {
    /** The answer from one aggregation with {@code $graphLookup}. */
    public T byGraphLookup(Reads r);

    /** The answer from a walk of one query per level (or per node up a chain). */
    public T byLevels(Reads r);
  }

  /** Runs {@code walk} on {@code r} the walker's way. */
  public <T> T run(Reads r, Walk<T> walk);

  /**
   * The walker of a store: {@code $graphLookup} for a collection that holds one tree of string
   * ids (where the server runs it correctly, probed at the first walk); a scoped tree, or one of
   * typed ids, walks level by level with {@code $in} queries, each of which carries the scope and
   * the id rewrite.
   */
  public static Walker of(@org.jspecify.annotations.Nullable Scope scope, NodeIds ids,
      ServerCapabilities capabilities) {
    return scope == null && ids.isString() ? new GraphLookupWalker(capabilities)
        : LevelWalker.INSTANCE;
  }
}
