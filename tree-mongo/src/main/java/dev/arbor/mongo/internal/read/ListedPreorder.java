package dev.arbor.mongo.internal.read;

import dev.arbor.mongo.internal.protocol.Reads;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The preorder walk of a pattern whose parents list their children's ids (child references): the
 * roots by a cursor in sibling order, the children of each node that lists some by {@code _id}
 * in slices of {@value Preorder#SLICE}, in the order listed. A node lists its children, so leaves
 * cost no query.
 *
 * <p>Client memory: one slice per open level, depth × {@value Preorder#SLICE} documents at most.
 * Round trips: one query per node that has children (one per slice of them), plus the roots
 * cursor's batches.
 */
public final class ListedPreorder extends Preorder {
  /** How a pattern lists children in their parent. */
  public interface Links {
    /** The filter of the roots. */
    Bson roots();

    /** The sibling order of the roots cursor. */
    Bson order();

    /** The ids of the children listed in {@code parent}, in order. */
    List<String> listed(Document parent);
  }

  private final Links links;

  public ListedPreorder(Reads reads, Links links,
      Function<Document, Map<String, Object>> attributes) {
    super(reads, links.roots(), links.order(), attributes);
    this.links = links;
  }

  @Override
  @Nullable Frame childrenOf(Document d, String id, int depth) {
    List<String> listed = links.listed(d);
    return listed.isEmpty() ? null : byIds(id, depth, listed);
  }
}
