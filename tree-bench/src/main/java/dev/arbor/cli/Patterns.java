package dev.arbor.cli;

import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The pattern names of the command line: {@code parent-references}, {@code child-references},
 * {@code array-of-ancestors}, {@code materialized-paths}, {@code nested-sets}. The enum constant
 * names ({@code NESTED_SETS}) are accepted too, in any case.
 */
final class Patterns implements ITypeConverter<TreePattern>, Iterable<String> {

  /** The command-line name of a pattern. */
  static String name(TreePattern pattern) {
    return pattern.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  static List<String> names() {
    List<String> names = new ArrayList<>();
    for (TreePattern p : TreePattern.values()) {
      names.add(name(p));
    }
    return names;
  }

  @Override
  public TreePattern convert(String value) {
    String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
    for (TreePattern p : TreePattern.values()) {
      if (p.name().equals(normalized)) {
        return p;
      }
    }
    throw new TypeConversionException("'" + value + "' is not a pattern (expected one of: "
        + String.join(", ", names()) + ")");
  }

  /** The completion candidates shown in the help. */
  @Override
  public Iterator<String> iterator() {
    return names().iterator();
  }
}
