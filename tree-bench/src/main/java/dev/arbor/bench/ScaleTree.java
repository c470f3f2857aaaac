package dev.arbor.bench;

import dev.arbor.core.Node;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * The generated tree of the scale benchmark ({@link ScaleBench}): node {@code n<i>} ({@code i}
 * from 0 to n-1) has children {@code n<8i+1>} to {@code n<8i+8>} (those below n), a complete
 * {@value #FAN_OUT}-ary tree made in preorder on the fly; and the arithmetic of its shape (depths,
 * subtree sizes, the nodes the client reads).
 */
final class ScaleTree {
  /** Children per node of the generated tree. */
  static final int FAN_OUT = 8;

  private ScaleTree() {}

  /** The id of node {@code i}. */
  static String id(long i) {
    return "n" + i;
  }

  /** The depth of node {@code i} (the root, 0, has depth 0). */
  static int depth(long i) {
    int d = 0;
    while (i > 0) {
      i = (i - 1) / FAN_OUT;
      d++;
    }
    return d;
  }

  /** The first node of depth {@code d}. */
  static long firstAt(int d) {
    long first = 0;
    for (int i = 0; i < d; i++) {
      first = first * FAN_OUT + 1;
    }
    return first;
  }

  /** The deepest node of the leftmost path whose {@value #FAN_OUT} children all exist. */
  static long childrenTarget(int n) {
    int d = 0;
    while (firstAt(d + 2) + FAN_OUT - 1 < n) {
      d++;
    }
    return firstAt(d);
  }

  /** The parent of {@link #childrenTarget} (the root if that is the root). */
  static long descendantsTarget(int n) {
    long c = childrenTarget(n);
    return c == 0 ? 0 : (c - 1) / FAN_OUT;
  }

  /** The number of nodes of the subtree of node {@code i} in a tree of {@code n}. */
  static long subtreeSize(long i, long n) {
    long size = 0;
    long lo = i;
    long hi = i;
    while (lo < n) {
      size += Math.min(hi, n - 1) - lo + 1;
      lo = lo * FAN_OUT + 1;
      hi = hi * FAN_OUT + FAN_OUT;
    }
    return size;
  }

  /**
   * The tree of {@code n} nodes in preorder, made on the fly: the stack holds, per open level, the
   * range of siblings still to come.
   */
  static Iterator<Node> generate(long n) {
    return new Iterator<>() {
      /** Per open level: the next sibling, the end of the siblings, their depth. */
      private final ArrayDeque<long[]> open = new ArrayDeque<>(List.of(new long[] {0, 1, 0}));

      @Override
      public boolean hasNext() {
        return !open.isEmpty() && n > 0;
      }

      @Override
      public Node next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        long[] range = open.peek();
        int depth = (int) range[2];
        long i = range[0]++;
        if (range[0] == range[1]) {
          open.pop();
        }
        long first = i * FAN_OUT + 1;
        if (first < n) {
          open.push(new long[] {first, Math.min(first + FAN_OUT, n), depth + 1});
        }
        Map<String, Object> attributes = new LinkedHashMap<>();
        attributes.put("i", i);
        attributes.put("name", "file-" + i + ".txt");
        attributes.put("size", (i * 7919) % 100_000);
        return new Node(id(i), i == 0 ? null : id((i - 1) / FAN_OUT), depth, attributes);
      }
    };
  }
}
