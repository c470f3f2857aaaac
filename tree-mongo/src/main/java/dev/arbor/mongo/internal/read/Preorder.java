package dev.arbor.mongo.internal.read;

import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.ReadRetry;
import dev.arbor.mongo.internal.protocol.Reads;
import java.util.ArrayDeque;
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
 * A preorder walk of a stored forest with a stack of frames, one per open level: the roots read
 * by a cursor in sibling order, then, under each node that has children, a frame of its
 * children. How a pattern finds a node's children is its subclass's: {@link KeyedPreorder} for
 * children that name their parent (many parents a query), {@link ListedPreorder} for parents that
 * list their children. A node met again while it is an open parent is a cycle of links, refused.
 */
public abstract class Preorder implements PreorderCursor {
  /** Documents per slice: each cursor's batch and each read of listed children by ids. */
  public static final int SLICE = 1_000;

  final Reads reads;
  private final Bson order;
  private final Function<Document, Map<String, Object>> attributes;
  /** The open frames, the current one on top. */
  final Deque<Frame> stack = new ArrayDeque<>();
  /** The ids of the open frames' parents: a node among them again is a cycle. */
  private final Set<String> path = new HashSet<>();
  /** Documents read and not yet given out, and the most there were. */
  private long held;
  private long mostHeld;
  /** The queries sent so far. */
  long queries;
  private @Nullable Node next;

  /**
   * @param roots the filter of the roots
   * @param order the sibling order of a cursor
   */
  Preorder(Reads reads, Bson roots, Bson order,
      Function<Document, Map<String, Object>> attributes) {
    this.reads = reads;
    this.order = order;
    this.attributes = attributes;
    stack.push(byCursor(null, 0, roots));
  }

  /** A frame of children read already, whole (counted as held by the caller). */
  final Frame whole(String parent, int depth, List<Document> children) {
    Frame f = new Frame(parent, depth, null, List.of());
    f.exhausted = true;
    f.slice.addAll(children);
    return f;
  }

  /** A frame of children (or roots) read by a cursor over {@code filter}, in slices. */
  final Frame byCursor(@Nullable String parent, int depth, Bson filter) {
    return new Frame(parent, depth, filter, List.of());
  }

  /** A frame of children read by their ids, listed in order, in slices. */
  final Frame byIds(String parent, int depth, List<String> listed) {
    return new Frame(parent, depth, null, listed);
  }

  /**
   * The frame of the children of node {@code d} (whose id is {@code id}) at {@code depth}, or
   * null if it has none.
   */
  abstract @Nullable Frame childrenOf(Document d, String id, int depth);

  /**
   * The answer of a whole query (read at once, not a cursor held open), sent again after a
   * transient driver error as the reads' retry says ({@link Reads#retry()}; none: thrown).
   */
  final <T> T retried(java.util.function.Supplier<T> query) {
    ReadRetry retry = reads.retry();
    return retry == null ? query.get() : retry.retrying(query);
  }

  /** The queries sent so far (for tests). */
  public final long queries() {
    return queries;
  }

  /** The most documents held at once, read and not yet given out (for tests). */
  public final long mostHeld() {
    return mostHeld;
  }

  /** The documents read and not yet given out. */
  final long held() {
    return held;
  }

  /** Counts {@code n} documents read. */
  final void hold(long n) {
    held += n;
    mostHeld = Math.max(mostHeld, held);
  }

  @Override
  public final boolean hasNext() {
    if (next == null) {
      next = advance();
    }
    return next != null;
  }

  @Override
  public final Node next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Node e = next;
    next = null;
    return e;
  }

  private @Nullable Node advance() {
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
      if (!(d.get(MongoTreeStore.ID) instanceof String id)) {
        continue; // no node of this store: a tree of another id type (Queries.ids)
      }
      if (path.contains(id)) {
        throw new TreeException("node '" + id + "' is its own ancestor (a cycle of links):"
            + " check() lists the problems");
      }
      Node e = new Node(Forest.nodeId(id, frame.parent), frame.parent, frame.depth,
          attributes.apply(d));
      Frame down = childrenOf(d, id, frame.depth + 1);
      if (down != null) {
        path.add(id);
        stack.push(down);
      }
      return e;
    }
    return null;
  }

  @Override
  public final void close() {
    while (!stack.isEmpty()) {
      stack.pop().close();
    }
  }

  /**
   * The children of one parent (or the roots), in order: read already, whole; or read a slice at
   * a time by a cursor, or by their listed ids.
   */
  final class Frame {
    final @Nullable String parent;
    final int depth;
    private final ArrayDeque<Document> slice = new ArrayDeque<>();
    private final @Nullable Bson filter;
    private final List<String> listed;
    private int listedAt;
    private @Nullable ResumingCursor cursor;
    private boolean exhausted;

    private Frame(@Nullable String parent, int depth, @Nullable Bson filter,
        List<String> listed) {
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

    /** The documents in hand, not yet given out, in order. */
    Iterable<Document> inHand() {
      return slice;
    }

    private void fill() {
      int n = 0;
      if (filter != null) {
        if (cursor == null) {
          queries++;
          Bson f = filter;
          // resumed if the server killed it while the consumer was away (idle cursor timeout)
          cursor = new ResumingCursor(skip -> reads.find(f).sort(order).skip(skip)
              .batchSize(SLICE).cursor(), reads.retry());
        }
        while (n < SLICE && cursor.hasNext()) {
          slice.add(cursor.next());
          n++;
        }
        if (n == 0 || (cursor.available() == 0 && cursor.drained())) {
          close(); // nothing left on the server: no round trip to learn it later
        }
      } else {
        List<String> ids = listed.subList(listedAt, Math.min(listed.size(), listedAt + SLICE));
        listedAt += ids.size();
        exhausted = listedAt == listed.size();
        queries++;
        Map<String, Document> found = retried(() -> reads.documents(ids, null));
        for (String id : ids) {
          Document d = found.get(id);
          if (d != null) { // a listed child that does not exist is not part of the tree
            slice.add(d);
            n++;
          }
        }
      }
      hold(n);
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
