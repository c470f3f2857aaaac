package dev.arbor.mongo;

import com.mongodb.client.ClientSession;
import dev.arbor.core.TreeStore;

/**
 * A tree stored in a MongoDB collection: the {@link TreeStore} contract, plus a view bound to a
 * {@link ClientSession} of the application's, as the driver's collections have.
 *
 * <pre>{@code
 * MongoTree categories = TreePattern.ARRAY_OF_ANCESTORS.open(collection);
 * try (ClientSession session = client.startSession()) {
 *   session.withTransaction(() -> {
 *     products.insertOne(session, new Document("_id", "p1").append("category", "Databases"));
 *     categories.withSession(session).move("Databases", Position.lastChildOf("Books"));
 *     return null;
 *   });
 * }
 * }</pre>
 */
public interface MongoTree extends TreeStore {
  /**
   * A view of this tree whose every operation runs in {@code session}. The view shares this
   * store's lock, options and listeners; it is as thread-safe as the session (that is, use it
   * from one thread at a time).
   *
   * <p>While the session has an active transaction, every read and change of the view joins it:
   * Arbor neither starts nor commits a transaction, and a change claims the tree's lock document
   * inside the caller's transaction, so that other writers of the tree are excluded until the
   * caller commits or aborts. If another caller's change holds the tree with the lock and journal
   * at that moment, the call waits until it is done, then throws a {@link
   * com.mongodb.MongoException} labelled {@code TransientTransactionError}: the caller's
   * transaction must be retried, as {@link ClientSession#withTransaction} does by itself.
   * Listeners are not told of changes made in a caller's transaction (Arbor cannot see whether
   * it commits); watch the collection with a change stream instead.
   *
   * <p>Without an active transaction, reads run in the session (causally consistent with the
   * application's other operations in it) and each change is made all-or-nothing as usual: in
   * its own transaction started on the session when the store was opened with transactions and
   * the server runs them, otherwise with the lock and journal.
   *
   * @throws NullPointerException if {@code session} is null
   */
  MongoTree withSession(ClientSession session);
}
