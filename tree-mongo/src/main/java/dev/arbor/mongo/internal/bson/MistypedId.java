package dev.arbor.mongo.internal.bson;

import dev.arbor.mongo.NodeIdType;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.UuidRepresentation;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.jspecify.annotations.Nullable;

/**
 * A value in a field naming nodes ({@code parent}, {@code children}, {@code ancestors}) of a
 * tree of typed ids ({@code TreeOptions.withIdType}) that is not of the tree's id type: the
 * string form of an {@code ObjectId} or a UUID (its hexadecimal digits in lower or in upper
 * case), a long written as a string or as a double (as
 * mongosh writes numbers), a legacy UUID (binary subtype 3). Such a value is read as this, never
 * as the id it resembles: the stores' queries compare the stored type, so a read that took it
 * for the id would disagree with them. A read that needs it refuses naming the node ({@code
 * Layout.stringField}), {@code check()} names it ({@link #problem}), {@code repair()} rewrites
 * it to the id type when it is an {@linkplain #candidates other form} of an existing node's id;
 * and the stores' queries by reference match the other forms too ({@link NodeIds#filter}), so
 * that a change meets the node that holds one, rather than orphan it.
 *
 * @param value the value as the driver decoded it
 * @param type the tree's id type
 */
public record MistypedId(Object value, NodeIdType type) {

  /**
   * The ids (canonical strings) that {@link #value} is another form of: one, or for a legacy
   * UUID the readings of its three byte orders that differ; none if it is not such a form.
   */
  public List<String> candidates() {
    List<String> out = new ArrayList<>();
    switch (type) {
      case OBJECT_ID, UUID -> {
        if (value instanceof String s && NodeIds.of(type).parse(s) != null) {
          out.add(s);
        } else if (value instanceof String s && NodeIds.upperCase(type, s) != null) {
          out.add(NodeIds.upperCase(type, s));
        } else if (type == NodeIdType.UUID && value instanceof Binary b
            && b.getType() == BsonBinarySubType.UUID_LEGACY.getValue()
            && b.getData().length == 16) {
          for (UuidRepresentation r : LEGACY) {
            String u = new BsonBinary(b.getType(), b.getData()).asUuid(r).toString();
            if (!out.contains(u)) {
              out.add(u);
            }
          }
        }
      }
      case LONG -> {
        if (value instanceof String s && NodeIds.of(type).parse(s) != null) {
          out.add(s);
        } else if (value instanceof Double d && d == Math.rint(d)
            && d >= -0x1p63 && d < 0x1p63) {
          out.add(Long.toString(d.longValue()));
        } else if (value instanceof Decimal128 d && !d.isNaN() && !d.isInfinite()) {
          try {
            out.add(Long.toString(d.bigDecimalValue().longValueExact()));
          } catch (ArithmeticException e) {
            // not a whole number of the long range
          }
        }
      }
      default -> {
      }
    }
    return out;
  }

  /** The byte orders of a legacy UUID (subtype 3), as the drivers of Java, C# and Python wrote. */
  static final List<UuidRepresentation> LEGACY = List.of(UuidRepresentation.JAVA_LEGACY,
      UuidRepresentation.C_SHARP_LEGACY, UuidRepresentation.PYTHON_LEGACY);

  /** What the value is, for messages: {@code the string "65a0…"}, {@code the double 2.0}. */
  public String description() {
    if (value instanceof String s) {
      return "the string \"" + s + "\"";
    }
    if (value instanceof Binary b) {
      return b.getType() == BsonBinarySubType.UUID_LEGACY.getValue()
          ? "a legacy UUID (binary subtype 3)" : "a binary of subtype " + b.getType();
    }
    String kind = value instanceof Double ? "double" : value instanceof Decimal128 ? "decimal"
        : value instanceof Integer ? "int" : value instanceof Long ? "long"
        : value.getClass().getSimpleName();
    return "the " + kind + " " + value;
  }

  /** The id type as the messages name it: an ObjectId, a long, a UUID. */
  public static String article(NodeIdType type) {
    return switch (type) {
      case OBJECT_ID -> "an ObjectId";
      case LONG -> "a long";
      case UUID -> "a UUID";
      case STRING -> "a string";
    };
  }

  /**
   * What {@code check()} says of {@code field} holding this value, given whether the nodes it is
   * another form of exist: {@code "parent is not an ObjectId: the string "65a0…" (the string form
   * of an ObjectId; repair() rewrites it)"}.
   *
   * @param existing how many of its {@link #candidates} name existing nodes
   */
  public String problem(String field, int existing) {
    List<String> candidates = candidates();
    String what = field + " is not " + article(type) + ": " + description();
    if (candidates.isEmpty()) {
      return what + " (no form of " + article(type) + " Arbor reads: repair() leaves it; write"
          + " the id as " + article(type) + ")";
    }
    String form = "another form of " + (candidates.size() == 1 ? "'" + candidates.get(0) + "'"
        : "one of " + candidates);
    if (existing == 1) {
      return what + " (" + form + "; repair() rewrites it as " + article(type) + ")";
    }
    return what + " (" + form + ", " + (existing == 0 ? "which is no node of the tree"
        : "which names more than one node") + ": repair() leaves it)";
  }


  @Override
  public String toString() {
    return description();
  }

}
