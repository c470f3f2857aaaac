package dev.arbor.core;


import dev.arbor.core.internal.TreeStores;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * An immutable snapshot of a whole ordered forest: every node's id, parent and attributes, with
 * siblings in order. Two trees are equal when they hold the same nodes under the same parents in
 * the same order with equal attributes.
 *
 * <p>A tree is stored flat, as its nodes in preorder (a parent before its children, siblings in
 * order), so that trees of any depth are built, compared and walked without recursion:
 *
 * <pre>{@code
 * Books                     entries(): Books        (parent null)
 * └─ Programming                       Programming  (parent Books)
 *    ├─ Languages                      Languages    (parent Programming)
 *    └─ Databases                      Databases    (parent Programming)
 *       ├─ MongoDB                     MongoDB      (parent Databases)
 *       └─ dbm                         dbm          (parent Databases)
 * }</pre>
 *
 * <p>Build one with {@link #builder()}, or for small fixtures with {@link #parse(String)}; read one
 * from a store with {@link TreeStore#snapshot()}; write one to an empty store with {@link
 * TreeStore#load(Tree)}.
 */
public final class Tree {
  private static final Tree EMPTY = new Tree(List.of());

  private final List<Node> entries;
  // Built lazily, at most once per thread that finds none, and published through volatile
  // fields: a Tree is immutable and may be shared between threads, and a thread that reads a
  // map another built sees it whole.
  private volatile @Nullable Map<String, Integer> indexById;
  // the key null holds the roots
  private volatile @Nullable Map<@Nullable String, List<String>> childrenById;

  private Tree(List<Node> entries) {
    this.entries = entries;
  }

  /** The empty forest. */
  public static Tree empty() {
    return EMPTY;
  }

  /** A builder that adds nodes in any order, each as the last child of its parent. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Parses a compact outline, for fixtures: ids separated by white space, a node's children in
   * parentheses after it. {@code "Books(Programming(Languages Databases(MongoDB dbm)))"} is the
   * manual's category tree; {@code "a b c"} is three roots. Ids may not contain white space or
   * parentheses here (any other id works through {@link #builder()}).
   *
   * @throws IllegalArgumentException if the outline is malformed
   * @throws DuplicateNodeException if an id appears twice
   */
  public static Tree parse(String outline) {
    Builder builder = builder();
    Deque<String> parents = new ArrayDeque<>();
    String last = null;
    int i = 0;
    int n = outline.length();
    while (i < n) {
      char c = outline.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '(') {
        if (last == null) {
          throw new IllegalArgumentException("'(' without a node before it at " + i + ": "
              + outline);
        }
        parents.push(last);
        last = null;
        i++;
      } else if (c == ')') {
        if (parents.isEmpty()) {
          throw new IllegalArgumentException("unbalanced ')' at " + i + ": " + outline);
        }
        last = parents.pop();
        i++;
      } else {
        int start = i;
        while (i < n && !Character.isWhitespace(outline.charAt(i))
            && outline.charAt(i) != '(' && outline.charAt(i) != ')') {
          i++;
        }
        last = outline.substring(start, i);
        builder.add(last, parents.peek());
      }
    }
    if (!parents.isEmpty()) {
      throw new IllegalArgumentException("unbalanced '(' in: " + outline);
    }
    return builder.build();
  }

  /** Every node in preorder: a parent before its children, siblings in order. */
  public List<Node> entries() {
    return entries;
  }

  /** The number of nodes. */
  public int size() {
    return entries.size();
  }

  /** Whether the forest has no node. */
  public boolean isEmpty() {
    return entries.isEmpty();
  }

  /** Whether the forest holds a node with this id. */
  public boolean contains(String id) {
    return index().containsKey(id);
  }

  /**
   * The node with this id.
   *
   * @throws NodeNotFoundException if there is none
   */
  public Node get(String id) {
    Integer i = index().get(id);
    if (i == null) {
      throw new NodeNotFoundException(id);
    }
    return entries.get(i);
  }

  /** The roots, in order. */
  public List<String> roots() {
    return children().getOrDefault(null, List.of());
  }

  /**
   * The children of {@code id}, in order.
   *
   * @throws NodeNotFoundException if there is no such node
   */
  public List<String> children(String id) {
    get(id);
    return children().getOrDefault(id, List.of());
  }

  /** The ids of all nodes, in preorder. */
  public List<String> ids() {
    List<String> ids = new ArrayList<>(entries.size());
    for (Node e : entries) {
      ids.add(e.id());
    }
    return ids;
  }

  private Map<String, Integer> index() {
    Map<String, Integer> index = indexById;
    if (index == null) {
      index = new HashMap<>(entries.size() * 2);
      for (int i = 0; i < entries.size(); i++) {
        index.put(entries.get(i).id(), i);
      }
      indexById = index;
    }
    return index;
  }

  private Map<@Nullable String, List<String>> children() {
    Map<@Nullable String, List<String>> children = childrenById;
    if (children == null) {
      children = new HashMap<>();
      for (Node e : entries) {
        children.computeIfAbsent(e.parentId(), k -> new ArrayList<>()).add(e.id());
      }
      children.replaceAll((k, v) -> Collections.unmodifiableList(v));
      childrenById = children;
    }
    return children;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Tree other && entries.equals(other.entries);
  }

  @Override
  public int hashCode() {
    return entries.hashCode();
  }

  /** An indented outline, one node a line, attributes after the id. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (Node e : entries) {
      sb.append("  ".repeat(e.depth())).append(e.id());
      if (!e.attributes().isEmpty()) {
        sb.append(' ').append(e.attributes());
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /**
   * Builds a {@link Tree}. Nodes may be added in any order; each becomes the last child (or the
   * last root) among the nodes added so far under the same parent. {@link #build()} checks that
   * every parent exists and that there is no cycle.
   */
  public static final class Builder {
    private final LinkedHashMap<String, Node> added = new LinkedHashMap<>();

    private Builder() {}

    /**
     * Adds a node with no attributes.
     *
     * @param parentId the parent id, or {@code null} for a root
     * @throws DuplicateNodeException if {@code id} was already added
     */
    public Builder add(String id, @Nullable String parentId) {
      return add(id, parentId, Map.of());
    }

    /**
     * Adds a node.
     *
     * @param parentId the parent id, or {@code null} for a root
     * @throws DuplicateNodeException if {@code id} was already added
     */
    public Builder add(String id, @Nullable String parentId,
        Map<String, ? extends @Nullable Object> attributes) {
      TreeStores.checkId(id);
      if (parentId != null) {
        TreeStores.checkId(parentId);
      }
      if (added.containsKey(id)) {
        throw new DuplicateNodeException(id);
      }
      added.put(id, new Node(id, parentId, 0, TreeStores.copyAttributes(attributes)));
      return this;
    }

    /** The number of nodes added so far. */
    public int size() {
      return added.size();
    }

    /**
     * Returns the tree.
     *
     * @throws NodeNotFoundException if a node names a parent that was not added
     * @throws TreeException if parents form a cycle
     */
    public Tree build() {
      if (added.isEmpty()) {
        return EMPTY;
      }
      Map<@Nullable String, List<Node>> children = new HashMap<>();
      for (Node e : added.values()) {
        if (e.parentId() != null && !added.containsKey(e.parentId())) {
          throw new NodeNotFoundException(e.parentId());
        }
        children.computeIfAbsent(e.parentId(), k -> new ArrayList<>()).add(e);
      }
      List<Node> preorder = new ArrayList<>(added.size());
      // Iterative preorder: a stack of sibling iterators.
      Deque<Object[]> stack = new ArrayDeque<>(); // {List<Node> siblings, int[] next, depth}
      stack.push(new Object[] {children.getOrDefault(null, List.of()), new int[] {0}, 0});
      while (!stack.isEmpty()) {
        Object[] frame = stack.peek();
        @SuppressWarnings("unchecked")
        List<Node> siblings = (List<Node>) frame[0];
        int[] next = (int[]) frame[1];
        int depth = (Integer) frame[2];
        if (next[0] == siblings.size()) {
          stack.pop();
          continue;
        }
        Node e = siblings.get(next[0]++);
        preorder.add(new Node(e.id(), e.parentId(), depth, e.attributes()));
        List<Node> kids = children.get(e.id());
        if (kids != null) {
          stack.push(new Object[] {kids, new int[] {0}, depth + 1});
        }
      }
      if (preorder.size() != added.size()) {
        java.util.Set<String> reached = new java.util.HashSet<>();
        for (Node p : preorder) {
          reached.add(p.id());
        }
        for (Node e : added.values()) {
          if (!reached.contains(e.id())) {
            throw new TreeException("Node '" + e.id() + "' is on a parent cycle");
          }
        }
      }
      return new Tree(Collections.unmodifiableList(preorder));
    }
  }
}
