package dev.arbor.mongo.internal.protocol;


/**
 * What a change did.
 *
 * @param version the version the change took effect at (its serial order), -1 if it did nothing
 * @param deleted the documents it deleted, -1 if not known (another caller completed it)
 */
public record Outcome(long version, long deleted) {
  /** A change whose plan was empty. */
  static final Outcome NONE = new Outcome(-1, 0);
}
