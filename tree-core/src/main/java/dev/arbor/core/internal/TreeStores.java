package dev.arbor.core.internal;

import static java.util.Objects.requireNonNull;

import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeException;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Static helpers shared by Arbor's {@link TreeStore} implementations, so that every store validates
 * ids and copies attributes the same way. Not part of the API: the module exports this package to
 * Arbor's own modules only.
 */
public final class TreeStores {
  private TreeStores() {}

  /**
   * Checks that {@code id} is a valid node id: any non-empty string.
   *
   * @return {@code id}
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalArgumentException if {@code id} is empty
   */
  public static String checkId(String id) {
    requireNonNull(id, "node id must not be null");
    if (id.isEmpty()) {
      throw new IllegalArgumentException("node id must not be empty");
    }
    int at = unpairedSurrogate(id);
    if (at >= 0) {
      // UTF-8 cannot encode it: the driver would store U+FFFD and read back another id.
      throw new IllegalArgumentException("node id contains an unpaired surrogate (\\u"
          + String.format("%04x", (int) id.charAt(at)) + ") at index " + at + ": "
          + id.substring(0, at) + "…");
    }
    return id;
  }

  /**
   * The index of the first unpaired surrogate in {@code s}, or -1: a character UTF-8 cannot
   * encode, which the driver would store as U+FFFD (BSON strings are UTF-8).
   */
  public static int unpairedSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  /** Why {@code s}, a string to be stored, cannot be stored as it is, or null if it can. */
  private static @Nullable String surrogateProblem(String s) {
    int at = unpairedSurrogate(s);
    return at < 0 ? null : "an unpaired surrogate (\\u" + String.format("%04x",
        (int) s.charAt(at)) + ") at index " + at + ", which UTF-8 (BSON's strings) cannot hold";
  }

