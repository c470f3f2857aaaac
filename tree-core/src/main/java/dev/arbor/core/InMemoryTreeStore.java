package dev.arbor.core;

import dev.arbor.core.internal.TreeStores;
import static java.util.Objects.requireNonNull;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The reference {@link TreeStore}: a map from id to node, each node holding its parent and its
 * ordered list of children, plus the ordered list of roots. It is written to be obviously right
 * rather than fast, and every other store is tested for equivalence against it.
 *
 * <p>Costs: {@code children} and {@code find} are O(1) plus the size of the answer; {@code
 * ancestors}, {@code depth} and {@code isDescendant} walk up the parent chain; {@code descendants}
 * and {@code delete} walk the subtree; {@code insert} and {@code move} cost O(number of siblings).
 *
 * <p>Thread safety: every method is {@code synchronized}, so concurrent calls are serialized and
 * each one is atomic.
 */
public final class InMemoryTreeStore implements TreeStore {

  private static final class Entry {
    @Nullable String parent;
    final List<String> children = new ArrayList<>();
    Map<String, @Nullable Object> attributes;

    Entry(@Nullable String parent, Map<String, @Nullable Object> attributes) {
      this.parent = parent;
      this.attributes = attributes;
    }
  }

  private final Map<String, Entry> nodes = new HashMap<>();
  private final List<String> roots = new ArrayList<>();

  /** Creates an empty store. */
  public InMemoryTreeStore() {}

  /** Nothing to index: a no-op. */
  @Override
  public void ensureIndexes() {}

