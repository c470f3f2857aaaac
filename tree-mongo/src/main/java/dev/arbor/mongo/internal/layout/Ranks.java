package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.ne;

import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import dev.arbor.core.Position;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.Change;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Sibling order as a sparse integer {@code arborRank} field: siblings sort by rank; a node placed
 * between two siblings takes the midpoint of their ranks, one placed first or last takes the
 * smallest or largest rank minus or plus {@link #GAP}. Only when two neighbours have no integer
 * between them are the siblings of that one parent renumbered (one bulk write), which a run of
 * {@code log2(GAP)} = 20 inserts at the same place can cause at most once.
 *
 * <p>Each placement costs one indexed query ({@code {parent, rank}} index: the neighbour of the
 * anchor, or the first or last sibling) and no write besides the node's own. Renumbering writes
 * are part of the change that needs them, so they are all-or-nothing with it.
 */
public final class Ranks {
  public static final long GAP = 1L << 20;

  private final String field;

  /** Ranks kept in {@code field}. */
  public Ranks(String field) {
    this.field = field;
  }

  /** The field that holds the rank. */
  String field() {
    return field;
  }

  /**
   * The rank a node gets when placed at {@code position} among the siblings that {@code siblings}
   * selects.
   *
   * @param siblings the filter of the target sibling group
   * @param position where among them
   * @param anchorRank for a sibling position, the anchor's rank; ignored otherwise
   * @param moving the id of the node being moved (excluded from its siblings), or null
   */
  long rankFor(Change c, Bson siblings, Position position, long anchorRank,
      @Nullable String moving) {
    Bson group = moving == null ? siblings : and(siblings, ne(MongoTreeStore.ID, moving));
    if (position instanceof Position.Sibling s) {
      Bson neighbour = s.before() ? lt(field, anchorRank) : gt(field, anchorRank);
      Document next = c.find(and(group, neighbour))
          .projection(Projections.include(field))
          .sort(s.before() ? Sorts.descending(field) : Sorts.ascending(field))
          .limit(1)
          .first();
      if (next == null) {
        return s.before() ? anchorRank - GAP : anchorRank + GAP;
      }
      long other = of(next);
      long low = Math.min(other, anchorRank);
      long high = Math.max(other, anchorRank);
      if (high - low >= 2) {
        return low + (high - low) / 2;
      }
      return renumber(c, group, s.siblingId(), s.before());
    }
    boolean first = position instanceof Position.Root r ? r.first()
        : ((Position.Child) position).first();
    Document end = c.find(group)
        .projection(Projections.include(field))
        .sort(first ? Sorts.ascending(field) : Sorts.descending(field))
        .limit(1)
        .first();
    if (end == null) {
      return 0;
    }
    return first ? of(end) - GAP : of(end) + GAP;
  }

  /**
   * Renumbers a sibling group {@link #GAP} apart, leaving a free rank next to the anchor, and
   * returns that rank.
   */
  private long renumber(Change c, Bson group, String anchorId, boolean before) {
    List<Document> siblings = new ArrayList<>();
    c.find(group).projection(Projections.include(field)).sort(Sorts.ascending(field))
        .into(siblings);
    long next = GAP;
    long free = 0;
    for (Document d : siblings) {
      boolean anchor = idOf(d).equals(anchorId);
      if (anchor && before) {
        free = next;
        next += GAP;
      }
      if (of(d) != next) {
        c.set(idOf(d), Updates.set(field, next)); // before the node's own
      }
      next += GAP;
      if (anchor && !before) {
        free = next;
        next += GAP;
      }
    }
    return free;
  }

  /** The rank of {@code d}, 0 if it has none. */
  long of(Document d) {
    Object rank = d.get(field);
    return rank instanceof Number n ? n.longValue() : 0L;
  }
}
