package dev.arbor.embedded;

import de.bwaldvogel.mongo.bson.Document;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The string ranges a query requires of its documents, as far as a {@link HashIndex} with its
 * keys in order can use them: for a field, the interval of strings its value must fall in.
 *
 * <p>Read where {@link Equalities} reads its conditions (keys of the query and of the documents
 * of a top-level {@code $and}, plain field names), from the operators {@code $gt}, {@code $gte},
 * {@code $lt}, {@code $lte} with a string value of an operator document, such as {@code {path:
 * {$gte: ",a,", $lt: ",a-"}}} (its other operators only narrow further). In the server's matcher
 * ({@code DefaultQueryMatcher}) such a comparison holds only between two strings, compared by
 * {@code String.compareTo}, which is the order of the index's keys; for a value that is an array it
 * holds if it holds for an element, and two bounds may then hold for two different elements, so
 * an index uses the interval of several bounds only on a field that never held an array (see
 * {@link HashIndex#rangeCost}).
 */
final class Ranges {
  private static final int MAX_DEPTH = 32;

  private Ranges() {}

  /** An interval of strings; a null bound is open. */
  record Range(@Nullable String low, boolean lowIncluded, @Nullable String high,
      boolean highIncluded, int bounds) {
    /** The interval of both: every string in it is in this one and in {@code o}. */
    Range and(Range o) {
      String lo = low;
      boolean loIn = lowIncluded;
      if (o.low != null && (lo == null || o.low.compareTo(lo) > 0
          || o.low.equals(lo) && !o.lowIncluded)) {
        lo = o.low;
        loIn = o.lowIncluded;
      }
      String hi = high;
      boolean hiIn = highIncluded;
      if (o.high != null && (hi == null || o.high.compareTo(hi) < 0
          || o.high.equals(hi) && !o.highIncluded)) {
        hi = o.high;
        hiIn = o.highIncluded;
      }
      return new Range(lo, loIn, hi, hiIn, bounds + o.bounds);
    }

    /** Whether no string is in it. */
    boolean empty() {
      if (low == null || high == null) {
        return false;
      }
      int c = low.compareTo(high);
      return c > 0 || c == 0 && !(lowIncluded && highIncluded);
    }
  }

  /**
   * Per field, the interval of strings of which a document matching {@code query} holds one
   * (as its value or, if a field ever held an array, see the class comment); empty when none is
   * known.
   */
  static Map<String, Range> of(Document query) {
    Map<String, Range> out = new HashMap<>();
    walk(query, out, 0);
    return out;
  }

  private static void walk(Document query, Map<String, Range> out, int depth) {
    for (Map.Entry<String, Object> e : query.entrySet()) {
      String key = e.getKey();
      if (key.equals("$and") && depth < MAX_DEPTH && e.getValue() instanceof List<?> list) {
        for (Object o : list) {
          if (o instanceof Document d) {
            walk(d, out, depth + 1);
          }
        }
        continue;
      }
      if (key.startsWith("$") || key.indexOf('.') >= 0) {
        continue;
      }
      Range r = rangeOf(e.getValue());
      if (r != null) {
        out.merge(key, r, Range::and);
      }
    }
  }

  private static @Nullable Range rangeOf(@Nullable Object condition) {
    if (!(condition instanceof Document d) || d.isEmpty()) {
      return null;
    }
    // Every operator of the document is required: the string bounds among them are, whatever
    // the others ask ($regex, $ne, a bound of another type...), which only narrow further.
    Range r = new Range(null, false, null, false, 0);
    for (Map.Entry<String, Object> op : d.entrySet()) {
      if (!op.getKey().startsWith("$")) {
        return null; // a document compared whole, not operators
      }
      if (!(op.getValue() instanceof String s)) {
        continue;
      }
      Range one = switch (op.getKey()) {
        case "$gt" -> new Range(s, false, null, false, 1);
        case "$gte" -> new Range(s, true, null, false, 1);
        case "$lt" -> new Range(null, false, s, false, 1);
        case "$lte" -> new Range(null, false, s, true, 1);
        default -> null;
      };
      if (one != null) {
        r = r.and(one);
      }
    }
    return r.bounds() == 0 ? null : r;
  }
}
