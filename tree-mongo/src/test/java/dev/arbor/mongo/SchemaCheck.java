package dev.arbor.mongo;

import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;

/**
 * The subset of MongoDB's {@code $jsonSchema} that {@link TreePattern#validator()} uses, checked in
 * Java (the embedded server does not validate): {@code anyOf}, {@code bsonType} (a name or a list;
 * {@code number} is any numeric type), {@code required}, {@code properties} and {@code items}.
 * Any other keyword fails the check, so the validator cannot use one this does not understand.
 */
final class SchemaCheck {
  private SchemaCheck() {}

  /** Why {@code doc} fails {@code validator}, or null if it passes. */
  static String problem(Document validator, BsonDocument doc) {
    return check(((Document) validator.get("$jsonSchema")), doc, "");
  }

  @SuppressWarnings("unchecked")
  private static String check(Document schema, BsonValue value, String where) {
    for (String key : schema.keySet()) {
      if (!List.of("anyOf", "bsonType", "required", "properties", "items").contains(key)) {
        throw new AssertionError("a keyword this check does not know: " + key);
      }
    }
    if (schema.containsKey("anyOf")) {
      StringBuilder why = new StringBuilder();
      for (Document branch : (List<Document>) schema.get("anyOf")) {
        String p = check(branch, value, where);
        if (p == null) {
          why = null;
          break;
        }
        why.append("[").append(p).append("] ");
      }
      if (why != null) {
        return where + ": no branch of anyOf matches: " + why;
      }
    }
    Object type = schema.get("bsonType");
    if (type != null) {
      List<String> types = type instanceof String s ? List.of(s) : (List<String>) type;
      if (types.stream().noneMatch(t -> is(value, t))) {
        return where + ": " + value.getBsonType() + " is not " + types;
      }
    }
    if (value.isDocument()) {
      BsonDocument d = value.asDocument();
      for (String r : (List<String>) schema.getOrDefault("required", List.of())) {
        if (!d.containsKey(r)) {
          return where + "." + r + " is missing";
        }
      }
      Map<String, Object> props = (Map<String, Object>) schema.getOrDefault("properties",
          new Document());
      for (Map.Entry<String, Object> e : props.entrySet()) {
        if (d.containsKey(e.getKey())) {
          String p = check((Document) e.getValue(), d.get(e.getKey()), where + "." + e.getKey());
          if (p != null) {
            return p;
          }
        }
      }
    }
    if (value.isArray() && schema.containsKey("items")) {
      int i = 0;
      for (BsonValue item : value.asArray()) {
        String p = check((Document) schema.get("items"), item, where + "[" + i++ + "]");
        if (p != null) {
          return p;
        }
      }
    }
    return null;
  }

  private static boolean is(BsonValue v, String type) {
    BsonType t = v.getBsonType();
    return switch (type) {
      case "number" -> t == BsonType.INT32 || t == BsonType.INT64 || t == BsonType.DOUBLE
          || t == BsonType.DECIMAL128;
      case "string" -> t == BsonType.STRING;
      case "null" -> t == BsonType.NULL;
      case "object" -> t == BsonType.DOCUMENT;
      case "array" -> t == BsonType.ARRAY;
      case "objectId" -> t == BsonType.OBJECT_ID;
      case "binData" -> t == BsonType.BINARY;
      case "long" -> t == BsonType.INT64;
      case "int" -> t == BsonType.INT32;
      default -> throw new AssertionError("a bsonType this check does not know: " + type);
    };
  }
}
