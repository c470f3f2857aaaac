package dev.arbor.embedded;

import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The equalities a query requires of its documents, as far as a {@link HashIndex} can use them:
 * for a field, the set of values of which a matching document must hold at least one.
 *
 * <p>A condition is read only where the server's matcher ({@code DefaultQueryMatcher} of
 * mongo-java-server) requires it of every matching document: a key of the query itself or of a
 * document of a top-level {@code $and} (recursively), every key of which must match. Its field
 * must be a plain name (no dot, no {@code $}), and it must be one of
 *
 * <ul>
 *   <li>{@code {f: v}}, {@code {f: {$eq: v}}}: the document's value of {@code f} is {@code v}
 *       or an array holding {@code v};
 *   <li>{@code {f: {$in: [v1, ...]}}} (the only operator of its document): likewise for one of
 *       the values,
 * </ul>
 *
 * <p>where every {@code v} is a string, an ObjectId, a UUID or a number (int, long, double or
 * decimal): the types whose equality in the matcher ({@code Utils.nullAwareEquals}: the values
 * normalized, then {@code equals}) a hash key reproduces exactly, a number by its normalized
 * value ({@link #key}: 1, 1L, 1.0 and the decimal 1 are one key, as they are equal in the
 * matcher), or null ({@link #NULL}, equal to a missing field). Booleans, documents, regular
 * expressions and every other operator are left to the scan. Other conditions ({@code $or},
 * {@code $nor}, {@code $expr}, dotted paths, other operators) are conjuncts that are simply not
 * used. A query with a top-level
 * operator the matcher does not know, or a malformed {@code $and}, yields nothing, so that the
 * scan reports the error as without an index.
 */
final class Equalities {
  /** How deep {@code $and} documents are followed; deeper conditions are not used. */
  private static final int MAX_DEPTH = 32;

  /**
   * The key of a null in a query ({@code {parent: null}}, a root of parent references): a
   * document is indexed under it when its value is null or missing, or is an array (which may
   * hold a null; the candidates are a superset, the collection applies the whole query).
   */
  static final Object NULL = new Object() {
    @Override
    public String toString() {
      return "null";
    }
  };

  private Equalities() {}

  /**
   * Per field, the values of which a document matching {@code query} holds at least one (in its
   * value or as an element of its array value); empty when none is known; null when the query
   * should be left to the scan whatever the indexes.
   */
  static @Nullable Map<String, Set<Object>> of(Document query) {
    Map<String, Set<Object>> out = new HashMap<>();
    return walk(query, out, 0) ? out : null;
  }

  /**
   * Whether {@code value} is of a type whose matcher equality a hash key ({@link #key}) reproduces:
   * a string, an ObjectId, a number, or a UUID (binary subtype 4, which the server reads as a
   * {@link java.util.UUID}, equal to another only with the same bits; a legacy UUID, subtype 3,
   * is another class and is left to the scan).
   */
  static boolean exact(@Nullable Object value) {
    return value instanceof String || value instanceof ObjectId || value instanceof Integer
        || value instanceof Long || value instanceof Double || value instanceof java.util.UUID
        || value instanceof de.bwaldvogel.mongo.bson.Decimal128;
  }

  /**
   * The hash key of an {@link #exact} value: the value as the matcher compares it ({@code
   * Utils.normalizeValue} of mongo-java-server, then {@code equals}): a string or an ObjectId
   * itself; a number as a {@code Double} (1, 1L and 1.0 are one key; -0.0 is 0.0), except a
   * {@code long} that a double cannot hold, which stays a {@code Long} (and equals no double,
   * as in the matcher).
   */
  static Object key(Object value) {
    if (value instanceof Long l && l != (long) l.doubleValue()) {
      return l;
    }
    if (value instanceof Number n) {
      double d = n.doubleValue();
      return d == 0.0 ? Double.valueOf(0.0) : Double.valueOf(d); // -0.0 == 0.0
    }
    return value;
  }

  private static boolean walk(Document query, Map<String, Set<Object>> out, int depth) {
    for (Map.Entry<String, Object> e : query.entrySet()) {
      String key = e.getKey();
      Object value = e.getValue();
      if (key.startsWith("$")) {
        switch (key) {
          case "$and" -> {
            if (!(value instanceof List<?> list) || list.isEmpty()) {
              return false; // the matcher rejects it: let the scan say so
            }
            for (Object o : list) {
              if (!(o instanceof Document)) {
                return false;
              }
            }
            if (depth < MAX_DEPTH) {
              for (Object o : list) {
                if (!walk((Document) o, out, depth + 1)) {
                  return false;
                }
              }
            }
          }
          case "$or", "$nor", "$expr", "$comment" -> {
            // conditions of their own, not used
          }
          default -> {
            return false; // unknown to the matcher, or $ref/$id: not served
          }
        }
        continue;
      }
      if (key.indexOf('.') >= 0) {
        continue; // a path into subdocuments or array elements: not used
      }
      Set<Object> values = valuesOf(value);
      if (values != null) {
        // Two conditions on one field are each required, but of an array value they may hold
        // for different elements: keep one of them (the one with fewer values), never their
        // intersection.
        out.merge(key, values, (a, b) -> a.size() <= b.size() ? a : b);
      }
    }
    return true;
  }

  private static @Nullable Set<Object> valuesOf(@Nullable Object condition) {
    if (exact(condition)) {
      return Set.of(key(condition));
    }
    if (condition == null) {
      return Set.of(NULL);
    }
    if (!(condition instanceof Document d) || d.size() != 1
        || BsonRegularExpression.isRegularExpression(d)) {
      return null;
    }
    if (d.containsKey("$eq")) {
      Object v = d.get("$eq");
      return exact(v) ? Set.of(key(v)) : v == null ? Set.of(NULL) : null;
    }
    if (d.get("$in") instanceof Collection<?> in) {
      Set<Object> values = new HashSet<>();
      for (Object v : in) {
        if (v == null) {
          values.add(NULL);
        } else if (!exact(v)) {
          return null;
        } else {
          values.add(key(v));
        }
      }
      return values;
    }
    return null;
  }
}
