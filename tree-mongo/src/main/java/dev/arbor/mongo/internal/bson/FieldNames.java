package dev.arbor.mongo.internal.bson;

import dev.arbor.mongo.TreeField;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.Lanes;
import dev.arbor.mongo.internal.protocol.Step;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The names a store gives the structural fields ({@link TreeField}) of its node documents: the
 * defaults, or those of {@link TreeOptions#withFieldName}. Immutable.
 */
public final class FieldNames {
  /** The names Arbor's own documents and marks take, which no structural field may take. */
  public static final Set<String> ARBOR = Set.of(MongoTreeStore.ID, Step.MARK, TreeLock.STATE,
      TreeLock.JOURNAL, TreeLock.PROBE, Lanes.FIELD);

  public static final FieldNames DEFAULTS = new FieldNames(new EnumMap<>(TreeField.class));

  private final EnumMap<TreeField, String> given;
  public final String parent;
  public final String children;
  public final String ancestors;
  public final String path;
  public final String left;
  public final String right;
  public final String depth;
  public final String rank;

  private FieldNames(EnumMap<TreeField, String> given) {
    this.given = given;
    this.parent = name(TreeField.PARENT);
    this.children = name(TreeField.CHILDREN);
    this.ancestors = name(TreeField.ANCESTORS);
    this.path = name(TreeField.PATH);
    this.left = name(TreeField.LEFT);
    this.right = name(TreeField.RIGHT);
    this.depth = name(TreeField.DEPTH);
    this.rank = name(TreeField.RANK);
  }

  /** These names with {@code field} named {@code name}. */
  public FieldNames with(TreeField field, String name) {
    EnumMap<TreeField, String> more = new EnumMap<>(TreeField.class);
    more.putAll(given);
    more.put(field, name);
    return new FieldNames(more);
  }

  /** The name of {@code field}. */
  public String name(TreeField field) {
    return given.getOrDefault(field, field.defaultName());
  }

  /** The fields given a name of their own (not the default). */
  public Map<TreeField, String> given() {
    return given;
  }

  /** The names of the structural fields of {@code pattern}, in {@link TreeField} order. */
  public List<String> of(TreePattern pattern) {
    List<String> names = new ArrayList<>();
    for (TreeField f : TreeField.of(pattern)) {
      names.add(name(f));
    }
    return names;
  }

  /**
   * Checks the names against {@code pattern}.
   *
   * @throws IllegalArgumentException naming the option if a field the pattern does not keep was
   *     given a name, or two of the pattern's fields share a name, or one takes a name of Arbor's
   */
  public void checkFor(TreePattern pattern) {
    for (var e : given.entrySet()) {
      String where = "TreeOptions.withFieldName(" + e.getKey() + ", \"" + e.getValue() + "\")";
      if (!e.getKey().usedBy(pattern)) {
        throw new IllegalArgumentException(where + ": " + pattern + " keeps no " + e.getKey()
            + " field (it keeps " + TreeField.of(pattern) + ")");
      }
      for (TreeField other : TreeField.of(pattern)) {
        if (other != e.getKey() && name(other).equals(e.getValue())) {
          throw new IllegalArgumentException(where + ": " + other + " is named '"
              + e.getValue() + "' too; two structural fields of " + pattern
              + " cannot share a name");
        }
      }
    }
  }

  /**
   * Why {@code name} cannot name a structural field, whatever the pattern, or null if it can.
   */
  public static String problem(String name) {
    String problem = AttributeNames.fieldNameProblem(name);
    if (problem != null) {
      return problem;
    }
    return ARBOR.contains(name) ? "'" + name + "' is a name Arbor keeps for its own use" : null;
  }

  @Override
  public String toString() {
    return given.toString();
  }
}
