package dev.arbor.mongo;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Runs the update pipelines the stores send, client-side, with MongoDB's documented semantics of
 * the few stages and operators they use ({@code $set}; {@code $literal}, {@code $concat},
 * {@code $concatArrays}, {@code $slice}, {@code $substrBytes}, {@code $strLenBytes},
 * {@code $subtract}; field paths). mongo-java-server has no pipeline updates, so this is how the
 * fault, contract and property tests run the pipeline path here. Anything else fails loudly: a
 * store that starts using another operator must teach it to the emulator first.
 */
final class PipelineEmulator {
  private PipelineEmulator() {}

  /** The document after the pipeline. */
  static BsonDocument apply(BsonDocument document, List<BsonDocument> pipeline) {
    BsonDocument d = document.clone();
    for (BsonDocument stage : pipeline) {
      if (stage.size() != 1 || !(stage.containsKey("$set") || stage.containsKey("$addFields"))) {
        throw new AssertionError("stage not emulated: " + stage.toJson());
      }
      BsonDocument fields = stage.values().iterator().next().asDocument();
      BsonDocument current = d.clone(); // every expression of one stage sees the input document
      for (Map.Entry<String, BsonValue> f : fields.entrySet()) {
        if (f.getKey().contains(".") || f.getKey().startsWith("$")) {
          throw new AssertionError("field not emulated: " + f.getKey());
        }
        d.put(f.getKey(), eval(current, f.getValue()));
      }
    }
    return d;
  }

  static BsonValue eval(BsonDocument doc, BsonValue e) {
    if (e.isString()) {
      String s = e.asString().getValue();
      if (s.startsWith("$$")) {
        throw new AssertionError("variable not emulated: " + s);
      }
      if (s.startsWith("$")) {
        if (s.length() == 1 || s.substring(1).contains(".")) {
          throw new AssertionError("field path not emulated: " + s);
        }
        BsonValue v = doc.get(s.substring(1));
        return v == null ? BsonNull.VALUE : v; // missing: null for these operators
      }
      return e;
    }
    if (e.isArray()) {
      BsonArray out = new BsonArray();
      for (BsonValue v : e.asArray()) {
        out.add(eval(doc, v));
      }
      return out;
    }
    if (!e.isDocument()) {
      return e;
    }
    BsonDocument d = e.asDocument();
    if (d.size() != 1 || !d.getFirstKey().startsWith("$")) {
      BsonDocument out = new BsonDocument();
      for (Map.Entry<String, BsonValue> f : d.entrySet()) {
        if (f.getKey().startsWith("$")) {
          throw new AssertionError("operator in a document literal: " + d.toJson());
        }
        out.put(f.getKey(), eval(doc, f.getValue()));
      }
      return out;
    }
    String op = d.getFirstKey();
    BsonValue arg = d.get(op);
    if (op.equals("$literal")) {
      return arg;
    }
    List<BsonValue> args = arg.isArray() ? eval(doc, arg).asArray().getValues()
        : List.of(eval(doc, arg));
    switch (op) {
      case "$concat": {
        StringBuilder b = new StringBuilder();
        for (BsonValue v : args) {
          if (v.isNull()) {
            return BsonNull.VALUE;
          }
          b.append(v.asString().getValue()); // a non-string is an error on the server too
        }
        return new BsonString(b.toString());
      }
      case "$concatArrays": {
        BsonArray out = new BsonArray();
        for (BsonValue v : args) {
          if (v.isNull()) {
            return BsonNull.VALUE;
          }
          out.addAll(v.asArray()); // a non-array is an error on the server too
        }
        return out;
      }
      case "$slice": {
        if (args.get(0).isNull()) {
          return BsonNull.VALUE;
        }
        List<BsonValue> a = args.get(0).asArray().getValues();
        int from;
        int n;
        if (args.size() == 2) {
          n = (int) number(args.get(1));
          if (n < 0) {
            from = Math.max(0, a.size() + n);
            n = -n;
          } else {
            from = 0;
          }
        } else {
          from = (int) number(args.get(1));
          from = from < 0 ? Math.max(0, a.size() + from) : Math.min(from, a.size());
          n = (int) number(args.get(2));
          if (n <= 0) {
            throw new AssertionError("$slice n must be positive: " + d.toJson());
          }
        }
        return new BsonArray(a.subList(from, (int) Math.min(a.size(), (long) from + n)));
      }
      case "$strLenBytes":
        return new BsonInt64(args.get(0).asString().getValue()
            .getBytes(StandardCharsets.UTF_8).length);
      case "$subtract":
        return new BsonInt64(number(args.get(0)) - number(args.get(1)));
      case "$substrBytes": {
        byte[] bytes = args.get(0).asString().getValue().getBytes(StandardCharsets.UTF_8);
        int start = (int) number(args.get(1));
        int len = (int) number(args.get(2));
        int end = len < 0 ? bytes.length : Math.min(bytes.length, start + len);
        if (start > bytes.length) {
          return new BsonString("");
        }
        if (start < bytes.length && (bytes[start] & 0xC0) == 0x80
            || end < bytes.length && (bytes[end] & 0xC0) == 0x80) {
          throw new AssertionError("$substrBytes cuts inside a UTF-8 character: " + d.toJson());
        }
        return new BsonString(new String(bytes, start, end - start, StandardCharsets.UTF_8));
      }
      default:
        throw new AssertionError("operator not emulated: " + op);
    }
  }

  private static long number(BsonValue v) {
    if (!v.isNumber()) {
      throw new AssertionError("not a number: " + v);
    }
    return v.asNumber().longValue();
  }
}
