package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.graphLookupOutOfMemory;
import static dev.arbor.mongo.internal.bson.Queries.graphLookupRefused;

import com.mongodb.MongoServerException;
import dev.arbor.mongo.internal.ServerCapabilities;
import dev.arbor.mongo.internal.protocol.Reads;

/**
 * The {@link Walker} of a collection that holds one tree of string ids: one {@code $graphLookup}
 * where the server runs it correctly ({@link ServerCapabilities#graphLookup}, probed once), level
 * by level elsewhere. A {@code $graphLookup} past its memory limit walks level by level instead;
 * one the server refuses (in a transaction on a sharded collection) does too, and turns {@code
 * $graphLookup} off for the store's later walks: the refusal aborted the transaction it met, and
 * the retried transaction walks.
 */
final class GraphLookupWalker implements Walker {
  private final ServerCapabilities capabilities;

  GraphLookupWalker(ServerCapabilities capabilities) {
    this.capabilities = capabilities;
  }

  @Override
  public <T> T run(Reads r, Walk<T> walk) {
    if (capabilities.graphLookup()) {
      try {
        return walk.byGraphLookup(r);
      } catch (MongoServerException e) {
        if (!walkInstead(e)) {
          throw e;
        }
        // past $graphLookup's memory limit, or refused: walk instead
      }
    }
    return walk.byLevels(r);
  }

  /**
   * Whether to walk level by level after {@code $graphLookup} failed with {@code e} (see {@link
   * Queries#graphLookupOutOfMemory}); a refusal also turns {@code $graphLookup} off.
   */
  private boolean walkInstead(MongoServerException e) {
    if (graphLookupRefused(e)) {
      capabilities.refuseGraphLookup();
    }
    return graphLookupOutOfMemory(e);
  }

  @Override
  public String toString() {
    return "$graphLookup walk";
  }
}