  /**
   * Checks a page size.
   *
   * @throws IllegalArgumentException if {@code limit} is not positive
   */
  public static int checkLimit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit < 1: " + limit);
    }
    return limit;
  }

  /** The exception for a paging cursor {@code after} that is not a child of {@code id}. */
  public static IllegalArgumentException notAChild(String after, String id) {
    return new IllegalArgumentException("'" + after + "' is not a child of '" + id
        + "': a page of children starts after one of them");
  }

  /**
   * Refuses, naming the node and the attribute, what no store takes as an attribute name: at any
   * depth inside the value too, a name MongoDB does not take as a field name ({@link
   * #fieldNameProblem}) or a key that is null or no string. (A top-level null name is a {@link
   * NullPointerException}, as a null id is; {@code _id} and a pattern's own names are each
   * store's to refuse.)
   *
   * @throws IllegalArgumentException naming the node and the attribute
   */
  public static void checkAttributeNames(String id, Map<String, ?> attributes) {
    for (Map.Entry<String, ?> e : attributes.entrySet()) {
      String name = requireNonNull(e.getKey(), "attribute names must not be null");
      String problem = fieldNameProblem(name);
      if (problem != null) {
        throw new IllegalArgumentException("Attribute name '" + name + "' of node '" + id
            + "' cannot be a MongoDB field name: " + problem);
      }
      String nested = nestedProblem(e.getValue());
      if (nested != null) {
        throw new IllegalArgumentException("Attribute '" + name + "' of node '" + id
            + "' holds " + nested);
      }
    }
  }

  /** Why {@code name} cannot be a MongoDB field name, or null if it can. */
  public static @Nullable String fieldNameProblem(String name) {
    if (name.isEmpty()) {
      return "a MongoDB field name cannot be empty";
    }
    if (name.startsWith("$")) {
      return "a MongoDB field name cannot start with '$'";
    }
    if (name.contains(".")) {
      return "a MongoDB field name cannot contain '.'";
    }
    if (name.indexOf('\0') >= 0) {
      return "a MongoDB field name cannot contain NUL";
    }
    String surrogate = surrogateProblem(name);
    return surrogate == null ? null : "a MongoDB field name cannot contain " + surrogate;
  }

  /**
   * The first key inside {@code value} (in maps, lists and their elements, at any depth) that
   * cannot be a MongoDB field name, or is null or no string, or the first string that UTF-8
   * cannot hold, described with the reason; null if there is none.
   */
  public static @Nullable String nestedProblem(@Nullable Object value) {
    if (value instanceof String string) {
      String problem = surrogateProblem(string);
      return problem == null ? null : "a string with " + problem;
    }
    if (value instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (e.getKey() == null) {
          return "a null key: the keys of a map are field names";
        }
        if (!(e.getKey() instanceof String key)) {
          return "the key " + e.getKey() + ", of class " + e.getKey().getClass().getName()
              + ": the keys of a map are field names, strings";
        }
        String problem = fieldNameProblem(key);
        if (problem != null) {
          return "the key '" + key + "': " + problem;
        }
        problem = nestedProblem(e.getValue());
        if (problem != null) {
          return problem;
        }
      }
    } else if (value instanceof List<?> list) {
      for (Object element : list) {
        String problem = nestedProblem(element);
        if (problem != null) {
          return problem;
        }
      }
    }
    return null;
  }

  /**
   * Returns a deep, unmodifiable copy of {@code attributes}: nested maps become unmodifiable
   * insertion-ordered maps and nested lists unmodifiable lists, whatever their original class, so
   * that attributes read back from any store compare equal to the ones written.
   *
   * @throws NullPointerException if {@code attributes} or one of its keys is null
   */
  public static Map<String, @Nullable Object> copyAttributes(
      Map<String, ? extends @Nullable Object> attributes) {
    requireNonNull(attributes, "attributes must not be null (use an empty map)");
    if (attributes.isEmpty()) {
      return Map.of();
    }
    return copyMap(attributes);
  }

  private static Map<String, @Nullable Object> copyMap(Map<?, ?> map) {
    LinkedHashMap<String, @Nullable Object> copy = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      Object key = requireNonNull(e.getKey(), "attribute names must not be null");
      if (!(key instanceof String)) {
        throw new IllegalArgumentException("attribute names must be strings, got " + key);
      }
      copy.put((String) key, copyValue(e.getValue()));
    }
    return Collections.unmodifiableMap(copy);
  }

  private static @Nullable Object copyValue(@Nullable Object value) {
    if (value instanceof Map<?, ?> map) {
      return copyMap(map);
    }
    if (value instanceof List<?> list) {
      List<@Nullable Object> copy = new ArrayList<>(list.size());
      for (Object element : list) {
        copy.add(copyValue(element));
      }
      return Collections.unmodifiableList(copy);
    }
    return value;
  }

  /**
   * The exception for an entry of a stream whose parent is not on the path from a root to the
   * entry before it: the stream is not in preorder, or names a parent that is not in it.
   *
   * @param index the entry's position in the stream, from 0
   */
  public static TreeException notInPreorder(Node entry, long index) {
    return new TreeException("Entry " + index + " ('" + entry.id() + "') names the parent '"
        + entry.parentId() + "', which is not on the path from a root to the entry before it:"
        + " entries must come in preorder (a parent before its children, a subtree before its"
        + " next sibling) and name parents among the entries before them; nothing was written");
  }

  /**
   * Reads a stream of entries in preorder into a {@link Tree}, checking the order.
   *
   * @throws TreeException naming the first entry out of preorder
   * @throws DuplicateNodeException if an id appears twice
   */
  public static Tree collect(java.util.Iterator<? extends Node> entries) {
    requireNonNull(entries, "entries");
    Tree.Builder builder = Tree.builder();
    java.util.ArrayDeque<String> path = new java.util.ArrayDeque<>();
    long index = 0;
    while (entries.hasNext()) {
      Node e = requireNonNull(entries.next(), "entry");
      while (!path.isEmpty() && !path.peek().equals(e.parentId())) {
        path.pop();
      }
      if (e.parentId() != null && path.isEmpty()) {
        throw notInPreorder(e, index);
      }
      try {
        builder.add(e.id(), e.parentId(), e.attributes());
      } catch (DuplicateNodeException repeat) {
        throw givenTwice(e.id());
      }
      path.push(e.id());
      index++;
    }
    return builder.build();
  }

  /** An id a stream of nodes gives twice, which no store could take. */
  public static DuplicateNodeException givenTwice(String id) {
    return new DuplicateNodeException(id, "Node id '" + id + "' is given twice in the stream of"
        + " nodes (a node given under itself is given twice too)");
  }
}
