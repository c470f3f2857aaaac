package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Sorts;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.Function;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A preorder walk of a stored forest whose children name their parent by a key field (parent
 * references and the array of ancestors: {@code parent}, the parent's id; materialized paths:
 * {@code path}, the parent's path and id), reading the children of many nodes in one query.
 *
 * <p>When the walk reaches a node whose children it does not know yet, it asks in one query
 * {@code {key: {$in: [...]}}}, sorted by key and sibling order, for the children of that node
 * and of the next nodes of the preorder whose children are not known either (at most {@value
 * #KEYS}, found by walking ahead through what it already holds), at most {@value #LIMIT}
 * documents. The groups that come back whole are kept for when the walk reaches their parent; a
 * node asked for that got no children is a leaf (if the answer was not cut by the limit). So a
 * leaf costs no query of its own, and a query serves the next hundred nodes or so: round trips are
 * about n / {@value #KEYS} for a bushy tree (one query per level for a chain, which no query by
 * parent can avoid). A node with more children than one answer holds is read by a cursor of its
 * own, in slices.
 *
 * <p>Client memory: the documents read ahead stay below about {@value #HELD} (past it, the walk
 * asks only for the node it is at and the rest of its siblings), plus, per open level, one
 * answer of at most {@value #LIMIT} documents or one slice of a node read by cursor; never the
 * tree.
 */
final class KeyedPreorder implements PreorderCursor {
  /**
   * The most nodes whose children one query asks for. Not more: a server that matches each
   * candidate against the whole {@code $in} list (the embedded one) spends keys squared per query.
   */
  static final int KEYS = 128;
  /** The most documents one query returns (one more tells the answer was cut). */
  static final int LIMIT = 2_000;
  /** Documents held ahead of the walk past which it stops reading ahead. */
  static final int HELD = 8_000;

  /** How a pattern's children name their parent. */
  interface Keys {
    /** The filter of the roots. */
    Bson roots();

    /** The sibling order. */
    Bson order();

    /** The field of a child that names its parent. */
    String field();

    /** The value of {@link #field()} in the children of {@code parent}. */
    String childKey(Document parent);
  }

  /**
   * The keys of a pattern whose nodes name their parent's id in {@code parentField}: roots have
   * none, siblings are ordered by {@code rankField}.
   */
  static Keys byParent(String parentField, String rankField) {
    return new Keys() {
      @Override
      public Bson roots() {
        return MongoTreeStore.isNull(parentField);
      }

      @Override
      public Bson order() {
        return Sorts.ascending(rankField);
      }

      @Override
      public String field() {
        return parentField;
      }

      @Override
      public String childKey(Document parent) {
        return parent.getString(MongoTreeStore.ID);
      }
    };
  }

  private final Reads reads;
  private final Keys keys;
  private final Function<Document, Map<String, Object>> attributes;
  private final Deque<Frame> stack = new ArrayDeque<>();
  /** The ids of the open frames' parents: a node among them again is a cycle. */
  private final Set<String> path = new HashSet<>();
  /** Children read ahead, whole, by the key they name their parent with. */
  private final Map<String, List<Document>> known = new HashMap<>();
  /** Keys asked for that no child names: their nodes are leaves. */
  private final Set<String> leaves = new HashSet<>();
  private final int keysPerQuery;
  private final int limit;
  private final int heldAhead;
  /** Documents read and not yet given out, and the most there were. */
  private long held;
  private long mostHeld;
  private long queries;
  private Tree.@Nullable Entry next;

  KeyedPreorder(Reads reads, Keys keys, Function<Document, Map<String, Object>> attributes) {
    this(reads, keys, attributes, KEYS, LIMIT, HELD);
  }

  /** With other bounds than {@link #KEYS}, {@link #LIMIT} and {@link #HELD} (for tests). */
  KeyedPreorder(Reads reads, Keys keys, Function<Document, Map<String, Object>> attributes,
      int keysPerQuery, int limit, int heldAhead) {
    this.reads = reads;
    this.keys = keys;
    this.attributes = attributes;
    this.keysPerQuery = keysPerQuery;
    this.limit = limit;
    this.heldAhead = heldAhead;
    stack.push(new Frame(null, 0, keys.roots()));
  }

  /** The queries sent so far (for tests). */
  long queries() {
    return queries;
  }

  /** The most documents held at once, read and not yet given out (for tests). */
  long mostHeld() {
    return mostHeld;
  }

  @Override
  public boolean hasNext() {
    if (next == null) {
      next = advance();
    }
    return next != null;
  }

  @Override
  public Tree.Entry next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Tree.Entry e = next;
    next = null;
    return e;
  }

  private Tree.@Nullable Entry advance() {
    while (!stack.isEmpty()) {
      Frame frame = stack.peek();
      Document d = frame.next();
      if (d == null) {
        frame.close();
        stack.pop();
        if (frame.parent != null) {
          path.remove(frame.parent);
        }
        continue;
      }
      held--;
      String id = d.getString(MongoTreeStore.ID);
      if (path.contains(id)) {
        throw new TreeException("node '" + id + "' is its own ancestor (a cycle of links):"
            + " check() lists the problems");
      }
      Tree.Entry e = new Tree.Entry(id, frame.parent, frame.depth, attributes.apply(d));
      String key = keys.childKey(d);
      if (!leaves.remove(key)) {
        List<Document> children = known.remove(key);
        Frame down = children != null ? new Frame(id, frame.depth + 1, children)
            : fetch(id, frame.depth + 1, key);
        if (down != null) {
          path.add(id);
          stack.push(down);
        }
      }
      return e;
    }
    return null;
  }

  /**
   * Reads the children of node {@code id} (whose children name it by {@code key}) and, in the
   * same query, those of the next nodes of the preorder whose children are not known.
   *
   * @return the frame of its children, or null if it has none
   */
  private @Nullable Frame fetch(String id, int depth, String key) {
    List<String> asked = new ArrayList<>();
    asked.add(key);
    asked.addAll(ahead(key, held >= heldAhead));
    queries++;
    List<Document> answer = new ArrayList<>();
    try (MongoCursor<Document> c = reads.find(in(keys.field(), asked))
        .sort(Sorts.orderBy(Sorts.ascending(keys.field()), keys.order()))
        .limit(limit + 1).batchSize(limit + 1).cursor()) {
      while (c.hasNext()) {
        answer.add(c.next());
      }
    }
    boolean cut = answer.size() > limit;
    String lastKey = cut ? keyOf(answer.get(answer.size() - 1)) : null;
    Map<String, List<Document>> groups = new HashMap<>();
    for (Document d : answer) {
      String k = keyOf(d);
      if (!k.equals(lastKey)) { // the last group of a cut answer may lack some: read it again
        groups.computeIfAbsent(k, x -> new ArrayList<>()).add(d);
      }
    }
    for (String k : asked.subList(1, asked.size())) {
      List<Document> g = groups.get(k);
      if (g != null) {
        known.put(k, g);
        hold(g.size());
      } else if (!cut) {
        leaves.add(k);
      }
    }
    List<Document> mine = groups.get(key);
    if (mine != null) {
      hold(mine.size());
      return new Frame(id, depth, mine);
    }
    if (!cut) {
      return null; // a leaf
    }
    return new Frame(id, depth, eq(keys.field(), key)); // more than an answer holds, or cut off
  }

  /**
   * The keys of the next nodes of the preorder after the current one whose children are not
   * known, at most the keys of a query less one: the rest of each open frame, top down, and
   * through the children read ahead, depth first; or, once enough is held, only the rest of the
   * current node's siblings.
   */
  private Set<String> ahead(String current, boolean siblingsOnly) {
    Set<String> out = new LinkedHashSet<>();
    Set<String> seen = new HashSet<>();
    seen.add(current);
    if (siblingsOnly) { // enough held: only the rest of the current node's siblings
      Frame top = stack.peek();
      if (top != null) {
        for (Document d : top.inHand()) {
          String k = keys.childKey(d);
          if (seen.add(k) && !leaves.contains(k) && !known.containsKey(k)) {
            out.add(k);
            if (out.size() >= keysPerQuery - 1) {
              break;
            }
          }
        }
      }
      return out;
    }
    for (Frame f : stack) {
      for (Document d : f.inHand()) {
        if (!visit(d, out, seen)) {
          return out;
        }
      }
    }
    return out;
  }

  /** Adds the unknown keys under {@code top}, depth first; false once {@code out} is full. */
  private boolean visit(Document top, Set<String> out, Set<String> seen) {
    Deque<Document> todo = new ArrayDeque<>();
    todo.push(top);
    while (!todo.isEmpty()) {
      Document d = todo.pop();
      String k = keys.childKey(d);
      if (!seen.add(k) || leaves.contains(k)) {
        continue;
      }
      List<Document> children = known.get(k);
      if (children == null) {
        out.add(k);
        if (out.size() >= keysPerQuery - 1) {
          return false;
        }
        continue;
      }
      for (int i = children.size() - 1; i >= 0; i--) {
        todo.push(children.get(i));
      }
    }
    return true;
  }

  private void hold(long n) {
    held += n;
    mostHeld = Math.max(mostHeld, held);
  }

  private String keyOf(Document d) {
    return String.valueOf(d.get(keys.field()));
  }

  @Override
  public void close() {
    while (!stack.isEmpty()) {
      stack.pop().close();
    }
  }

  /** The children of one parent (or the roots): read ahead whole, or by a cursor in slices. */
  private final class Frame {
    final @Nullable String parent;
    final int depth;
    private final ArrayDeque<Document> slice = new ArrayDeque<>();
    private final @Nullable Bson filter;
    private @Nullable MongoCursor<Document> cursor;
    private boolean exhausted;

    /** Children read ahead, whole. */
    Frame(String parent, int depth, List<Document> children) {
      this.parent = parent;
      this.depth = depth;
      this.filter = null;
      this.exhausted = true;
      slice.addAll(children);
    }

    /** Children (or roots) read by a cursor, a slice at a time. */
    Frame(@Nullable String parent, int depth, Bson filter) {
      this.parent = parent;
      this.depth = depth;
      this.filter = filter;
    }

    @Nullable Document next() {
      if (slice.isEmpty() && !exhausted) {
        fill();
      }
      return slice.poll();
    }

    /** The documents in hand, not yet given out, in order. */
    Iterable<Document> inHand() {
      return slice;
    }

    private void fill() {
      if (cursor == null) {
        queries++;
        cursor = reads.find(filter).sort(keys.order()).batchSize(Preorder.SLICE).cursor();
      }
      int n = 0;
      while (n < Preorder.SLICE && cursor.hasNext()) {
        slice.add(cursor.next());
        n++;
      }
      hold(n);
      if (n == 0 || (cursor.available() == 0 && cursor.getServerCursor() == null)) {
        close(); // nothing left on the server: no round trip to learn it later
      }
    }

    void close() {
      exhausted = true;
      if (cursor != null) {
        cursor.close();
        cursor = null;
      }
    }
  }
}
