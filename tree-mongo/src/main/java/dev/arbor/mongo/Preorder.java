package dev.arbor.mongo;

import com.mongodb.client.MongoCursor;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
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
 * A preorder walk of a stored forest whose parents list their children's ids (child
 * references), with a stack of per-parent reads: the roots by one cursor in sibling order, then,
 * for each node that lists children, those children by {@code _id} in slices, in the order
 * listed. A node lists its children, so leaves cost no query. (Patterns whose children name their
 * parent walk with {@link KeyedPreorder}.)
 *
 * <p>Client memory: one slice of at most {@link #SLICE} documents per open level, so at most
 * depth × slice documents. Round trips: one query per node that has children (more for one with
 * more than a slice), plus the roots cursor's batches.
 */
final class Preorder implements PreorderCursor {
  /** Documents per slice of siblings: each cursor's batch and each read by ids. */
  static final int SLICE = 1_000;

  /** How a pattern lists children in their parent, for the walk. */
  interface Links {
    /** The filter of the roots. */
    Bson roots();

    /** The sibling order of the roots cursor. */
    Bson order();

    /** The ids of the children listed in {@code parent}, in order. */
    List<String> listed(Document parent);
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
      List<String> listed = links.listed(d);
      if (!listed.isEmpty()) {
        path.add(id);
        stack.push(new Level(id, level.depth + 1, null, listed));
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
