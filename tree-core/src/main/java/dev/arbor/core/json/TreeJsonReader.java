package dev.arbor.core.json;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.arbor.core.Node;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.Tree;
import dev.arbor.core.internal.TreeStores;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads a forest in the nested-JSON format one node at a time, in preorder, without recursion: the
 * parser holds the path from the root to the current node, so a 100 000-level chain reads as
 * easily as a flat list.
 *
 * <pre>{@code
 * try (TreeJsonReader reader = TreeJson.reader(in)) {
 *   while (reader.hasNext()) {
 *     Node e = reader.next();   // id, parent id, depth, attributes
 *     ...
 *   }
 * }
 * }</pre>
 *
 * <p>Or all at once: {@link #readAll()} (the same as {@link TreeJson#read}).
 *
 * <p>Every format error is a {@link TreeJsonException} naming the line and column, thrown by the
 * {@code hasNext()} or {@code next()} call that reaches it: a caller that must not act on a partly
 * valid file reads it whole first. Node-by-node reading remembers every id seen, to refuse
 * duplicates; that set is the only state that grows with the size of the file, and {@link
 * #withoutDuplicateCheck()} drops it, for a consumer that refuses repeated ids itself.
 *
 * <p>Not thread-safe, except {@link #count()}, which any thread may read to report progress.
 */
public final class TreeJsonReader implements Iterator<Node>, Closeable {
  static {
    dev.arbor.core.internal.JsonReaders.install(new dev.arbor.core.internal.JsonReaders.Access() {
      @Override
      public TreeJsonReader withoutDuplicateCheck(TreeJsonReader reader) {
        return reader.withoutDuplicateCheck();
      }

      @Override
      public @Nullable TreeJsonException findRepeat(TreeJsonReader reader, String id) {
        return reader.findRepeat(id);
      }
    });
  }

  private static final Pattern SOURCE = Pattern.compile("\\[Source: [^;]*; ");

  private final JsonParser parser;
  private final Deque<String> parents = new ArrayDeque<>(); // nodes whose children list is open
  private @Nullable Set<String> seen; // ids read so far, when reading node by node
  private boolean started;
  private boolean done;
  private boolean readingAll;
  private boolean uncheckedIds;
  private @Nullable Node next;
  private volatile long count;
  private int idLine = -1;
  private int idColumn = -1;
  private NameRule names = (name, attribute) -> null;
  private IdRule ids = id -> null;

  TreeJsonReader(JsonParser parser) {
    this.parser = requireNonNull(parser, "parser");
  }

  /**
   * A rule for the names in attributes: an attribute's name, or a key of an object inside an
   * attribute's value. A store can refuse names the JSON format accepts (MongoDB field names
   * cannot start with {@code $}, for example); checking them while reading names the line and
   * column of the name.
   */
  @FunctionalInterface
  public interface NameRule {
    /**
     * Why {@code name} is refused, or null if it is accepted.
     *
     * @param name the name
     * @param attribute true for an attribute's name, false for a key inside an attribute's value
     *     (the typed wrappers {@value TreeJson#NUMBER_LONG}, {@value TreeJson#NUMBER_DOUBLE}
     *     and {@value TreeJson#DATE} are not asked about)
     */
    String refuse(String name, boolean attribute);
  }

  /**
   * Refuses, with a {@link TreeJsonException} at the name's line and column, every name in the
   * attributes that {@code rule} refuses. Set it before reading.
   *
   * @return this reader
   */
  public TreeJsonReader refusing(NameRule rule) {
    this.names = requireNonNull(rule, "rule");
    return this;
  }

  /**
   * A rule for the nodes' ids: a store can refuse ids the JSON format accepts (a tree whose ids
   * are stored as numbers refuses {@code "x2"}, for example); checking them while reading names
   * the line and column of the id.
   */
  @FunctionalInterface
  public interface IdRule {
    /**
     * Why {@code id} is refused, or null if it is accepted.
     *
     * @param id a node's id, never empty
     */
    @Nullable String refuse(String id);
  }

  /**
   * Refuses, with a {@link TreeJsonException} at the id's line and column, every node id that
   * {@code rule} refuses. Set it before reading.
   *
   * @return this reader
   */
  public TreeJsonReader refusingIds(IdRule rule) {
    this.ids = requireNonNull(rule, "rule");
    return this;
  }

  /**
   * Stops checking that ids are unique, so that reading node by node holds nothing that grows
   * with the input: for a consumer that refuses a repeated id itself (a MongoDB store's unique
   * {@code _id} index does, and its load is undone), which can then name the place of the
   * repeat with {@link #findRepeat}. Set it before reading. Arbor's command line reaches it
   * through {@code dev.arbor.core.internal.JsonReaders}; it is not part of the API.
   *
   * @return this reader
   */
  TreeJsonReader withoutDuplicateCheck() {
    this.uncheckedIds = true;
    return this;
  }

  /**
   * Reads on to the second node whose id is {@code id} (from where this reader is), and gives the
   * error a checking reader throws there; null if the rest of the input has it once or never.
   * Holds nothing that grows with the input.
   *
   * @throws TreeJsonException if the input is malformed before that node
   * @throws UncheckedIOException if reading fails
   */
  @Nullable TreeJsonException findRepeat(String id) {
    requireNonNull(id, "id");
    uncheckedIds = true;
    boolean once = false;
    while (hasNext()) {
      if (next().id().equals(id)) {
        if (once) {
          return new TreeJsonException(idLine, idColumn, "duplicate id " + quote(id)
              + " (a node nested under itself, a cycle, is a duplicate too)");
        }
        once = true;
      }
    }
    return null;
  }

  /**
   * Whether there is another node.
   *
   * @throws TreeJsonException if the input is malformed before the next node or the end
   * @throws UncheckedIOException if reading fails
   */
  @Override
  public boolean hasNext() {
    if (next == null && !done) {
      if (seen == null) {
        seen = uncheckedIds ? java.util.Collections.emptySet() : new HashSet<>();
      }
      next = advance();
    }
    return next != null;
  }

  /**
   * The next node in preorder: a parent before its children, siblings in order.
   *
   * @throws NoSuchElementException if there is none
   * @throws TreeJsonException if the input is malformed before the next node or the end
   * @throws UncheckedIOException if reading fails
   */
  @Override
  public Node next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Node e = next;
    next = null;
    return e;
  }

  /**
   * Reads the whole input into a {@link Tree}. Only on a reader that has returned no node yet.
   *
   * @throws TreeJsonException if the input is malformed anywhere, including a duplicate id
   * @throws IllegalStateException if nodes were already read one at a time
   * @throws UncheckedIOException if reading fails
   */
  public Tree readAll() {
    if (started || seen != null) {
      throw new IllegalStateException("readAll() needs a reader that has read nothing yet");
    }
    readingAll = true;
    Tree.Builder builder = Tree.builder();
    Node e;
    while ((e = advance()) != null) {
      try {
        builder.add(e.id(), e.parentId(), e.attributes());
      } catch (DuplicateNodeException ex) {
        throw new TreeJsonException(idLine, idColumn, "duplicate id " + quote(e.id())
            + " (a node nested under itself, a cycle, is a duplicate too)", ex);
      }
    }
    return builder.build(); // parents always exist and nesting cannot make a cycle
  }

  /** The number of nodes read so far. Any thread may call it. */
  public long count() {
    return count;
  }

  /** The line the parser has reached, 1-based. */
  public int line() {
    return parser.currentLocation().getLineNr();
  }

  /** Closes the parser; the underlying stream or reader stays open. */
  @Override
  public void close() {
    try {
      parser.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---------------------------------------------------------------------------------- parsing

  private @Nullable Node advance() {
    if (!started) {
      started = true;
      JsonToken t = token();
      if (t != JsonToken.START_ARRAY) {
        throw error("expected '[' starting the list of root nodes, found " + describe(t));
      }
    }
    while (true) {
      JsonToken t = token();
      if (t == JsonToken.END_ARRAY) {
        if (parents.isEmpty()) {
          JsonToken after = token();
          if (after != null) {
            throw error("found " + describe(after)
                + " after the list of root nodes, expected the end of the input");
          }
          done = true;
          return null;
        }
        String closed = parents.pop();
        JsonToken rest = token();
        if (rest == JsonToken.FIELD_NAME) {
          String field = name();
          if (field.equals("id") || field.equals("attributes")) {
            throw error("field '" + field + "' of node " + quote(closed)
                + " must come before its 'children'");
          }
          throw unknownField(field, closed);
        }
        continue; // END_OBJECT: the parser guarantees it
      }
      if (t != JsonToken.START_OBJECT) {
        throw error("expected a node object '{' in " + where() + ", found " + describe(t));
      }
      return readNode();
    }
  }

  /** Reads a node from just after its '{' up to its '}' or up to the '[' of its children. */
  private Node readNode() {
    JsonLocation start = parser.currentTokenLocation();
    String id = null;
    Map<String, @Nullable Object> attributes = Map.of();
    while (true) {
      JsonToken t = token();
      if (t == JsonToken.END_OBJECT) {
        if (id == null) {
          throw error(start, "node without an 'id' in " + where());
        }
        return entry(id, attributes);
      }
      String field = name();
      switch (field) {
        case "id" -> {
          t = token();
          if (t != JsonToken.VALUE_STRING) {
            throw error("'id' must be a string, found " + describe(t));
          }
          id = text();
          if (id.isEmpty()) {
            throw error("'id' must not be empty");
          }
          int surrogate = TreeStores.unpairedSurrogate(id);
          if (surrogate >= 0) {
            throw error("'id' " + quote(id.substring(0, surrogate) + "…") + " has "
                + unpaired(id, surrogate));
          }
          idLine = parser.currentTokenLocation().getLineNr();
          idColumn = parser.currentTokenLocation().getColumnNr();
          String refused = ids.refuse(id);
          if (refused != null) {
            throw error("id " + quote(id) + ": " + refused);
          }
          if (!readingAll && !uncheckedIds && !seen.add(id)) {
            throw error("duplicate id " + quote(id)
                + " (a node nested under itself, a cycle, is a duplicate too)");
          }
        }
        case "attributes" -> {
          t = token();
          if (t != JsonToken.START_OBJECT) {
            throw error("'attributes' of " + nodeName(id) + " must be an object, found "
                + describe(t));
          }
          attributes = readObject(id, null, 1);
        }
        case "children" -> {
          t = token();
          if (t != JsonToken.START_ARRAY) {
            throw error("'children' of " + nodeName(id) + " must be an array, found "
                + describe(t));
          }
          if (id == null) {
            throw error(start, "node without an 'id' before its 'children' in " + where()
                + " (the 'id' must come first)");
          }
          Node e = entry(id, attributes);
          parents.push(id);
          return e;
        }
        default -> throw unknownField(field, id);
      }
    }
  }

  private Node entry(String id, Map<String, @Nullable Object> attributes) {
    Node e = new Node(id, parents.peek(), parents.size(), attributes);
    count++;
    return e;
  }

  /** Reads an object's members after its '{'; {@code attribute} is null for the attributes map. */
  private Map<String, @Nullable Object> readObject(@Nullable String id,
      @Nullable String attribute, int nesting) {
    Map<String, @Nullable Object> map = new LinkedHashMap<>();
    JsonToken t;
    while ((t = token()) == JsonToken.FIELD_NAME) {
      String key = name();
      String name = attribute == null ? key : attribute;
      if (attribute == null || !key.equals(TreeJson.NUMBER_LONG)
          && !key.equals(TreeJson.NUMBER_DOUBLE) && !key.equals(TreeJson.DATE)) {
        String refused = names.refuse(key, attribute == null);
        if (refused != null) {
          throw error((attribute == null ? "attribute " + quote(key)
              : "key " + quote(key) + " in attribute " + quote(attribute)) + " of "
              + nodeName(id) + ": " + refused);
        }
      }
      map.put(key, readValue(token(), id, name, nesting));
    }
    if (t != JsonToken.END_OBJECT) {
      throw error("expected a field name or '}', found " + describe(t));
    }
    return map;
  }

  private @Nullable Object readValue(@Nullable JsonToken t, @Nullable String id,
      @Nullable String attribute, int nesting) {
    if (t == null) {
      throw error("unexpected end of input in attribute '" + attribute + "' of " + nodeName(id));
    }
    switch (t) {
      case VALUE_STRING:
        return text(); // an unpaired surrogate too: a Tree holds it, a MongoDB store refuses it
      case VALUE_TRUE:
        return Boolean.TRUE;
      case VALUE_FALSE:
        return Boolean.FALSE;
      case VALUE_NULL:
        return null;
      case VALUE_NUMBER_INT:
        return integer(id, attribute);
      case VALUE_NUMBER_FLOAT:
        return floating(id, attribute);
      case START_OBJECT: {
        checkNesting(id, attribute, nesting);
        JsonLocation start = parser.currentTokenLocation();
        Map<String, @Nullable Object> map = readObject(id, attribute, nesting + 1);
        return unwrap(map, start, id, attribute);
      }
      case START_ARRAY: {
        checkNesting(id, attribute, nesting);
        List<Object> list = new ArrayList<>();
        JsonToken e;
        while ((e = token()) != JsonToken.END_ARRAY) {
          list.add(readValue(e, id, attribute, nesting + 1));
        }
        return list;
      }
      default:
        throw error("expected a value in attribute '" + attribute + "' of " + nodeName(id)
            + ", found " + describe(t));
    }
  }

  private void checkNesting(@Nullable String id, @Nullable String attribute, int nesting) {
    if (nesting > TreeJsonWriter.MAX_VALUE_DEPTH) {
      throw error("attribute '" + attribute + "' of " + nodeName(id) + " nests deeper than "
          + TreeJsonWriter.MAX_VALUE_DEPTH + " levels");
    }
  }

  private Object integer(@Nullable String id, @Nullable String attribute) {
    try {
      switch (parser.getNumberType()) {
        case INT:
          return parser.getIntValue();
        case LONG:
          return parser.getLongValue();
        default:
          throw error("integer " + parser.getText() + " in attribute '" + attribute + "' of "
              + nodeName(id) + " does not fit in 64 bits (write it as a string)");
      }
    } catch (JsonProcessingException e) {
      throw jsonError(e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Object floating(@Nullable String id, @Nullable String attribute) {
    try {
      double d = parser.getDoubleValue();
      if (Double.isInfinite(d)) {
        throw error("number " + parser.getText() + " in attribute '" + attribute + "' of "
            + nodeName(id) + " is out of the range of a double");
      }
      return d;
    } catch (JsonProcessingException e) {
      throw jsonError(e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Turns the typed wrappers {@code {"$numberLong": "5"}} and {@code $numberDouble} to numbers,
   * and {@code {"$date": …}} to a {@code java.util.Date}.
   */
  private @Nullable Object unwrap(Map<String, @Nullable Object> map, JsonLocation start,
      @Nullable String id, @Nullable String attribute) {
    if (map.containsKey(TreeJson.DATE)) {
      Object v = map.get(TreeJson.DATE);
      try {
        if (map.size() == 1 && v instanceof String s) {
          return java.util.Date.from(java.time.OffsetDateTime.parse(s).toInstant());
        }
        if (map.size() == 1 && (v instanceof Long || v instanceof Integer)) {
          return new java.util.Date(((Number) v).longValue());
        }
      } catch (java.time.DateTimeException | ArithmeticException e) {
        // malformed: told below
      }
      throw error(start, "attribute '" + attribute + "' of " + nodeName(id)
          + " has a malformed date, expected {\"" + TreeJson.DATE + "\": \"<ISO-8601 date and"
          + " time, e.g. 2020-01-01T00:00:00.000Z>\"} or {\"" + TreeJson.DATE + "\": {\""
          + TreeJson.NUMBER_LONG + "\": \"<milliseconds since 1970>\"}}");
    }
    boolean isLong = map.containsKey(TreeJson.NUMBER_LONG);
    boolean isDouble = map.containsKey(TreeJson.NUMBER_DOUBLE);
    if (!isLong && !isDouble) {
      return map;
    }
    String key = isLong ? TreeJson.NUMBER_LONG : TreeJson.NUMBER_DOUBLE;
    String expected = "{\"" + key + "\": \""
        + (isLong ? "<integer>" : "<number>|NaN|Infinity|-Infinity") + "\"}";
    if (map.size() != 1 || !(map.get(key) instanceof String s)) {
      throw error(start, "attribute '" + attribute + "' of " + nodeName(id)
          + " has a malformed typed number, expected " + expected);
    }
    try {
      if (isLong) {
        return Long.parseLong(s);
      }
      switch (s) {
        case "NaN":
          return Double.NaN;
        case "Infinity":
          return Double.POSITIVE_INFINITY;
        case "-Infinity":
          return Double.NEGATIVE_INFINITY;
        default:
          if (!s.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?")) {
            throw new NumberFormatException(s);
          }
          return Double.parseDouble(s);
      }
    } catch (NumberFormatException e) {
      throw error(start, "attribute '" + attribute + "' of " + nodeName(id)
          + " has a malformed typed number \"" + s + "\", expected " + expected);
    }
  }

  // ---------------------------------------------------------------------------------- helpers

  private @Nullable JsonToken token() {
    try {
      return parser.nextToken();
    } catch (JsonProcessingException e) {
      throw jsonError(e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String text() {
    try {
      return parser.getText();
    } catch (JsonProcessingException e) {
      throw jsonError(e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String name() {
    try {
      return parser.currentName();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private TreeJsonException jsonError(JsonProcessingException e) {
    JsonLocation at = e.getLocation() != null ? e.getLocation() : parser.currentLocation();
    String message = e.getOriginalMessage();
    if (message == null) {
      message = e.getClass().getSimpleName();
    }
    int newline = message.indexOf('\n');
    if (newline >= 0) {
      message = message.substring(0, newline);
    }
    message = SOURCE.matcher(message).replaceAll("[");
    return new TreeJsonException(at.getLineNr(), at.getColumnNr(), "invalid JSON: " + message, e);
  }

  /** The unpaired surrogate at {@code at} in {@code s}, which no id can hold, in words. */
  private static String unpaired(String s, int at) {
    return "an unpaired surrogate (\\u" + String.format("%04x", (int) s.charAt(at))
        + ") at index " + at + ", which UTF-8 cannot hold (MongoDB stores strings as UTF-8)";
  }

  private TreeJsonException error(String reason) {
    return error(parser.currentTokenLocation(), reason);
  }

  private static TreeJsonException error(JsonLocation at, String reason) {
    return new TreeJsonException(at.getLineNr(), at.getColumnNr(), reason);
  }

  private TreeJsonException unknownField(String field, @Nullable String id) {
    return error("unknown field " + quote(field) + " in " + nodeName(id)
        + " (a node has only 'id', 'attributes' and 'children')");
  }

  private String where() {
    return parents.isEmpty() ? "the list of root nodes" : "the children of "
        + quote(parents.peek());
  }

  private String nodeName(@Nullable String id) {
    return id == null ? "a node (before its 'id')" : "node " + quote(id);
  }

  private String describe(@Nullable JsonToken t) {
    if (t == null) {
      return "the end of the input";
    }
    switch (t) {
      case START_OBJECT:
        return "an object";
      case START_ARRAY:
        return "an array";
      case END_OBJECT:
        return "'}'";
      case END_ARRAY:
        return "']'";
      case VALUE_STRING:
        return "a string";
      case VALUE_NUMBER_INT:
      case VALUE_NUMBER_FLOAT:
        return "a number";
      case VALUE_TRUE:
      case VALUE_FALSE:
        return "a boolean";
      case VALUE_NULL:
        return "null";
      case FIELD_NAME:
        return "field " + quote(name());
      default:
        return t.asString() == null ? t.name() : t.asString();
    }
  }

  /** {@code s} in single quotes, control characters escaped so a message stays on one line. */
  static String quote(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('\'');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
        sb.append(String.format("\\u%04x", (int) c));
      } else if (c == '\\' || c == '\'') {
        sb.append('\\').append(c);
      } else {
        sb.append(c);
      }
    }
    return sb.append('\'').toString();
  }
}
