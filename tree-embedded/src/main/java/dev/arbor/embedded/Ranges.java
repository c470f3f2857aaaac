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
 *
 * <p>Numbers too ({@link #numeric}): {@code {left: {$gt: 4, $lt: 17}}}, as nested sets send them.
 * There such a comparison holds only between two numbers (the matcher's {@code comparableTypes}),
 * of any numeric types; the index reads both sides as doubles and widens every bound ({@link
 * Span}), a superset of what the matcher keeps, which the collection then applies the whole
 * query to.
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
   * An interval of numbers read as doubles, both ends included (open: an infinity), with the
   * number of bounds it was made of. Inclusive whatever the operators, and each bound moved out
   * to the integer past it: a double conversion is monotonic, so a number greater than a bound is
   * at least the bound once both are doubles, and the matcher's comparison of a long with a
   * fraction (below) moves a bound by less than 1.
   */
  record Span(double low, double high, int bounds) {
    // Widened by more than 1: the matcher compares two numbers as longs when either is a long
    // beyond an int's range, truncating a fraction of the other (3000000000L >= 3000000000.5
    // holds there), and saturates a double past a long's range, so a bound of 2^62 or more is
    // left out.
    Span and(Span o) {
      return new Span(Math.max(low, o.low), Math.min(high, o.high), bounds + o.bounds);
    }

    /** Whether no number is in it. */
    boolean empty() {
      return low > high;
    }
  }

  /** Bounds this far from 0 or farther are left out (see {@link Span}). */
  private static final double FAR = 0x1p62;

  /**
   * Per field, the interval of numbers of which a document matching {@code query} holds one (as
   * its value or, if a field ever held an array, see the class comment); empty when none is
   * known. Read where {@link #of} reads its strings, from bounds of type {@code int}, {@code long}
   * and {@code double} (not NaN); a bound of another numeric type is left out, which only widens
   * the interval.
   */
  static Map<String, Span> numeric(Document query) {
    Map<String, Span> out = new HashMap<>();
    walk(query, out, 0, Ranges::spanOf, Span::and);
    return out;
  }

  private static @Nullable Span spanOf(@Nullable Object condition) {
    if (!(condition instanceof Document d) || d.isEmpty()) {
      return null;
    }
    Span r = new Span(Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, 0);
    for (Map.Entry<String, Object> op : d.entrySet()) {
      if (!op.getKey().startsWith("$")) {
        return null; // a document compared whole, not operators
      }
      Object v = op.getValue();
      if (!(v instanceof Integer || v instanceof Long || v instanceof Double)) {
        continue;
      }
      double x = ((Number) v).doubleValue();
      if (Double.isNaN(x) || Math.abs(x) >= FAR) {
        continue;
      }
      Span one = switch (op.getKey()) {
        case "$gt", "$gte" -> new Span(Math.floor(x) - 1, Double.POSITIVE_INFINITY, 1);
        case "$lt", "$lte" -> new Span(Double.NEGATIVE_INFINITY, Math.ceil(x) + 1, 1);
        default -> null;
      };
      if (one != null) {
        r = r.and(one);
      }
    }
    return r.bounds() == 0 ? null : r;
  }

  /**
   * Per field, the interval of strings of which a document matching {@code query} holds one
   * (as its value or, if a field ever held an array, see the class comment); empty when none is
   * known.
   */
  static Map<String, Range> of(Document query) {
    Map<String, Range> out = new HashMap<>();
    walk(query, out, 0, Ranges::rangeOf, Range::and);
    return out;
  }

  /**
   * Reads the conditions of the keys of {@code query} and of the documents of its {@code $and}s
   * (plain field names only) with {@code read}, the conditions of one field combined by {@code
   * and}.
   */
  private static <R> void walk(Document query, Map<String, R> out, int depth,
      java.util.function.Function<Object, @Nullable R> read,
      java.util.function.BinaryOperator<R> and) {
    for (Map.Entry<String, Object> e : query.entrySet()) {
      String key = e.getKey();
      if (key.equals("$and") && depth < MAX_DEPTH && e.getValue() instanceof List<?> list) {
        for (Object o : list) {
          if (o instanceof Document d) {
            walk(d, out, depth + 1, read, and);
          }
        }
        continue;
      }
      if (key.startsWith("$") || key.indexOf('.') >= 0) {
        continue;
      }
      R r = read.apply(e.getValue());
      if (r != null) {
        out.merge(key, r, and);
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
