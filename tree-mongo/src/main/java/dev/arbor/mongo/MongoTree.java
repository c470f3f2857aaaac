package dev.arbor.mongo;

import dev.arbor.core.Node;
import dev.arbor.core.TreeStore;
import java.util.List;
import org.bson.conversions.Bson;

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
  List<Node> descendantNodes(String id, int maxDepth, Bson filter);

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
  List<Node> childNodes(String id, String after, int limit, Bson filter);

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
}
