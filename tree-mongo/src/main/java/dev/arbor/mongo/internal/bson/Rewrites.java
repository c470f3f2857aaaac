package dev.arbor.mongo.internal.bson;

import java.util.Set;
import java.util.function.Function;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Rewrites of query filters shared by {@link Scope} and {@link NodeIds}: both walk a filter's
 * conditions through {@code $and}, {@code $or} and {@code $nor}, and turn the node ids a
 * condition names into the values stored.
 */
final class Rewrites {
  private static final Set<String> LOGICAL = Set.of("$and", "$or", "$nor");

  private Rewrites() {}

  /** What becomes of one condition {@code key: value} of a filter: put into {@code out}. */
  interface Condition {
    void rewrite(String key, BsonValue value, BsonDocument out);
  }

  /** {@code filter} with each condition rewritten, in logical operators at any depth too. */
  static BsonDocument conditions(BsonDocument filter, Condition condition) {
    BsonDocument out = new BsonDocument();
    for (var e : filter.entrySet()) {
      String k = e.getKey();
      BsonValue v = e.getValue();
      if (LOGICAL.contains(k) && v.isArray()) {
        BsonArray a = new BsonArray();
        for (BsonValue each : v.asArray()) {
          a.add(each.isDocument() ? conditions(each.asDocument(), condition) : each);
        }
        out.put(k, a);
      } else {
        condition.rewrite(k, v, out);
      }
    }
    return out;
  }

  /** Whether {@code v} is a document of query operators ({@code {$in: ...}}). */
  static boolean isOperators(BsonValue v) {
    return v.isDocument() && !v.asDocument().isEmpty()
        && v.asDocument().getFirstKey().startsWith("$");
  }

  /** {@code v} with a string, or each string of an array, mapped by {@code id}. */
  static BsonValue strings(BsonValue v, Function<String, BsonValue> id) {
    if (v.isString()) {
      return id.apply(v.asString().getValue());
    }
    if (v.isArray()) {
      BsonArray a = new BsonArray();
      for (BsonValue each : v.asArray()) {
        a.add(each.isString() ? id.apply(each.asString().getValue()) : each);
      }
      return a;
    }
    return v;
  }
}
