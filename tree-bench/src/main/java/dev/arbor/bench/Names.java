package dev.arbor.bench;

import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The command-line names of enum constants ({@code ARRAY_OF_ANCESTORS} is {@code
 * array-of-ancestors}) and the parsing of comma-separated lists of them.
 */
final class Names {
  private Names() {}

  /** The command-line name of a constant: lower case, words joined by {@code -}. */
  static String of(Enum<?> constant) {
    return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** A short column title for a pattern, for tables and charts. */
  static String shortName(TreePattern pattern) {
    return switch (pattern) {
      case PARENT_REFERENCES -> "parent-refs";
      case CHILD_REFERENCES -> "child-refs";
      case ARRAY_OF_ANCESTORS -> "ancestors";
      case MATERIALIZED_PATHS -> "paths";
      case NESTED_SETS -> "nested-sets";
    };
  }

  /** The command-line names of all constants, comma separated. */
  static String list(Enum<?>[] constants) {
    List<String> names = new ArrayList<>();
    for (Enum<?> c : constants) {
      names.add(of(c));
    }
    return String.join(", ", names);
  }

  /**
   * Parses command-line names (any case, {@code _} or {@code -}) into constants, in the order of
   * the enum, without duplicates. {@code all} selects every constant; {@code none} none. An empty
   * or null list gives {@code defaults}.
   *
   * @param what what the values are, for the error message ("pattern", "shape", ...)
   * @throws IllegalArgumentException naming the unknown value and listing the valid ones
   */
  static <E extends Enum<E>> List<E> parse(String what, List<String> values, E[] constants,
      List<E> defaults) {
    if (values == null || values.isEmpty()) {
      return defaults;
    }
    Set<E> chosen = new LinkedHashSet<>();
    for (String raw : values) {
      String value = raw.trim().toLowerCase(Locale.ROOT).replace('_', '-');
      if (value.equals("all")) {
        chosen.addAll(List.of(constants));
        continue;
      }
      if (value.equals("none")) {
        continue;
      }
      E match = null;
      for (E c : constants) {
        if (of(c).equals(value)) {
          match = c;
        }
      }
      if (match == null) {
        throw new IllegalArgumentException("unknown " + what + " '" + raw.trim() + "' (valid: "
            + list(constants) + ", all, none)");
      }
      chosen.add(match);
    }
    List<E> ordered = new ArrayList<>();
    for (E c : constants) {
      if (chosen.contains(c)) {
        ordered.add(c);
      }
    }
    return ordered;
  }
}
