package dev.arbor.mongo.internal.protocol;

import java.util.function.Function;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The protocol of a store opened with its client, for a replica set or sharded cluster: each
 * change in one multi-document
 * transaction that Arbor starts ({@link Transactions#run}), which claims the tree's lock document
 * inside it. A change the transaction cannot hold (too many steps or documents, refused as too
 * large, failing transiently too often) is made by the {@link FencedJournalProtocol} instead, as
 * are reads, which check the same lock document. Whether the server runs transactions is probed
 * once, at the first change ({@link Transactions#available}); where it does not, every change is
 * the fenced journal's.
 */
public final class OwnTransactionProtocol implements Protocol {
  private final Transactions transactions;
  private final com.mongodb.client.@Nullable ClientSession session;
  private final FencedJournalProtocol fenced;
  private final LongConsumer settled;

  public OwnTransactionProtocol(Transactions transactions,
      com.mongodb.client.@Nullable ClientSession session, FencedJournalProtocol fenced,
      LongConsumer settled) {
    this.transactions = transactions;
    this.session = session;
    this.fenced = fenced;
    this.settled = settled;
  }

  @Override
  public Outcome change(String what, Planner planner) {
    if (transactions.available()) {
      Outcome o = transactions.run(what, planner, session);
      if (o != null) {
        settled.accept(o.version());
        return o;
      }
    }
    return fenced.change(what, planner);
  }

  @Override
  public <T> T read(Function<Reads, T> body) {
    return fenced.read(body);
  }
}
