package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.layout.NestedSetLayout.num;

import com.mongodb.client.model.Updates;
import dev.arbor.core.Problem;
import dev.arbor.mongo.internal.bson.MistypedId;
import dev.arbor.mongo.internal.protocol.Change;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.bson.Document;

/**
 * {@code check()} and {@code repair()} of {@link NestedSetLayout}: the numbers are {@code 1..2N},
 * each used once, the intervals nest, and {@code parent} and {@code arborDepth} agree with the
 * nesting; repair renumbers intervals that nest and rewrites the derived fields from them.
 */
final class NestedSetChecks {
  private final NestedSetLayout layout;
  private final String parentField;
  private final String leftField;
  private final String rightField;
  private final String depthField;

  NestedSetChecks(NestedSetLayout layout) {
    this.layout = layout;
    this.parentField = layout.parentField;
    this.leftField = layout.leftField;
    this.rightField = layout.rightField;
    this.depthField = layout.depthField;
  }

  /**
   * Intervals are authoritative: when they are distinct and nest, repair renumbers them {@code
   * 1..2N} in their order (closing gaps) and rewrites {@code parent} and {@code arborDepth} from
   * the nesting (the manual's root {@code parent: 0} becomes null). Overlapping or repeated numbers
   * are left for {@code check()} to report.
   */
  void planRepair(Change c, List<Document> docs) {
    java.util.TreeMap<Long, Document> byNumber = new java.util.TreeMap<>();
    for (Document d : docs) {
      if (!(d.get(leftField) instanceof Number) || !(d.get(rightField) instanceof Number)
          || num(d, leftField) >= num(d, rightField)
          || byNumber.put(num(d, leftField), d) != null
              || byNumber.put(num(d, rightField), d) != null) {
        return; // not derivable without guessing
      }
    }
    Map<Long, Long> renumber = new HashMap<>();
    long next = 0;
    for (Long v : byNumber.keySet()) {
      renumber.put(v, ++next);
    }
    List<Document> sorted = new ArrayList<>(docs);
    sorted.sort(Comparator.comparingLong(d -> num(d, leftField)));
    Deque<Document> open = new ArrayDeque<>();
    List<Runnable> writes = new ArrayList<>();
    for (Document d : sorted) {
      while (!open.isEmpty() && num(open.peek(), rightField) < num(d, leftField)) {
        open.pop();
      }
      if (!open.isEmpty() && num(d, rightField) > num(open.peek(), rightField)) {
        return; // overlapping intervals
      }
      String parent = open.isEmpty() ? null : idOf(open.peek());
      long left = renumber.get(num(d, leftField));
      long right = renumber.get(num(d, rightField));
      if (left != num(d, leftField) || right != num(d, rightField)
          || !Objects.equals(parent, d.get(parentField))
          || !(d.get(depthField) instanceof Number) || num(d, depthField) != open.size()) {
        long depth = open.size();
        if (d.get(parentField) instanceof MistypedId m && m.value() instanceof Number) {
          // a long written as a double: a set to an equal value may leave it as it is
          writes.add(() -> c.set(d.get(ID), Updates.unset(parentField)));
        }
        writes.add(() -> c.set(d.get(ID), Updates.combine(Updates.set(leftField, left),
            Updates.set(rightField, right), Updates.set(parentField, parent),
                Updates.set(depthField, depth))));
      }
      open.push(d);
    }
    writes.forEach(Runnable::run); // only once the whole numbering is known to nest
  }

  void checkDocuments(Map<String, Document> byId, List<Problem> problems) {
    List<Document> docs = new ArrayList<>();
    for (Document d : byId.values()) {
      String id = idOf(d);
      if (!(d.get(leftField) instanceof Number) || !(d.get(rightField) instanceof Number)) {
        problems.add(new Problem(id, "left/right missing or not numbers: " + d.get(leftField) + "/"
            + d.get(rightField)));
      } else if (num(d, leftField) >= num(d, rightField)) {
        problems.add(new Problem(id, "left " + d.get(leftField) + " is not below right "
            + d.get(rightField)));
      } else {
        if (num(d, leftField) < 1) {
          // named: a move, which negates its subtree's numbers, would take it for its own
          problems.add(new Problem(id, "left " + d.get(leftField) + " is below 1, where the"
              + " numbering starts (changes are refused while it is)"));
        }
        docs.add(d);
      }
    }
    // The numbers are 1 .. 2N, each used once. Who uses each: an array for those in range (a
    // map of a node per number would dwarf the nodes of a large tree), a map for the others.
    int max = 2 * docs.size();
    int[] owner = new int[max + 1]; // index in docs + 1, 0 for unused
    Map<Long, Integer> outside = new HashMap<>();
    for (int i = 0; i < docs.size(); i++) {
      Document d = docs.get(i);
      for (String f : List.of(leftField, rightField)) {
        long v = num(d, f);
        Integer other;
        if (v >= 1 && v <= max) {
          other = owner[(int) v] == 0 ? null : owner[(int) v] - 1;
          owner[(int) v] = i + 1;
        } else {
          other = outside.put(v, i);
        }
        if (other != null) {
          problems.add(new Problem(idOf(d), f + " " + v
              + " is also used by '" + idOf(docs.get(other)) + "'"));
        }
      }
    }
    for (int v = 1; v <= max; v++) {
      if (owner[v] == 0) {
        problems.add(new Problem(docs.isEmpty() ? "" : idOf(docs.get(0)),
            "the numbering leaves a gap at " + v + " (expected 1.." + 2L * docs.size() + ")"));
        break;
      }
    }
    // Intervals nest; parent and depth agree with the nesting.
    docs.sort(Comparator.comparingLong(d -> num(d, leftField)));
    Deque<Document> open = new ArrayDeque<>();
    for (Document d : docs) {
      while (!open.isEmpty() && num(open.peek(), rightField) < num(d, leftField)) {
        open.pop();
      }
      String id = idOf(d);
      Document enclosing = open.peek();
      if (enclosing != null && num(d, rightField) > num(enclosing, rightField)) {
        problems.add(new Problem(id, "interval " + num(d, leftField) + "-" + num(d, rightField)
            + " overlaps '" + idOf(enclosing) + "' " + num(enclosing, leftField) + "-"
            + num(enclosing, rightField)));
        continue;
      }
      String expectedParent = enclosing == null ? null : idOf(enclosing);
      if (d.get(parentField) instanceof MistypedId m) {
        problems.add(new Problem(id, parentField + " is not " + MistypedId.article(m.type())
            + ": " + m + " (repair() rewrites it from the intervals: " + expectedParent + ")"));
      } else if (!Objects.equals(expectedParent, d.get(parentField))
          && !(expectedParent == null && layout.manualRoot(d))) {
        problems.add(new Problem(id, "parent " + d.get(parentField)
            + " disagrees with the intervals (enclosed by " + expectedParent + ")"));
      }
      if (d.get(depthField) == null) {
        // The manual keeps no depth, and reads count it from the intervals; but a node with a
        // depth has descendants with depths (changes keep it so), which a depth-limited read of
        // it relies on.
        if (enclosing != null && enclosing.get(depthField) instanceof Number) {
          problems.add(new Problem(id, "depth null: missing where its parent '" + expectedParent
              + "' has one, which depth-limited reads of it rely on (repair() writes every"
              + " depth)"));
        }
      } else if (!(d.get(depthField) instanceof Number) || num(d, depthField) != open.size()) {
        problems.add(new Problem(id, "depth " + d.get(depthField)
            + " disagrees with the intervals (" + open.size() + ")"));
      }
      open.push(d);
    }
  }
}
