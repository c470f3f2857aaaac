package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.arbor.core.Position;
import dev.arbor.core.TreeStore;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What {@link TreePattern#reservedNames()} and {@link TreePattern#nameRefusal} say is what the
 * stores do: reserved names and names MongoDB cannot take, at the top and nested at any depth, are
 * refused before anything is written.
 */
class AttributeNamesTest {

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void theReservedNamesAreWhatTheStoreRefuses(TreePattern pattern) {
    TreeStore store = pattern.open(MongoTestServer.get().freshCollection());
    store.insert("root", Position.lastRoot());
    for (String name : pattern.reservedNames()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> store.insert("x", Position.lastRoot(), Map.of(name, 1)));
      assertEquals("Attribute '" + name + "' of node 'x' is reserved by this pattern for the tree"
          + " structure (reserved: " + List.copyOf(pattern.reservedNames()) + ")",
          e.getMessage());
      assertEquals(Optional.of("reserved by this pattern for the tree structure (reserved: "
          + String.join(", ", pattern.reservedNames()) + ")"),
          pattern.nameRefusal(name, true));
      assertEquals(Optional.empty(), pattern.nameRefusal(name, false),
          "nested: only MongoDB's rule");
    }
    Set<String> others = new java.util.TreeSet<>();
    for (TreePattern other : TreePattern.values()) {
      others.addAll(other.reservedNames());
    }
    others.removeAll(pattern.reservedNames());
    for (String name : others) { // another pattern's fields are attributes here
      store.insert("with " + name, Position.lastRoot(), Map.of(name, 1));
      assertEquals(Optional.empty(), pattern.nameRefusal(name, true));
    }
    assertEquals(1 + others.size(), store.size());
  }

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void namesMongoDbCannotTakeAreRefusedAtAnyDepth(TreePattern pattern) {
    TreeStore store = pattern.open(MongoTestServer.get().freshCollection());
    Map<String, Object> values = Map.of(
        "$set", 1,
        "a.b", 1,
        "nested", Map.of("ok", Map.of("$where", 1)),
        "listed", List.of(1, Map.of("x.y", 2)));
    Map<String, String> messages = Map.of(
        "$set", "Attribute name '$set' of node 'n' cannot be a MongoDB field name: a MongoDB"
            + " field name cannot start with '$'",
        "a.b", "Attribute name 'a.b' of node 'n' cannot be a MongoDB field name: a MongoDB field"
            + " name cannot contain '.'",
        "nested", "Attribute 'nested' of node 'n' holds the key '$where': a MongoDB field name"
            + " cannot start with '$'",
        "listed", "Attribute 'listed' of node 'n' holds the key 'x.y': a MongoDB field name cannot"
            + " contain '.'");
    for (Map.Entry<String, Object> e : values.entrySet()) {
      IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class,
          () -> store.insert("n", Position.lastRoot(), Map.of(e.getKey(), e.getValue())));
      assertEquals(messages.get(e.getKey()), thrown.getMessage());
    }
    assertEquals(0, store.size(), "nothing written");
    assertEquals(Optional.of("a MongoDB field name cannot start with '$'"),
        pattern.nameRefusal("$where", false));
    assertEquals(Optional.of("a MongoDB field name cannot contain '.'"),
        pattern.nameRefusal("x.y", true));
    assertEquals(Optional.empty(), pattern.nameRefusal("x$", false));
  }

  /**
   * A value with no codec is refused naming the attribute, the node and the value's class, not
   * with the registry's "Can't find a codec for CodecCacheKey{…}" alone (a new user's trial).
   */
  @org.junit.jupiter.api.Test
  void aValueWithNoCodecIsRefusedNamingItsClass() {
    TreeStore store = TreePattern.PARENT_REFERENCES.open(MongoTestServer.get().freshCollection());
    store.insert("n", Position.lastRoot());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> store.update("n", Map.of("x", new Object())));
    org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("Attribute 'x' of node"
        + " 'n'") && e.getMessage().contains("java.lang.Object"), e.getMessage());
    assertEquals(Map.of(), store.find("n").orElseThrow().attributes());
  }
}