  @Override
  public synchronized void insert(String id, Position position,
      Map<String, @Nullable Object> attributes) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    checkAttributeNames(id, requireNonNull(attributes,
        "attributes must not be null (use an empty map)"));
    Map<String, @Nullable Object> copy = TreeStores.copyAttributes(attributes);
    if (nodes.containsKey(id)) {
      throw new DuplicateNodeException(id);
    }
    String parent = targetParent(position);
    List<String> siblings = group(parent);
    int index = targetIndex(position, siblings);
    nodes.put(id, new Entry(parent, copy));
    siblings.add(index, id);
  }

  @Override
  public synchronized void update(String id, Map<String, ? extends @Nullable Object> set) {
    Entry node = entry(id);
    requireNonNull(set, "set must not be null (use an empty map)");
    checkAttributeNames(id, set);
    Map<String, @Nullable Object> changed = new java.util.LinkedHashMap<>(node.attributes);
    for (Map.Entry<String, ? extends @Nullable Object> e : set.entrySet()) {
      String name = requireNonNull(e.getKey(), "attribute names must not be null");
      if (e.getValue() == null) {
        changed.remove(name);
      } else {
        changed.put(name, e.getValue());
      }
    }
    node.attributes = TreeStores.copyAttributes(changed);
  }

  /**
   * Refuses the names the MongoDB stores refuse whatever their pattern: {@code _id}, and names
   * MongoDB does not take as field names, also as keys inside a value ({@link
   * TreeStores#checkAttributeNames}); so that a program tested against this store meets the
   * refusals it meets in production.
   */
  private static void checkAttributeNames(String id, Map<String, ?> attributes) {
    if (attributes.containsKey("_id")) {
      throw new IllegalArgumentException("Attribute '_id' of node '" + id + "' is reserved"
          + " for the tree structure (it is the node's id)");
    }
    TreeStores.checkAttributeNames(id, attributes);
  }

  @Override
  public synchronized void move(String id, Position position) {
    Entry node = entry(id);
    requireNonNull(position, "position");
    String parent = targetParent(position);
    if (position instanceof Position.Sibling s && s.siblingId().equals(id)) {
      return; // before(x) / after(x) is a no-op
    }
    if (parent != null && (parent.equals(id) || isDescendantUnchecked(parent, id))) {
      throw new InvalidMoveException(id, position);
    }
    group(node.parent).remove(id);
    List<String> target = group(parent);
    target.add(targetIndex(position, target), id);
    node.parent = parent;
  }

  @Override
  public synchronized long delete(String id) {
    Entry node = entry(id);
    List<String> doomed = new ArrayList<>();
    doomed.add(id);
    doomed.addAll(descendantsUnchecked(id, Integer.MAX_VALUE));
    group(node.parent).remove(id);
    for (String d : doomed) {
      nodes.remove(d);
    }
    return doomed.size();
  }

  @Override
  public synchronized long delete(String id, Deletion how) {
    TreeStores.checkId(id);
    requireNonNull(how, "how");
    Entry node = entry(id);
    switch (how) {
      case SUBTREE:
        return delete(id);
      case LEAF_ONLY:
        if (!node.children.isEmpty()) {
          throw new NodeHasChildrenException(id);
        }
        return delete(id);
      default:
        List<String> siblings = group(node.parent);
        int at = siblings.indexOf(id);
        siblings.remove(at);
        siblings.addAll(at, node.children);
        for (String child : node.children) {
          nodes.get(child).parent = node.parent;
        }
        nodes.remove(id);
        return 1;
    }
  }

  @Override
  public synchronized Optional<Node> find(String id) {
    TreeStores.checkId(id);
    Entry node = nodes.get(id);
    if (node == null) {
      return Optional.empty();
    }
    return Optional.of(new Node(id, node.parent, depth(id), node.attributes));
  }

  @Override
  public synchronized List<String> roots() {
    return List.copyOf(roots);
  }

  @Override
  public synchronized List<String> children(String id) {
    return List.copyOf(entry(id).children);
  }

  @Override
  public synchronized List<String> ancestors(String id) {
    entry(id);
    List<String> ancestors = new ArrayList<>();
    for (String p = nodes.get(id).parent; p != null; p = nodes.get(p).parent) {
      ancestors.add(p);
    }
    Collections.reverse(ancestors);
    return ancestors;
  }

  @Override
  public synchronized List<String> descendants(String id, int maxDepth) {
    entry(id);
    if (maxDepth < 0) {
      throw new IllegalArgumentException("maxDepth < 0: " + maxDepth);
    }
    return descendantsUnchecked(id, maxDepth);
  }

  @Override
  public synchronized int depth(String id) {
    return ancestors(id).size();
  }

  @Override
  public synchronized boolean isDescendant(String id, String ancestorId) {
    entry(id);
    entry(ancestorId);
    return isDescendantUnchecked(id, ancestorId);
  }

  @Override
  public synchronized long size() {
    return nodes.size();
  }

  /** The in-memory structure is sound by construction: always empty. */
  @Override
  public List<Problem> check() {
    return List.of();
  }

  /** Nothing to repair: always empty. */
  @Override
  public List<Problem> repair() {
    return List.of();
  }

  @Override
  public synchronized void load(Tree tree) {
    requireNonNull(tree, "tree");
    if (!nodes.isEmpty()) {
      throw new TreeException("Cannot load into a store that is not empty (" + nodes.size()
          + " nodes)");
    }
    for (Node e : tree.entries()) {
      nodes.put(e.id(), new Entry(e.parentId(), e.attributes()));
      group(e.parentId()).add(e.id());
    }
  }

  /** Collects the entries while holding the store, so that the load is one change. */
  @Override
  public synchronized long load(java.util.Iterator<? extends Node> entries) {
    Tree tree = TreeStores.collect(entries);
    load(tree);
    return tree.size();
  }

  /** Checks the parent and every id first, then adds the nodes: all or nothing. */
  @Override
  public synchronized long graft(@Nullable String parentId, Tree tree) {
    requireNonNull(tree, "tree");
    if (parentId != null) {
      entry(parentId);
    }
    for (Node e : tree.entries()) {
      if (nodes.containsKey(e.id())) {
        throw new DuplicateNodeException(e.id());
      }
    }
    for (Node e : tree.entries()) {
      String parent = e.parentId() != null ? e.parentId() : parentId;
      nodes.put(e.id(), new Entry(parent, e.attributes()));
      group(parent).add(e.id());
    }
    return tree.size();
  }

  @Override
  public synchronized long graft(@Nullable String parentId,
      java.util.Iterator<? extends Node> entries) {
    requireNonNull(entries, "entries");
    if (parentId != null) {
      entry(parentId); // an unknown parent is named before the stream is read
    }
    return graft(parentId, TreeStores.collect(entries));
  }

  /**
   * The same preorder as the interface's default, walked over this store's own maps: one pass,
   * without the default's {@link #find} of every node (which walks up to the root for its depth).
   */
  @Override
  public synchronized Tree snapshot() {
    Tree.Builder builder = Tree.builder();
    java.util.ArrayDeque<String> pending = new java.util.ArrayDeque<>();
    for (int i = roots.size() - 1; i >= 0; i--) {
      pending.push(roots.get(i));
    }
    while (!pending.isEmpty()) {
      String id = pending.pop();
      Entry node = nodes.get(id);
      builder.add(id, node.parent, node.attributes);
      for (int i = node.children.size() - 1; i >= 0; i--) {
        pending.push(node.children.get(i));
      }
    }
    return builder.build();
  }

  // Reads the interface defines by other reads: synchronized here, so that each is atomic.

  @Override
  public synchronized Tree subtree(String id, int maxDepth) {
    return TreeStore.super.subtree(id, maxDepth);
  }

  @Override
  public synchronized List<Node> childNodes(String id, @Nullable String after, int limit) {
    return TreeStore.super.childNodes(id, after, limit);
  }

  @Override
  public synchronized List<Node> ancestorNodes(String id) {
    return TreeStore.super.ancestorNodes(id);
  }

  @Override
  public synchronized List<Node> descendantNodes(String id, int maxDepth) {
    return TreeStore.super.descendantNodes(id, maxDepth);
  }

  @Override
  public synchronized long descendantCount(String id) {
    return TreeStore.super.descendantCount(id);
  }

  @Override
  public synchronized List<String> siblings(String id) {
    return TreeStore.super.siblings(id);
  }

  @Override
  public synchronized Optional<String> previousSibling(String id) {
    return TreeStore.super.previousSibling(id);
  }

  @Override
  public synchronized Optional<String> nextSibling(String id) {
    return TreeStore.super.nextSibling(id);
  }

  private Entry entry(String id) {
    TreeStores.checkId(id);
    Entry node = nodes.get(id);
    if (node == null) {
      throw new NodeNotFoundException(id);
    }
    return node;
  }

  private List<String> group(@Nullable String parent) {
    return parent == null ? roots : nodes.get(parent).children;
  }

  /** The parent a position puts a node under (null for the roots); checks the anchor exists. */
  private @Nullable String targetParent(Position position) {
    if (position instanceof Position.Root) {
      return null;
    } else if (position instanceof Position.Child c) {
      entry(c.parentId());
      return c.parentId();
    } else {
      return entry(((Position.Sibling) position).siblingId()).parent;
    }
  }

  /** The index in {@code siblings} (which no longer holds the node placed) for a position. */
  private static int targetIndex(Position position, List<String> siblings) {
    if (position instanceof Position.Root r) {
      return r.first() ? 0 : siblings.size();
    } else if (position instanceof Position.Child c) {
      return c.first() ? 0 : siblings.size();
    } else {
      Position.Sibling s = (Position.Sibling) position;
      int at = siblings.indexOf(s.siblingId());
      return s.before() ? at : at + 1;
    }
  }

  private boolean isDescendantUnchecked(String id, String ancestorId) {
    for (String p = nodes.get(id).parent; p != null; p = nodes.get(p).parent) {
      if (p.equals(ancestorId)) {
        return true;
      }
    }
    return false;
  }

  private List<String> descendantsUnchecked(String id, int maxDepth) {
    List<String> out = new ArrayList<>();
    Deque<Map.Entry<String, Integer>> stack = new ArrayDeque<>();
    List<String> kids = nodes.get(id).children;
    for (int i = kids.size() - 1; i >= 0; i--) {
      stack.push(Map.entry(kids.get(i), 1));
    }
    while (!stack.isEmpty()) {
      Map.Entry<String, Integer> top = stack.pop();
      if (top.getValue() > maxDepth) {
        continue;
      }
      out.add(top.getKey());
      List<String> children = nodes.get(top.getKey()).children;
      for (int i = children.size() - 1; i >= 0; i--) {
        stack.push(Map.entry(children.get(i), top.getValue() + 1));
      }
    }
    return out;
  }
}
