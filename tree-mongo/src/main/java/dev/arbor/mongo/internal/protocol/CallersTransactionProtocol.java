package dev.arbor.mongo.internal.protocol;

import com.mongodb.client.ClientSession;
import java.util.function.Function;

/**
 * The protocol of a {@link MongoTree#withSession} view: while the caller's session is in a
 * transaction, a change claims the tree's lock document in that transaction and writes its plan
 * there ({@link Transactions#runIn}), neither committing nor aborting it, and a read runs in it
 * and checks the lock document of the same snapshot ({@link Transactions#readIn}). Outside a
 * transaction the view's calls take the store's protocol, with the caller's session.
 */
public final class CallersTransactionProtocol implements Protocol {
  private final Transactions transactions;
  private final ClientSession session;
  private final Protocol outside;
  private final boolean isolatedReads;

  /**
   * @param outside the protocol of the view's calls outside a transaction (the store's, with the
   *     view's session)
   */
  public CallersTransactionProtocol(Transactions transactions, ClientSession session,
      Protocol outside,
      boolean isolatedReads) {
    this.transactions = transactions;
    this.session = session;
    this.outside = outside;
    this.isolatedReads = isolatedReads;
  }

  @Override
  public Outcome change(String what, Planner planner) {
    return inCallersTransaction() ? transactions.runIn(session, what, planner)
        : outside.change(what, planner);
  }

  @Override
  public <T> T read(Function<Reads, T> body) {
    return inCallersTransaction() ? transactions.readIn(session, body, isolatedReads)
        : outside.read(body);
  }

  @Override
  public boolean inCallersTransaction() {
    return session.hasActiveTransaction();
  }

  /** The protocol of this view's calls outside a transaction. */
  Protocol outside() {
    return outside;
  }
}
