package dev.arbor.mongo;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.arbor.core.Tree;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Whether the documents of a whole tree fit MongoDB's 16 MB per document in a pattern, computed
 * before anything is written and without building the documents: in one pass over the tree's
 * preorder, each node's structural bytes from its parent's (an array of ancestors and a path grow
 * with depth, a {@code children} array with fan-out), plus its id and its attributes as encoded.
 * Memory: a few numbers per node, never the documents (whose total grows with depth squared).
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
    Failure f = first(pattern, tree, registry);
    if (f == null) {
      return null;
    }
    List<String> hold = new ArrayList<>();
    Set<TreePattern> others = EnumSet.allOf(TreePattern.class);
    others.remove(pattern);
    for (TreePattern other : others) {
      if (first(other, tree, registry) == null) {
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

  private static @Nullable Failure first(TreePattern pattern, Tree tree,
      CodecRegistry registry) {
    Map<String, Long> structure = new HashMap<>(); // ancestors array or path bytes, by id
    Map<String, Integer> depth = new HashMap<>();
    Map<String, Long> own = new HashMap<>(); // child references: the parent's own bytes
    Map<String, Long> children = new HashMap<>(); // child references: children array bytes
    Map<String, Integer> fanOut = new HashMap<>();
    for (Tree.Entry e : tree.entries()) {
      String parent = e.parentId();
      int d = parent == null ? 0 : depth.get(parent) + 1;
      depth.put(e.id(), d);
      long grown = 0; // the part that grows with depth
      long fixed = 5 + stringElement(3, bytes(e.id())) + 1 + 5 + 8; // document, _id, rank
      switch (pattern) {
        case PARENT_REFERENCES -> fixed += parent == null ? 8 : stringElement(6, bytes(parent));
        case CHILD_REFERENCES -> fixed += 1 + 9 + 5; // an empty children array
        case ARRAY_OF_ANCESTORS -> {
          fixed += (parent == null ? 8 : stringElement(6, bytes(parent))) + 1 + 10 + 5;
          grown = parent == null ? 0
              : structure.get(parent) + arrayString(d - 1, bytes(parent));
        }
        case MATERIALIZED_PATHS -> {
          // path = (parent's path, or ",") + parent + ","; a root's path is null
          grown = parent == null ? 0 : Math.max(1, structure.get(parent))
              + bytes(MaterializedPathTreeStore.escape(parent)) + 1;
          fixed += parent == null ? 6 : stringElement(4, 0);
        }
        case NESTED_SETS -> fixed += (parent == null ? 8 : stringElement(6, bytes(parent)))
            + 3 * (1 + 6 + 8);
      }
      if (pattern == TreePattern.ARRAY_OF_ANCESTORS || pattern == TreePattern.MATERIALIZED_PATHS) {
        structure.put(e.id(), grown);
      }
      long attributes = e.attributes().isEmpty() ? 0
          : Encoded.size(new Document(e.attributes()).toBsonDocument(Document.class, registry))
              - 5;
      long total = fixed + grown + attributes;
      if (total > MAX_NODE) {
        return new Failure(e.id(), d, total, grown > attributes
            ? (pattern == TreePattern.ARRAY_OF_ANCESTORS ? "its array of ancestors"
                : "its path") + " grows with its depth"
            : "its attributes alone are " + attributes + " bytes");
      }
      if (pattern == TreePattern.CHILD_REFERENCES) {
        own.put(e.id(), total);
        if (parent != null) {
          int index = fanOut.merge(parent, 1, Integer::sum) - 1;
          long array = children.merge(parent, arrayString(index, bytes(e.id())), Long::sum);
          if (own.get(parent) + array > MAX_NODE) {
            return new Failure(parent, depth.get(parent), own.get(parent) + array,
                "its children array grows with its " + (index + 1) + " children");
          }
        }
      }
    }
    return null;
  }
}
