package dev.arbor.mongo.internal.read;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Sorts;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.bson.Queries;
import dev.arbor.mongo.internal.protocol.Reads;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
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
 * answer of at most {@value #LIMIT} documents or one slice of a node read by cursor, and the
 * child keys of at most {@value #HELD} + {@value #LIMIT} of the documents held; never the tree.
 */
public final class KeyedPreorder extends Preorder {
  /**
   * The most nodes whose children one query asks for. Not more: a server that matches each
   * candidate against the whole {@code $in} list (the embedded one) spends keys squared per query.
   */
  public static final int KEYS = 128;
  /** The most documents one query returns (one more tells the answer was cut). */
  public static final int LIMIT = 2_000;
  /** Documents held ahead of the walk past which it stops reading ahead. */
  public static final int HELD = 8_000;

  /** How a pattern's children name their parent. */
  public interface Keys {
    /** The filter of the roots. */
    public Bson roots();

    /** The sibling order. */
    public Bson order();

    /** The field of a child that names its parent. */
    public String field();

    /** The value of {@link #field()} in the children of {@code parent}. */
    public String childKey(Document parent);
  }

  /**
   * The keys of a pattern whose nodes name their parent's id in {@code parentField}: roots have
   * none, siblings are ordered by {@code rankField}.
   */
  public static Keys byParent(String parentField, String rankField) {
    return new Keys() {
      @Override
      public Bson roots() {
        return Queries.isNull(parentField);
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
        return idOf(parent);
      }
    };
  }

  private final Keys keys;
  /** Children read ahead, whole, by the key they name their parent with. */
  private final Map<String, List<Document>> known = new HashMap<>();
  /**
   * The child keys of the documents the walk holds, each computed once: a materialized path's key
   * is built (the parent's path and id), and {@link #ahead} walks the held documents again for
   * every query. Emptied when it outgrows what the walk holds ahead.
   */
  private final Map<Document, String> childKeys = new IdentityHashMap<>();
  /** Keys asked for that no child names: their nodes are leaves. */
  private final Set<String> leaves = new HashSet<>();
  private final int keysPerQuery;
  private final int limit;
  private final int heldAhead;

  public KeyedPreorder(Reads reads, Keys keys, Function<Document, Map<String, Object>> attributes) {
    this(reads, keys, attributes, KEYS, LIMIT, HELD);
  }

  /** With other bounds than {@link #KEYS}, {@link #LIMIT} and {@link #HELD} (for tests). */
  public KeyedPreorder(Reads reads, Keys keys, Function<Document, Map<String, Object>> attributes,
      int keysPerQuery, int limit, int heldAhead) {
    super(reads, keys.roots(), keys.order(), attributes);
    this.keys = keys;
    this.keysPerQuery = keysPerQuery;
    this.limit = limit;
    this.heldAhead = heldAhead;
  }

  @Override
  @Nullable Frame childrenOf(Document d, String id, int depth) {
    String held = childKeys.remove(d); // the walk is past it: its key is not looked at again
    String key = held != null ? held : keys.childKey(d);
    if (leaves.remove(key)) {
      return null;
    }
    List<Document> children = known.remove(key);
    return children != null ? whole(id, depth, children) : fetch(id, depth, key);
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
    asked.addAll(ahead(key, held() >= heldAhead));
    queries++;
    List<Document> answer = retried(() -> {
      List<Document> all = new ArrayList<>();
      try (MongoCursor<Document> c = reads.find(in(keys.field(), asked))
          .sort(Sorts.orderBy(Sorts.ascending(keys.field()), keys.order()))
          .limit(limit + 1).batchSize(limit + 1).cursor()) {
        while (c.hasNext()) {
          all.add(c.next());
        }
      }
      return all;
    });
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
      return whole(id, depth, mine);
    }
    if (!cut) {
      return null; // a leaf
    }
    return byCursor(id, depth, eq(keys.field(), key)); // more than an answer holds, or cut off
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
          String k = childKey(d);
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
      String k = childKey(d);
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

  private String childKey(Document d) {
    String k = childKeys.get(d);
    if (k == null) {
      if (childKeys.size() >= heldAhead + limit) {
        childKeys.clear();
      }
      k = keys.childKey(d);
      childKeys.put(d, k);
    }
    return k;
  }

  private String keyOf(Document d) {
    return String.valueOf(d.get(keys.field()));
  }
}
