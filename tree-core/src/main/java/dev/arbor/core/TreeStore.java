package dev.arbor.core;

import dev.arbor.core.internal.TreeStores;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * An ordered forest kept in some storage: any number of ordered roots, each node with ordered
 * children, user attributes on every node, and whole-subtree moves and deletes.
 *
 * <pre>{@code
 *   Books                         roots()                 = [Books]
 *   └─ Programming                children("Programming") = [Languages, Databases]
 *      ├─ Languages               ancestors("MongoDB")    = [Books, Programming, Databases]
 *      └─ Databases               descendants("Programming")
 *         ├─ MongoDB                 = [Languages, Databases, MongoDB, dbm]   (preorder)
 *         └─ dbm                  depth("dbm")            = 3
 * }</pre>
 *
 * <h2>Which store do I need?</h2>
 *
 * <ul>
 *   <li>{@link InMemoryTreeStore}: the reference, for tests and small trees that live in one JVM.
 *   <li>{@code dev.arbor.mongo.TreePattern}: the five MongoDB layouts of the MongoDB manual, each
 *       with its own trade-off between read and write cost; the package documentation and the
 *       benchmark tell which fits a workload.
 * </ul>
 *
 * <h2>Semantics every store shares</h2>
 *
 * <ul>
 *   <li>Ids are arbitrary non-empty strings (commas, dots, {@code $}, regex metacharacters, spaces,
 *       backslashes, any unicode). A null id throws {@link NullPointerException}, an empty one
 *       {@link IllegalArgumentException}.
 *   <li>An id that is not in the tree, as a subject or as a position anchor, throws {@link
 *       NodeNotFoundException} naming it; inserting an id that exists throws {@link
 *       DuplicateNodeException}.
 *   <li>{@code move(x, before(x))} and {@code move(x, after(x))} do nothing. Moving a node into its
 *       own subtree, including {@code firstChildOf(x)}, throws {@link InvalidMoveException}.
 *   <li><b>After a domain exception (an unknown or duplicate id, an invalid move, a bad attribute),
 *       the stored tree is exactly as before the call.</b> A change interrupted for another reason
 *       (an I/O error, a lock lost by a writer slower than its lease) throws {@link
 *       ChangeInterruptedException}, whose {@link ChangeInterruptedException#outcome() outcome}
 *       says whether it was applied; the stored tree is then the tree before or after the
 *       change, never a mix.
 *   <li>Attributes are stored with the node, returned by {@link #find}, changed only by {@link
 *       #update} and never by moves.
 * </ul>
 *
 * <h2>Thread safety</h2>
 *
 * <p>Implementations are safe to call from several threads at once. Whether concurrent structural
 * changes from several threads or processes are isolated from each other is stated by each
 * implementation.
 */
public interface TreeStore {

  /**
   * Creates whatever indexes the store's queries need. Idempotent; a no-op where nothing is needed.
   */
  void ensureIndexes();

  /**
   * Inserts a new leaf with no attributes at {@code position}.
   *
   * @throws DuplicateNodeException if {@code id} exists
   * @throws NodeNotFoundException if the position's anchor does not exist
   */
  default void insert(String id, Position position) {
    insert(id, position, Map.of());
  }

  /**
   * Inserts a new leaf with the given attributes at {@code position}.
   *
   * @throws DuplicateNodeException if {@code id} exists
   * @throws NodeNotFoundException if the position's anchor does not exist
   * @throws IllegalArgumentException if an attribute cannot be stored (for example, its name is a
   *     field the store reserves for the structure)
   */
  void insert(String id, Position position, Map<String, @Nullable Object> attributes);

  /**
   * Changes the attributes of {@code id}: each entry of {@code set} gives the attribute of that
   * name a new value, and a {@code null} value removes it; attributes not named are kept. The
   * structure never changes. An empty {@code set} only checks that the node exists.
   *
   * <p>MongoDB stores write the node's one document with one update (no journal: MongoDB makes a
   * single-document write atomic), through the same protocol as every change.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   * @throws IllegalArgumentException if an attribute cannot be stored or removed (for example,
   *     its name is a field the store reserves for the structure), naming the node and the
   *     attribute; nothing is written then
   */
  void update(String id, Map<String, ? extends @Nullable Object> set);

  /**
   * Moves {@code id} with its whole subtree to {@code position}. Attributes are unchanged.
   *
   * @throws NodeNotFoundException if {@code id} or the position's anchor does not exist
   * @throws InvalidMoveException if the position is inside the subtree of {@code id}
   */
  void move(String id, Position position);

  /**
   * Deletes {@code id} and its whole subtree.
   *
   * @return the number of nodes removed, at least 1
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  long delete(String id);

  /**
   * Deletes {@code id} and does with its children what {@code how} says (see {@link Deletion}),
   * all-or-nothing.
   *
   * @return the number of nodes removed: the subtree's size for {@link Deletion#SUBTREE}, 1
   *     otherwise
   * @throws NodeNotFoundException if {@code id} does not exist
   * @throws NodeHasChildrenException with {@link Deletion#LEAF_ONLY}, if {@code id} has children
   */
  long delete(String id, Deletion how);

  /**
   * The node with this id, or empty if there is none.
   *
   * <p><b>Cost.</b> The node's {@link Node#depth() depth} is part of the answer: a pattern that
   * stores it (or the ancestors, or the path) reads one document, but parent and child
   * references find it by walking up to the root, which costs one more query per level without
   * {@code $graphLookup} (see each store's table of costs). To read a node's attributes alone,
   * {@code childNodes} of its parent or a query of the collection by {@code _id} cost one read in
   * every pattern.
   */
  Optional<Node> find(String id);

  // ------------------------------------------------------------------ reads of node data

  /**
   * The subtree of {@code id} with attributes, down to {@code maxDepth} levels below it, as a
   * {@link Tree} whose only root is {@code id} ({@code maxDepth} 0 gives the node alone, {@link
   * Integer#MAX_VALUE} the whole subtree). The default implementation reads it node by node;
   * stores override it with one read, isolated from concurrent changes.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   * @throws IllegalArgumentException if {@code maxDepth} is negative
   */
  default Tree subtree(String id, int maxDepth) {
    Node top = find(id).orElseThrow(() -> new NodeNotFoundException(id));
    Tree.Builder builder = Tree.builder().add(id, null, top.attributes());
    for (Node n : descendantNodes(id, maxDepth)) {
      builder.add(n.id(), n.parentId(), n.attributes());
    }
    return builder.build();
  }

  /**
   * The children of {@code id} with their data, in sibling order.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default List<Node> childNodes(String id) {
    return childNodes(id, null, Integer.MAX_VALUE);
  }

  /**
   * One page of the children of {@code id} with their data, in sibling order: at most {@code
   * limit} children, those that follow the child {@code after} ({@code null}: from the first).
   * The next page starts after the last child of this one; the cursor is a position in sibling
   * order, not an offset, so a page neither repeats nor skips a child when others are inserted or
   * deleted meanwhile elsewhere in the list.
   *
   * <pre>{@code
   * List<Node> page = store.childNodes("p", null, 50);
   * while (!page.isEmpty()) {
   *   show(page);
   *   page = store.childNodes("p", page.get(page.size() - 1).id(), 50);
   * }
   * }</pre>
   *
   * @throws NodeNotFoundException if {@code id} or {@code after} does not exist
   * @throws IllegalArgumentException if {@code after} is not a child of {@code id}, or {@code
   *     limit} is not positive
   */
  default List<Node> childNodes(String id, @Nullable String after, int limit) {
    TreeStores.checkLimit(limit);
    List<String> children = children(id);
    int from = 0;
    if (after != null) {
      find(after).orElseThrow(() -> new NodeNotFoundException(after));
      from = children.indexOf(after) + 1;
      if (from == 0) {
        throw TreeStores.notAChild(after, id);
      }
    }
    List<Node> out = new ArrayList<>();
    for (String child : children.subList(from, (int) Math.min(children.size(),
        (long) from + limit))) {
      out.add(find(child).orElseThrow(() -> new NodeNotFoundException(child)));
    }
    return out;
  }

  /**
   * The ancestors of {@code id} with their data, root first, parent last: a breadcrumb.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default List<Node> ancestorNodes(String id) {
    List<Node> out = new ArrayList<>();
    for (String a : ancestors(id)) {
      out.add(find(a).orElseThrow(() -> new NodeNotFoundException(a)));
    }
    return out;
  }

  /**
   * The descendants of {@code id} with their data, down to {@code maxDepth} levels, in preorder:
   * the nodes of {@link #descendants(String, int)}.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   * @throws IllegalArgumentException if {@code maxDepth} is negative
   */
  default List<Node> descendantNodes(String id, int maxDepth) {
    List<Node> out = new ArrayList<>();
    for (String d : descendants(id, maxDepth)) {
      out.add(find(d).orElseThrow(() -> new NodeNotFoundException(d)));
    }
    return out;
  }

  // ------------------------------------------------------------------ counts and neighbours

  /**
   * The number of children of {@code id}.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default long childCount(String id) {
    return children(id).size();
  }

  /**
   * The number of descendants of {@code id}, {@code id} excluded.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default long descendantCount(String id) {
    return descendants(id).size();
  }

  /**
   * Whether {@code id} has no children.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default boolean isLeaf(String id) {
    return childCount(id) == 0;
  }

  /**
   * The other children of the parent of {@code id} (the other roots, for a root), in sibling
   * order; {@code id} itself excluded.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default List<String> siblings(String id) {
    List<String> all = new ArrayList<>(siblingsAndSelf(this, id));
    all.remove(id);
    return all;
  }

  /**
   * The sibling just before {@code id}, or empty for a first child (or the first root).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default Optional<String> previousSibling(String id) {
    List<String> all = siblingsAndSelf(this, id);
    int at = all.indexOf(id);
    return at > 0 ? Optional.of(all.get(at - 1)) : Optional.empty();
  }

  /**
   * The sibling just after {@code id}, or empty for a last child (or the last root).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default Optional<String> nextSibling(String id) {
    List<String> all = siblingsAndSelf(this, id);
    int at = all.indexOf(id);
    return at + 1 < all.size() ? Optional.of(all.get(at + 1)) : Optional.empty();
  }

  private static List<String> siblingsAndSelf(TreeStore store, String id) {
    Node node = store.find(id).orElseThrow(() -> new NodeNotFoundException(id));
    return node.parentId() == null ? store.roots() : store.children(node.parentId());
  }

  /** The ids of the roots, in order. */
  List<String> roots();

  /**
   * The ids of the children of {@code id}, in sibling order.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  List<String> children(String id);

  /**
   * The ids of the ancestors of {@code id}: the root first, the parent last; empty for a root.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  List<String> ancestors(String id);

  /**
   * The ids of all descendants of {@code id} in preorder, siblings in order; excludes {@code id}.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  default List<String> descendants(String id) {
    return descendants(id, Integer.MAX_VALUE);
  }

  /**
   * The ids of the descendants of {@code id} at most {@code maxDepth} levels below it, in preorder;
   * {@code maxDepth} 1 gives the children, 0 nothing.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   * @throws IllegalArgumentException if {@code maxDepth} is negative
   */
  List<String> descendants(String id, int maxDepth);

  /**
   * The number of ancestors of {@code id}: 0 for a root.
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  int depth(String id);

  /**
   * Whether {@code id} is a strict descendant of {@code ancestorId} (a node is not its own
   * descendant).
   *
   * @throws NodeNotFoundException if either node does not exist
   */
  boolean isDescendant(String id, String ancestorId);

  /** The number of nodes. */
  long size();

  /**
   * Checks the stored structure and returns what is wrong with it, each problem naming a node;
   * empty when the structure is sound. Never changes anything.
   */
  List<Problem> check();

  /**
   * Repairs the stored structure as far as it can be derived: finishes a change that was
   * interrupted half-way, rebuilds the derived fields from the authoritative ones, and completes
   * fields that a collection written by hand in the manual's shape lacks (such as sibling order).
   * Each store documents which of its fields are authoritative. Never deletes a node.
   *
   * @return the problems that remain, which repair could not settle without guessing (for
   *     example, a cycle of parent links); empty when the structure is sound
   */
  List<Problem> repair();

  /**
   * Writes a whole forest into this store, which must be empty, with as few round trips as the
   * storage allows (the derived fields of every node are computed in one pass).
   *
   * @throws TreeException if the store is not empty; nothing is written then
   */
  void load(Tree tree);

  /**
   * Writes a whole forest read from {@code entries} into this store, which must be empty,
   * all-or-nothing: either every entry is stored or, after any exception, the store is empty
   * again. The entries come in preorder, as {@link #entries()}, {@link Tree#entries()} and {@link
   * dev.arbor.core.json.TreeJsonReader} give them: each entry's parent before it, and a node's
   * subtree before its next sibling; an entry's {@link Node#depth() depth} is not read (its
   * parent places it). So a tree is copied from store to store without being held whole:
   *
   * <pre>{@code
   * try (Stream<Node> entries = source.entries()) {
   *   target.load(entries.iterator());
   * }
   * }</pre>
   *
   * <p>The default implementation collects the entries into a {@link Tree} and calls {@link
   * #load(Tree)}; the MongoDB stores write in batches as the entries come, holding one batch and
   * the path from a root to the current entry, never the whole tree.
   *
   * @return the number of nodes written
   * @throws TreeException if the store is not empty, if an entry's parent is not on the path from
   *     a root to the entry before it (not preorder, or a parent that is not in the stream), or if
   *     an entry cannot be stored by this store (for example, its document would pass a size
   *     limit); nothing is left written then
   * @throws DuplicateNodeException if an id appears twice; nothing is left written then
   */
  default long load(Iterator<? extends Node> entries) {
    Tree tree = TreeStores.collect(entries);
    load(tree);
    return tree.size();
  }

  /**
   * Adds a forest to this store, all-or-nothing: the roots of {@code tree} become the last
   * children of {@code parentId}, in their order (the last roots of the forest if {@code parentId}
   * is null), and the other nodes keep their parents and order. The store need not be empty; every
   * id of {@code tree} must be new.
   *
   * <pre>{@code
   *   a                 graft("a", Tree.parse("x(y) z"))        a
   *   ├─ b              ─────────────────────────────────▶      ├─ b
   *   └─ c                                                      ├─ c
   *                                                             ├─ x
   *                                                             │  └─ y
   *                                                             └─ z
   * }</pre>
   *
   * <p>The default implementation checks the parent and every id, then inserts node by node (a
   * change each, so that a failure between them leaves part of the forest); the reference and
   * the MongoDB stores override it with one change.
   *
   * @param parentId the existing node to graft under, or null to add new roots
   * @return the number of nodes added
   * @throws NodeNotFoundException if {@code parentId} does not exist
   * @throws DuplicateNodeException if an id of {@code tree} exists in the store; nothing is
   *     written then
   * @throws TreeException if a node cannot be stored by this store; nothing is written then
   */
  default long graft(@Nullable String parentId, Tree tree) {
    java.util.Objects.requireNonNull(tree, "tree");
    if (parentId != null) {
      TreeStores.checkId(parentId);
      find(parentId).orElseThrow(() -> new NodeNotFoundException(parentId));
    }
    for (Node e : tree.entries()) {
      if (find(e.id()).isPresent()) {
        throw new DuplicateNodeException(e.id());
      }
    }
    for (Node e : tree.entries()) {
      Position at = e.parentId() != null ? Position.lastChildOf(e.parentId())
          : parentId != null ? Position.lastChildOf(parentId) : Position.lastRoot();
      insert(e.id(), at, e.attributes());
    }
    return tree.size();
  }

  /**
   * Adds a forest read from {@code entries} (in preorder, as for {@link #load(Iterator)}) as
   * {@link #graft(String, Tree)} does, all-or-nothing. The MongoDB stores write it in batches as
   * the entries come, in bounded memory, and make it part of the tree in one last step; the
   * default implementation collects the entries into a {@link Tree} first.
   *
   * @param parentId the existing node to graft under, or null to add new roots
   * @return the number of nodes added
   * @throws NodeNotFoundException if {@code parentId} does not exist
   * @throws DuplicateNodeException if an id of the entries exists in the store or appears twice;
   *     nothing is left written then
   * @throws TreeException if the entries are not in preorder, or a node cannot be stored by this
   *     store; nothing is left written then
   */
  default long graft(@Nullable String parentId, Iterator<? extends Node> entries) {
    return graft(parentId, TreeStores.collect(entries));
  }

  /**
   * Every node of the forest, with attributes, in preorder (a parent before its children,
   * siblings in order, each entry with its depth): exactly the entries of {@link #snapshot()}, but
   * delivered one by one, so that a store that overrides it holds only a bounded part of the tree
   * in client memory at any time. Close the stream when done (try-with-resources), as it may hold
   * open server cursors:
   *
   * <pre>{@code
   * try (Stream<Node> entries = store.entries()) {
   *   entries.forEach(writer::write);
   * }
   * }</pre>
   *
   * <p>The default implementation streams {@link #snapshot()}, so it holds the whole forest; the
   * MongoDB stores override it with server-side sorted cursors (each store documents its memory
   * and round trips, and what its stream guarantees when the tree changes meanwhile: a stream
   * that delivered entries and then finds that a change took effect throws {@link
   * TreeChangedException} rather than end normally).
   *
   * @throws TreeChangedException from the stream's terminal operation, if the tree changed while
   *     it was read and the store cannot deliver a consistent preorder
   */
  default Stream<Node> entries() {
    return snapshot().entries().stream();
  }

  /**
   * Reads the whole forest, with attributes, as one immutable value. The default implementation
   * walks the tree with {@link #roots()}, {@link #children} and {@link #find}; stores override it
   * with a single scan.
   */
  default Tree snapshot() {
    Tree.Builder builder = Tree.builder();
    Deque<String> pending = new ArrayDeque<>();
    List<String> roots = roots();
    for (int i = roots.size() - 1; i >= 0; i--) {
      pending.push(roots.get(i));
    }
    while (!pending.isEmpty()) {
      String id = pending.pop();
      Node node = find(id).orElseThrow(() -> new NodeNotFoundException(id));
      builder.add(id, node.parentId(), node.attributes());
      List<String> children = new ArrayList<>(children(id));
      for (int i = children.size() - 1; i >= 0; i--) {
        pending.push(children.get(i));
      }
    }
    return builder.build();
  }
}
