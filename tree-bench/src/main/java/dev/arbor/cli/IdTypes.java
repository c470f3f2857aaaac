package dev.arbor.cli;

import dev.arbor.mongo.NodeIdType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The id type names of the command line: {@code string}, {@code objectid}, {@code uuid}, {@code
 * long} (the enum constant names, {@code OBJECT_ID}, are accepted too, in any case).
 */
final class IdTypes implements ITypeConverter<NodeIdType>, Iterable<String> {
  /** The command-line name of an id type. */
  static String name(NodeIdType type) {
    return type.name().toLowerCase(Locale.ROOT).replace("_", "");
  }

  @Override
  public NodeIdType convert(String value) {
    String normalized = value.trim().toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
    for (NodeIdType t : NodeIdType.values()) {
      if (name(t).equals(normalized)) {
        return t;
      }
    }
    throw new TypeConversionException("'" + value + "' is not an id type (expected one of: "
        + String.join(", ", this) + ")");
  }

  @Override
  public Iterator<String> iterator() {
    List<String> names = new ArrayList<>();
    for (NodeIdType t : NodeIdType.values()) {
      names.add(name(t));
    }
    return names.iterator();
  }
}
