package dev.arbor.mongo;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.arbor.core.Tree;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Whether the documents of a whole tree fit MongoDB's 16 MB per document in a pattern, computed
 * before anything is written and without building the documents: in one pass over the tree's
 * preorder, each node's structural bytes from its parent's (an array of ancestors and a path grow
 * with depth, a {@code children} array with fan-out), plus its id and its attributes as encoded.
 * Memory: a few numbers per node on the path from the root, never the documents (whose total
 * grows with depth squared). All five patterns are walked at once, to name those that hold the
 * tree.
 */
final class Fits {
  /** The largest node document Arbor writes: 16 MB less room for the statement around it. */
  static final long MAX_NODE = Encoded.MAX_DOCUMENT - 16 * 1024;

  /** Bytes of an element {@code name: <string s>} of a BSON document, s of {@code n} bytes. */
  private static long stringElement(int nameBytes, long n) {
    return 1 + nameBytes + 1 + 4 + n + 1;
  }

  /** Bytes of the array element at {@code index} holding a string of {@code n} bytes. */
  private static long arrayString(int index, long n) {
    return stringElement(Integer.toString(index).length(), n);
  }

  private static long bytes(String s) {
    return s.getBytes(UTF_8).length;
  }

  private Fits() {}

  /**
   * The refusal of the first node of {@code tree} whose document in {@code pattern} would pass
   * {@link #MAX_NODE}, naming the patterns that would hold the tree; null if every document fits.
   */
  static @Nullable NodeTooLargeException check(TreePattern pattern, Tree tree,
      CodecRegistry registry) {
    return check(pattern, tree.entries().iterator(), registry);
  }

  /**
   * As {@link #check(TreePattern, Tree, CodecRegistry)}, over entries in preorder, read once;
   * memory grows with the depth of the tree, not its size.
   *
   * @throws IllegalArgumentException naming the entry if the entries are not in preorder
   */
  static @Nullable NodeTooLargeException check(TreePattern pattern,
      Iterator<? extends Tree.Entry> entries, CodecRegistry registry) {
    Map<TreePattern, Walk> walks = new EnumMap<>(TreePattern.class);
    for (TreePattern p : TreePattern.values()) {
      walks.put(p, new Walk(p));
    }
    Map<TreePattern, Failure> failed = new EnumMap<>(TreePattern.class);
    long count = 0;
    while (entries.hasNext()) {
      Tree.Entry e = entries.next();
      count++;
      long attributes = e.attributes().isEmpty() ? 0
          : Encoded.size(new Document(e.attributes()).toBsonDocument(Document.class, registry))
              - 5;
      for (var w : walks.entrySet()) {
        if (!failed.containsKey(w.getKey())) {
          Failure f = w.getValue().add(e, attributes, count);
          if (f != null) {
            failed.put(w.getKey(), f);
          }
        }
      }
    }
    Failure f = failed.get(pattern);
    if (f == null) {
      return null;
    }
    List<String> hold = new ArrayList<>();
    for (TreePattern other : TreePattern.values()) {
      if (other != pattern && !failed.containsKey(other)) {
        hold.add(other.toString());
      }
    }
    return new NodeTooLargeException(f.id(), f.bytes(), "Cannot store node '" + f.id()
        + "' (depth " + f.depth() + ") in the " + pattern + " pattern: its document would be at"
        + " least " + f.bytes() + " bytes of BSON, past MongoDB's 16 MB limit (" + f.why() + "); "
        + (hold.isEmpty() ? "no pattern holds this tree" : String.join(", ", hold)
            + (hold.size() == 1 ? " holds" : " hold") + " this tree")
        + ". Nothing was written.");
  }

  /** The first node too large, its depth, size and why. */
  private record Failure(String id, int depth, long bytes, String why) {}

  /** A node on the path from the root to the entry in hand. */
  private static final class Frame {
    final String id;
    final int depth;
    final long structure; // ancestors array or path bytes
    final long own; // child references: the node's own bytes
    long children; // child references: children array bytes
    int fanOut;

    Frame(String id, int depth, long structure, long own) {
      this.id = id;
      this.depth = depth;
      this.structure = structure;
      this.own = own;
    }
  }

  /** One pattern's sizes along the preorder: a stack of the open nodes. */
  private static final class Walk {
    private final TreePattern pattern;
    private final Deque<Frame> path = new ArrayDeque<>();

    Walk(TreePattern pattern) {
      this.pattern = pattern;
    }

    @Nullable Failure add(Tree.Entry e, long attributes, long index) {
      String parent = e.parentId();
      while (!path.isEmpty() && !path.peek().id.equals(parent)) {
        path.pop();
      }
      Frame up = path.peek();
      if (parent != null && up == null) {
        throw new IllegalArgumentException("entry " + index + " '" + e.id() + "' comes after"
            + " its parent '" + parent + "' has been left: entries must be in preorder");
      }
      int d = up == null ? 0 : up.depth + 1;
      long grown = 0; // the part that grows with depth
      long fixed = 5 + stringElement(3, bytes(e.id())) + 1 + 5 + 8; // document, _id, rank
      switch (pattern) {
        case PARENT_REFERENCES -> fixed += parent == null ? 8 : stringElement(6, bytes(parent));
        case CHILD_REFERENCES -> fixed += 1 + 9 + 5; // an empty children array
        case ARRAY_OF_ANCESTORS -> {
          fixed += (parent == null ? 8 : stringElement(6, bytes(parent))) + 1 + 10 + 5;
          grown = up == null ? 0 : up.structure + arrayString(d - 1, bytes(parent));
        }
        case MATERIALIZED_PATHS -> {
          // path = (parent's path, or ",") + parent + ","; a root's path is null
          grown = up == null ? 0 : Math.max(1, up.structure)
              + bytes(MaterializedPathTreeStore.escape(parent)) + 1;
          fixed += parent == null ? 6 : stringElement(4, 0);
        }
        case NESTED_SETS -> fixed += (parent == null ? 8 : stringElement(6, bytes(parent)))
            + 3 * (1 + 6 + 8);
      }
      long total = fixed + grown + attributes;
      if (total > MAX_NODE) {
        return new Failure(e.id(), d, total, grown > attributes
            ? (pattern == TreePattern.ARRAY_OF_ANCESTORS ? "its array of ancestors"
                : "its path") + " grows with its depth"
            : "its attributes alone are " + attributes + " bytes");
      }
      if (pattern == TreePattern.CHILD_REFERENCES && up != null) {
        int i = up.fanOut++;
        up.children += arrayString(i, bytes(e.id()));
        if (up.own + up.children > MAX_NODE) {
          return new Failure(up.id, up.depth, up.own + up.children,
              "its children array grows with its " + (i + 1) + " children");
        }
      }
      path.push(new Frame(e.id(), d, grown, total));
      return null;
    }
  }
}
