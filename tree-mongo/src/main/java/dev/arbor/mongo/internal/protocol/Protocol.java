package dev.arbor.mongo.internal.protocol;

import java.util.function.Function;

/**
 * How a store makes each structural change all-or-nothing and keeps each read from seeing a change
 * half made. A store chooses its protocol once, when it is opened ({@link
 * MongoTreeStore#protocol()}); a {@link MongoTree#withSession} view is opened with its own. There
 * are three:
 *
 * <pre>
 *   protocol                      chosen for                      a change is
 *   ----------------------------  ------------------------------  ------------------------------
 *   {@link FencedJournalProtocol}         a server without transactions   planned, then sent in fenced
 *                                 (standalone, embedded), and     batches under the tree's lock
 *                                 changes too large for one       (a lease), after its journal
 *                                 transaction                     if it has several statements
 *   {@link OwnTransactionProtocol}        a replica set or sharded        planned and written in one
 *                                 cluster                         transaction Arbor starts
 *   {@link CallersTransactionProtocol}    a view whose session is in a    planned and written in the
 *                                 transaction of the caller's     caller's transaction
 * </pre>
 *
 * <p>Each protocol's writers exclude the others' through the same lock document, whose version
 * every change raises, so processes that opened one collection in different ways still change
 * it one at a time. A planner ({@link Planner}) never knows which protocol runs it: it reads
 * through its {@link Change} and plans {@link Step}s.
 */
public interface Protocol {
  /**
   * Plans a change on its context and applies the plan all-or-nothing.
   *
   * @return what the change did; {@link Outcome#NONE} if its plan was empty
   */
  public Outcome change(String what, Planner planner);

  /**
   * Plans a change that holds only its {@code footprint} where the protocol can ({@link
   * LaneProtocol}); the other protocols hold the tree.
   */
  public default Outcome change(String what, Footprint footprint, Planner planner) {
    return change(what, planner);
  }

  /** Runs a read, isolated from changes in flight (unless the store's isolation is off). */
  public <T> T read(Function<Reads, T> body);

  /**
   * Runs a read of node {@code top} and of nodes it depends on (its children, its subtree, its
   * ancestors), isolated as {@link #read(Function)}: where the protocol can ({@link
   * LaneProtocol}), it stands without waiting for changes elsewhere in the tree, when none of
   * them touched {@code top} or a node the read returned.
   *
   * @param returned the ids of the nodes the read's result holds
   */
  public default <T> T read(String top, Function<Reads, T> body,
      Function<T, java.util.Collection<String>> returned) {
    return read(body);
  }

  /**
   * Whether calls run in a transaction the caller commits or aborts later: then nothing is known
   * to be committed when a call returns (listeners are not told), and loads, grafts and streams
   * run as single changes and reads inside it instead of in fenced batches.
   */
  public default boolean inCallersTransaction() {
    return false;
  }
}
