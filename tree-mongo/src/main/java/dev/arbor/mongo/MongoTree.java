package dev.arbor.mongo;

import com.mongodb.client.ClientSession;
import dev.arbor.core.Node;
import dev.arbor.core.TreeStore;
import java.util.List;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A {@link TreeStore} over one MongoDB collection, with the reads that take the driver's filters:
 * the server selects nodes by the caller's own fields, and a node's subtree is a filter the caller
 * can use in queries of their own. {@link TreePattern#open} returns one for each pattern.
 *
 * <pre>{@code
 * MongoTree tree = TreePattern.MATERIALIZED_PATHS.open(products);
 * List<Node> cheap = tree.descendantNodes("Books", Integer.MAX_VALUE, Filters.lt("price", 10));
 * long inStock = products.countDocuments(
 *     Filters.and(tree.subtreeFilter("Books"), Filters.gt("stock", 0)));
 * }</pre>
 *
 * <p>A filter names the caller's fields only: one that names a field the pattern keeps for the
 * structure (such as {@code parent}, {@code path} or {@code left}), or Arbor's own fields, or
 * uses {@code $where}, is refused with an {@link IllegalArgumentException} naming the field. The
 * filter applies to the nodes returned, never to the structure: a node whose parent does not
 * match is still returned, in its place in preorder. {@code _id} (the node id) may be used.
 *
 * <p>{@link #withSession} gives a view that runs every read and change in the application's
 * {@link ClientSession}, joining its transaction:
 *
 * <pre>{@code
 * try (ClientSession session = client.startSession()) {
 *   session.withTransaction(() -> {
 *     products.insertOne(session, new Document("_id", "p1").append("category", "Databases"));
 *     tree.withSession(session).move("Databases", Position.lastChildOf("Books"));
 *     return null;
 *   });
 * }
 * }</pre>
 *
 * <p>Thread safety: as {@link TreeStore}; reads are isolated from concurrent changes.
 */
public interface MongoTree extends TreeStore {

  /**
   * The descendants of {@code id} down to {@code maxDepth} levels that match {@code filter}, with
   * their data, in preorder. The filter is applied by the server: only matching documents are
   * sent back, besides the structural fields of the subtree that order them.
   *
   * @param filter a filter on the caller's fields, or null for every descendant
   * @throws dev.arbor.core.NodeNotFoundException if {@code id} does not exist
   * @throws IllegalArgumentException if {@code maxDepth} is negative, or the filter names a
   *     structural field
   */
  List<Node> descendantNodes(String id, int maxDepth, @Nullable Bson filter);

  /**
   * One page of the children of {@code id} that match {@code filter}, with their data, in sibling
   * order: at most {@code limit} of them, following the child {@code after} (null: from the
   * first). The filter is applied by the server; see {@link TreeStore#childNodes(String, String,
   * int)} for the cursor.
   *
   * @param after the last child of the previous page, or null
   * @param filter a filter on the caller's fields, or null for every child
   * @throws dev.arbor.core.NodeNotFoundException if {@code id} or {@code after} does not exist
   * @throws IllegalArgumentException if {@code after} is not a child of {@code id}, {@code limit}
   *     is not positive, or the filter names a structural field
   */
  List<Node> childNodes(String id, @Nullable String after, int limit, @Nullable Bson filter);

  /**
   * A filter selecting the documents of {@code id} and its descendants, for the caller's own
   * {@code find}, {@code countDocuments} or {@code $match} on the tree's collection.
   *
   * <table>
   * <caption>what the filter is, per pattern</caption>
   * <tr><th>pattern<th>filter<th>index<th>stays right
   * <tr><td>array of ancestors<td>{@code {$or: [{_id: id}, {ancestors: id}]}}<td>{@code
   *     ancestors}<td>always
   * <tr><td>materialized paths<td>{@code {$or: [{_id: id}, {path: [P, P')}]}}<td>{@code path}
   *     <td>until {@code id} or one of its ancestors moves
   * <tr><td>nested sets<td>{@code {left: [l, r]}}<td>{@code left}<td>until the next structural
   *     change anywhere before the subtree (numbers shift)
   * <tr><td>parent and child references<td>{@code {_id: {$in: [every id of the subtree]}}}<td>
   *     {@code _id} only<td>until the subtree changes; its size grows with the subtree (16 MB
   *     limit of a command)
   * </table>
   *
   * <p>Reading the filter costs the node's document (one query) on paths and nested sets, the
   * recursive read of the subtree on the reference patterns, and an existence check on the array
   * of ancestors.
   *
   * @throws dev.arbor.core.NodeNotFoundException if {@code id} does not exist
   */
  Bson subtreeFilter(String id);

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

  /**
   * A view of this tree whose nodes are the application's type {@code T} (a record or a POJO),
   * encoded and decoded by the codec registry of the collection this store was opened on. See
   * {@link TypedTree} for how a {@code T} maps to a node.
   *
   * @throws IllegalArgumentException if the registry has no codec for {@code documentClass}
   */
  <T> TypedTree<T> withDocumentClass(Class<T> documentClass);
}
