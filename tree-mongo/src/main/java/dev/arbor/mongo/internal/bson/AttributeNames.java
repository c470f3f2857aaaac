package dev.arbor.mongo.internal.bson;

import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.TreePattern;
import dev.arbor.mongo.internal.MongoTreeStore;
import dev.arbor.mongo.internal.protocol.Lanes;
import dev.arbor.mongo.internal.protocol.Step;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The names a node's attributes may not use: the pattern's structural fields and {@code _id}
 * (reserved), and, at any depth inside an attribute's value too, what MongoDB does not take as a
 * field name: empty names, names starting with {@code $} or containing {@code .} or NUL (MongoDB
 * reads {@code $} as an operator and {@code .} as a path).
 */
public final class AttributeNames {
  private AttributeNames() {}

  /** The attribute names a store of {@code pattern} keeps for itself, sorted. */
  public static Set<String> reserved(TreePattern pattern, FieldNames fields,
      @org.jspecify.annotations.Nullable String scopeField) {
    Set<String> names = new TreeSet<>(List.of(MongoTreeStore.ID, Step.MARK, TreeLock.STATE,
        TreeLock.JOURNAL, Lanes.FIELD));
    names.addAll(fields.of(pattern));
    if (scopeField != null) {
      names.add(scopeField);
    }
    return Collections.unmodifiableSet(names);
  }

  /** Why {@code name} cannot be a MongoDB field name, or null if it can. */
  public static String fieldNameProblem(String name) {
    return TreeStores.fieldNameProblem(name);
  }
}
