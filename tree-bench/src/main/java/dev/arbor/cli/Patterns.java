package dev.arbor.cli;

import com.mongodb.client.MongoDatabase;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CliException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
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

  /**
   * Fails if the collection's nodes are laid out in another pattern than {@code pattern} ({@link
   * TreePattern#recognise}), before anything reads them as that pattern or writes to them.
   */
  static void require(MongoDatabase db, String collection, TreePattern pattern) {
    require(db, collection, pattern, dev.arbor.mongo.TreeOptions.defaults());
  }

  /**
   * As {@link #require(MongoDatabase, String, TreePattern)}, with the field names of {@code
   * options}.
   */
  static void require(MongoDatabase db, String collection, TreePattern pattern,
      dev.arbor.mongo.TreeOptions options) {
    Optional<TreePattern> seen = TreePattern.recognise(db.getCollection(collection), options);
    if (seen.isPresent() && seen.get() != pattern) {
      throw new CliException("collection " + db.getName() + "." + collection + " is laid out in "
          + name(seen.get()) + ", not " + name(pattern) + ": give -p " + name(seen.get())
          + " (arbor convert changes the pattern of a tree)");
    }
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
