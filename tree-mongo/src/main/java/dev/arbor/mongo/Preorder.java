package dev.arbor.mongo;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.Function;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A preorder walk of a stored forest with a stack of per-parent reads: the roots by one cursor in
 * sibling order, then, for each node that has children, its children by a cursor in sibling order
 * (or, where the parent lists them, by {@code _id} in slices). Which nodes of a slice of siblings
 * have children is asked in one query per slice, so leaves cost no query of their own.
 *
 * <p>Client memory: one slice of at most {@link #SLICE} documents per open level, so at most
 * depth × slice documents (a level whose cursor is exhausted holds only what is left of its
 * slice). Round trips: one query per node that has children, plus one per slice of siblings,
 * plus the cursors' own batches.
 */
final class Preorder implements PreorderCursor {
  /** Documents per slice of siblings: each cursor's batch and each has-children query. */
  static final int SLICE = 1_000;

  /** How a pattern links parents to children, for the walk. */
  interface Links {
    /** The filter of the roots. */
    Bson roots();

    /** The sibling order of a cursor. */
    Bson order();

    /**
     * The filter of the children of {@code parent}, or null if the pattern lists them in the
     * parent ({@link #listed}).
     */
    @Nullable Bson children(Document parent);

    /** The ids of the children listed in {@code parent}, in order (only if {@link #children} is null). */
    default List<String> listed(Document parent) {
      return List.of();
    }

    /** The ids among {@code siblings} of the nodes that have at least one child. */
    Set<String> withChildren(Reads r, List<Document> siblings);
  }

  /**
   * The links of a pattern whose nodes name their parent's id in {@code parentField}: roots have
   * none, siblings are ordered by {@code orderField}, and a sibling has children when some
   * document names it.
   */
  static Links byParent(String parentField, String orderField) {
    return new Links() {
      @Override
      public Bson roots() {
        return MongoTreeStore.isNull(parentField);
      }

      @Override
      public Bson order() {
        return com.mongodb.client.model.Sorts.ascending(orderField);
      }

      @Override
      public Bson children(Document parent) {
        return com.mongodb.client.model.Filters.eq(parentField,
            parent.getString(MongoTreeStore.ID));
      }

      @Override
      public Set<String> withChildren(Reads r, List<Document> siblings) {
        return keyedParents(r, siblings, parentField, d -> d.getString(MongoTreeStore.ID));
      }
    };
  }

  /**
   * The ids among {@code siblings} whose key has at least one document with that value of {@code
   * field}: one aggregation that returns at most one small document per sibling.
   */
  static Set<String> keyedParents(Reads r, List<Document> siblings, String field,
      Function<Document, String> key) {
    Map<String, String> idByKey = new HashMap<>();
    for (Document d : siblings) {
      idByKey.put(key.apply(d), d.getString(MongoTreeStore.ID));
    }
    Set<String> out = new HashSet<>();
    if (idByKey.isEmpty()) {
      return out;
    }
    for (Document g : r.aggregate(List.of(
        Aggregates.match(in(field, new ArrayList<>(idByKey.keySet()))),
        Aggregates.group("$" + field, Accumulators.sum("n", 1))))) {
      String id = idByKey.get(String.valueOf(g.get(MongoTreeStore.ID)));
      if (id != null) {
        out.add(id);
      }
    }
    return out;
  }

  private final Reads reads;
  private final Links links;
  private final Function<Document, Map<String, Object>> attributes;
  private final Deque<Level> stack = new ArrayDeque<>();
  /** The ids of the open levels' parents: a node among them again is a cycle. */
  private final Set<String> path = new HashSet<>();
  private Tree.@Nullable Entry next;

  Preorder(Reads reads, Links links, Function<Document, Map<String, Object>> attributes) {
    this.reads = reads;
    this.links = links;
    this.attributes = attributes;
    stack.push(new Level(null, 0, links.roots(), List.of()));
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
      Level level = stack.peek();
      Document d = level.next();
      if (d == null) {
        level.close();
        stack.pop();
        if (level.parent != null) {
          path.remove(level.parent);
        }
        continue;
      }
      String id = d.getString(MongoTreeStore.ID);
      if (path.contains(id)) {
        throw new TreeException("node '" + id + "' is its own ancestor (a cycle of links):"
            + " check() lists the problems");
      }
      Tree.Entry e = new Tree.Entry(id, level.parent, level.depth, attributes.apply(d));
      if (level.hasChildren(d)) {
        Bson filter = links.children(d);
        path.add(id);
        stack.push(new Level(id, level.depth + 1, filter,
            filter == null ? links.listed(d) : List.of()));
      }
      return e;
    }
    return null;
  }

  @Override
  public void close() {
    while (!stack.isEmpty()) {
      stack.pop().close();
    }
  }

  /** The children of one parent (or the roots), read slice by slice. */
  private final class Level {
    final @Nullable String parent;
    final int depth;
    private final @Nullable Bson filter;
    private final List<String> listed;
    private int listedAt;
    private @Nullable MongoCursor<Document> cursor;
    private boolean exhausted;
    private final ArrayDeque<Document> slice = new ArrayDeque<>();
    private Set<String> withChildren = Set.of();

    Level(@Nullable String parent, int depth, @Nullable Bson filter, List<String> listed) {
      this.parent = parent;
      this.depth = depth;
      this.filter = filter;
      this.listed = listed;
    }

    @Nullable Document next() {
      if (slice.isEmpty() && !exhausted) {
        fill();
      }
      return slice.poll();
    }

    boolean hasChildren(Document d) {
      return withChildren.contains(d.getString(MongoTreeStore.ID));
    }

    private void fill() {
      List<Document> read = new ArrayList<>();
      if (filter != null) {
        if (cursor == null) {
          cursor = reads.find(filter).sort(links.order()).batchSize(SLICE).cursor();
        }
        while (read.size() < SLICE && cursor.hasNext()) {
          read.add(cursor.next());
        }
        if (cursor.available() == 0 && cursor.getServerCursor() == null) {
          close(); // nothing left on the server: no round trip to learn it later
        }
      } else {
        List<String> ids = listed.subList(listedAt, Math.min(listed.size(), listedAt + SLICE));
        listedAt += ids.size();
        Map<String, Document> found = reads.documents(ids, null);
        for (String id : ids) {
          Document d = found.get(id);
          if (d != null) { // a listed child that does not exist is not part of the tree
            read.add(d);
          }
        }
        exhausted = listedAt == listed.size();
      }
      if (read.isEmpty()) {
        exhausted = true;
        return;
      }
      withChildren = links.withChildren(reads, read);
      slice.addAll(read);
    }

    void close() {
      exhausted = exhausted || filter != null;
      if (cursor != null) {
        cursor.close();
        cursor = null;
      }
    }
  }
}
