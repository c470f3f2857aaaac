package dev.arbor.mongo;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a tree would cost in each of the five patterns before any of it is written, from {@link
 * TreePattern#measure}: the total and the largest of the node documents a load writes, and
 * whether each document fits MongoDB's 16 MB. Sizes are measured in encoded BSON, the unit of
 * MongoDB's limits (never JSON text), for the documents a load writes with the default options
 * (string ids, the default field names): {@code _id}, the pattern's structural fields, the
 * attributes as the driver's default codecs encode them, and the load's mark. Other field names
 * and id types change each document by a few bytes; indexes and the server's own overhead are not
 * counted.
 *
 * <p>The totals show how a pattern grows: parent references, child references and nested sets
 * keep documents whose size does not depend on the node's depth, so their total grows with the
 * number of nodes; an array of ancestors and materialized paths keep the whole root-to-node path
 * in every document ({@link TreePattern#documentsGrowWithDepth()}), so their total grows with the
 * sum of the depths: with the square of the depth for a chain.
 */
public final class TreeSizes {
  /**
   * The node documents of a tree in one pattern.
   *
   * @param totalBytes the sum of their encoded sizes, in bytes
   * @param largestBytes the encoded size of the largest, in bytes (0 for an empty tree)
   */
  public record Documents(long totalBytes, long largestBytes) {}

  private final long nodes;
  private final Map<TreePattern, Documents> documents;
  private final Map<TreePattern, NodeTooLargeException> refusals;

  /**
   * The sizes of a tree of {@code nodes} nodes: per pattern its documents, or why the pattern
   * refuses it.
   */
  public TreeSizes(long nodes, Map<TreePattern, Documents> documents,
      Map<TreePattern, NodeTooLargeException> refusals) {
    this.nodes = nodes;
    this.documents = new EnumMap<>(documents);
    this.refusals = refusals.isEmpty() ? Map.of() : new EnumMap<>(refusals);
  }

  /** The number of nodes measured. */
  public long nodes() {
    return nodes;
  }

  /** The node documents of the tree in {@code pattern}: their total and the largest. */
  public Documents documents(TreePattern pattern) {
    return documents.get(requireNonNull(pattern, "pattern"));
  }

  /** The sum of the encoded sizes of the tree's node documents in {@code pattern}, in bytes. */
  public long totalBytes(TreePattern pattern) {
    return documents(pattern).totalBytes();
  }

  /**
   * The refusal a load of the tree in {@code pattern} would throw, naming the first node whose
   * document would pass MongoDB's 16 MB, its depth and size and the patterns that would hold the
   * tree (as {@link TreePattern#sizeRefusal}); empty if every document fits.
   */
  public Optional<NodeTooLargeException> refusal(TreePattern pattern) {
    return Optional.ofNullable(refusals.get(requireNonNull(pattern, "pattern")));
  }

  /**
   * The patterns whose documents do not grow with depth (parent references, child references,
   * nested sets: the tree in space linear in its size), each of whose documents fit, in
   * declaration order.
   */
  public List<TreePattern> linearPatterns() {
    List<TreePattern> linear = new ArrayList<>();
    for (TreePattern p : TreePattern.values()) {
      if (!p.documentsGrowWithDepth() && !refusals.containsKey(p)) {
        linear.add(p);
      }
    }
    return linear;
  }

  /** The number of nodes and, per pattern, the total and largest document in bytes. */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("TreeSizes{nodes=").append(nodes);
    for (var e : documents.entrySet()) {
      s.append(", ").append(e.getKey()).append("=").append(e.getValue().totalBytes())
          .append(" B (largest ").append(e.getValue().largestBytes()).append(" B")
          .append(refusals.containsKey(e.getKey()) ? ", too large" : "").append(')');
    }
    return s.append('}').toString();
  }
}
