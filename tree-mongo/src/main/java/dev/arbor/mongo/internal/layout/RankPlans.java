package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.MongoTreeStore.ID;

import com.mongodb.client.model.Updates;
import dev.arbor.mongo.internal.protocol.Change;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * The rank writes the layouts that order siblings by a rank field plan besides {@link
 * Ranks#rankFor}: a sibling group renumbered after a lift, and the ranks a repair fills in.
 */
final class RankPlans {
  private RankPlans() {}

  /**
   * Plans rank writes that give the sibling group {@code order} (ids in their new order) ranks
   * {@link Ranks#GAP} apart in {@code rankField}, and the parent {@code parent} (in {@code
   * parentField}) to the ids in {@code moved}: the ranks of a lift, whose children join their
   * grandparent's children.
   */
  static void planRegroup(Change c, String rankField, List<String> order, Set<String> moved,
      String parentField, @Nullable Object parent) {
    long rank = 0;
    for (String each : order) {
      c.set(each, moved.contains(each)
          ? Updates.combine(Updates.set(parentField, parent), Updates.set(rankField, rank))
          : Updates.set(rankField, rank));
      rank += Ranks.GAP;
    }
  }

  /**
   * Plans rank writes for every sibling group in which a rank is missing, not a number, or
   * repeated: the group is renumbered in its current order (ranked nodes by rank, then the others
   * in scan order).
   *
   * @param parentOf the parent of each document, null for a root (documents whose parent is
   *     unknown are left out)
   */
  static void planRankRepair(Change c, String rankField, List<Document> docs,
      Function<Document, Object> parentOf) {
    Map<Object, List<Document>> groups = new LinkedHashMap<>();
    for (Document d : docs) {
      groups.computeIfAbsent(Optional.ofNullable(parentOf.apply(d)), k -> new ArrayList<>())
          .add(d);
    }
    for (List<Document> group : groups.values()) {
      Set<Long> seen = new HashSet<>();
      boolean sound = true;
      for (Document d : group) {
        sound &= d.get(rankField) instanceof Number n && seen.add(n.longValue());
      }
      if (sound) {
        continue;
      }
      List<Document> ordered = new ArrayList<>(group);
      ordered.sort(Comparator.comparing(
          (Document d) -> d.get(rankField) instanceof Number n ? n.longValue() : Long.MAX_VALUE));
      long rank = 0;
      for (Document d : ordered) {
        c.set(d.get(ID), Updates.set(rankField, rank));
        rank += Ranks.GAP;
      }
    }
  }
}
