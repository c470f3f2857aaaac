package dev.arbor.mongo.internal.bson;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.NodeTooLargeException;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.TreeSizes;
import dev.arbor.mongo.internal.layout.MaterializedPathLayout;
import dev.arbor.mongo.internal.protocol.Step;
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
 * The documents of a whole tree in every pattern, measured before anything is written and
 * without building them: whether each fits MongoDB's 16 MB per document, the largest, and their
 * total. One pass over the tree's preorder computes each node's document from its parent's (an
 * array of ancestors and a path grow with depth, a {@code children} array with fan-out), plus its
 * id and its attributes as encoded. Memory: a few numbers per node on the path from the root,
 * never the documents (whose total grows with depth squared). All five patterns are walked at
 * once, to name those that hold the tree.
 *
 * <p>The sizes are those of the documents a load writes with the default options (string ids,
 * the default field names, no scope), byte for byte: {@code _id}, the pattern's structural
 * fields, the attributes and the load's mark {@code arborOp: {v: <int64>, s: <int32>}}. Other
 * field names or id types change each document by a few bytes.
 */
public final class Fits {
  /** The largest node document Arbor writes: 16 MB less room for the statement around it. */
  public static final long MAX_NODE = Encoded.MAX_DOCUMENT - 16 * 1024;

  /** A document's frame: its length (int32) and its terminating NUL. */
  private static final int DOCUMENT = 5;
  /** {@code arborRank: <int64>}. */
  private static final int RANK = 1 + "arborRank".length() + 1 + 8;
  /** The load's mark, {@code arborOp: {v: <int64>, s: <int32>}}. */
  private static final int MARK = 1 + Step.MARK.length() + 1
      + DOCUMENT + (1 + 2 + 8) + (1 + 2 + 4);
  /** {@code name: null}. */
  private static long nullElement(int nameBytes) {
    return 1 + nameBytes + 1;
  }

  /** {@code name: <int64>}. */
  private static long longElement(int nameBytes) {
    return 1 + nameBytes + 1 + 8;
  }

  /** Bytes of an element {@code name: <string s>} of a BSON document, s of {@code n} bytes. */
  private static long stringElement(int nameBytes, long n) {
    return 1 + nameBytes + 1 + 4 + n + 1;
  }

  /** Bytes of the array element at {@code index} holding a string of {@code n} bytes. */
  private static long arrayString(int index, long n) {
    return stringElement(Integer.toString(index).length(), n);
  }

  /** Bytes of an element holding an empty array: {@code name: []}. */
  private static long emptyArray(int nameBytes) {
    return 1 + nameBytes + 1 + DOCUMENT;
  }

  private static long bytes(String s) {
    return s.getBytes(UTF_8).length;
  }

  private Fits() {}

  /**
   * The refusal of the first node of {@code tree} whose document in {@code pattern} would pass
   * {@link #MAX_NODE}, naming the patterns that would hold the tree; null if every document fits.
   */
  public static @Nullable NodeTooLargeException check(TreePattern pattern, Tree tree,
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
      Iterator<? extends Node> entries, CodecRegistry registry) {
    return measure(entries, registry).refusal(pattern).orElse(null);
  }

  /**
   * The documents of the tree that {@code entries} give, in preorder, in every pattern: read once,
   * memory growing with the depth of the tree, not its size.
   *
   * @throws IllegalArgumentException naming the entry if the entries are not in preorder
   */
  public static TreeSizes measure(Iterator<? extends Node> entries, CodecRegistry registry) {
    Map<TreePattern, Walk> walks = new EnumMap<>(TreePattern.class);
    for (TreePattern p : TreePattern.values()) {
      walks.put(p, new Walk(p));
    }
    long count = 0;
    while (entries.hasNext()) {
      Node e = entries.next();
      count++;
      long attributes = e.attributes().isEmpty() ? 0
          : Encoded.size(new Document(e.attributes()).toBsonDocument(Document.class, registry))
              - DOCUMENT;
      for (Walk w : walks.values()) {
        w.add(e, attributes, count);
      }
    }
    Map<TreePattern, TreeSizes.Documents> documents = new EnumMap<>(TreePattern.class);
    Map<TreePattern, NodeTooLargeException> refusals = new EnumMap<>(TreePattern.class);
    for (Walk w : walks.values()) {
      documents.put(w.pattern, new TreeSizes.Documents(w.total, w.largest));
    }
    for (Walk w : walks.values()) {
      if (w.failure != null) {
        refusals.put(w.pattern, refusal(w.pattern, w.failure, walks));
      }
    }
    return new TreeSizes(count, documents, refusals);
  }

  private static NodeTooLargeException refusal(TreePattern pattern, Failure f,
      Map<TreePattern, Walk> walks) {
    List<String> hold = new ArrayList<>();
    for (TreePattern other : TreePattern.values()) {
      if (other != pattern && walks.get(other).failure == null) {
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

  /** One pattern's sizes along the preorder: a stack of the open nodes, the total, the largest. */
  private static final class Walk {
    private final TreePattern pattern;
    private final Deque<Frame> path = new ArrayDeque<>();
    /** The documents' total so far: each complete but the open ones' children arrays. */
    long total;
    long largest;
    @Nullable Failure failure;

    Walk(TreePattern pattern) {
      this.pattern = pattern;
    }

    void add(Node e, long attributes, long index) {
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
      long fixed = DOCUMENT + stringElement(3, bytes(e.id())) + MARK; // document, _id, mark
      long parentElement = parent == null ? nullElement(6) : stringElement(6, bytes(parent));
      switch (pattern) {
        case PARENT_REFERENCES -> fixed += parentElement + RANK;
        case CHILD_REFERENCES -> fixed += emptyArray(8) + (parent == null ? RANK : 0);
        case ARRAY_OF_ANCESTORS -> {
          fixed += parentElement + emptyArray(9) + RANK;
          grown = up == null ? 0 : up.structure + arrayString(d - 1, bytes(parent));
        }
        case MATERIALIZED_PATHS -> {
          // path = (parent's path, or ",") + parent + ","; a root's path is null
          grown = up == null ? 0 : Math.max(1, up.structure)
              + bytes(MaterializedPathLayout.escape(parent)) + 1;
          fixed += (parent == null ? nullElement(4) : stringElement(4, 0)) + RANK;
        }
        case NESTED_SETS -> fixed += parentElement + longElement(4) + longElement(5)
            + longElement(10);
      }
      long size = fixed + grown + attributes;
      total += size;
      largest = Math.max(largest, size);
      if (size > MAX_NODE && failure == null) {
        failure = new Failure(e.id(), d, size, grown > attributes
            ? (pattern == TreePattern.ARRAY_OF_ANCESTORS ? "its array of ancestors"
                : "its path") + " grows with its depth"
            : "its attributes alone are " + attributes + " bytes");
      }
      if (pattern == TreePattern.CHILD_REFERENCES && up != null) {
        int i = up.fanOut++;
        long item = arrayString(i, bytes(e.id()));
        up.children += item;
        total += item;
        largest = Math.max(largest, up.own + up.children);
        if (up.own + up.children > MAX_NODE && failure == null) {
          failure = new Failure(up.id, up.depth, up.own + up.children,
              "its children array grows with its " + (i + 1) + " children");
        }
      }
      path.push(new Frame(e.id(), d, grown, size));
    }
  }
}
