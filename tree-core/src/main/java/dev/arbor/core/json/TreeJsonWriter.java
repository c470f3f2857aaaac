package dev.arbor.core.json;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Writes a forest in the nested-JSON format one node at a time, in preorder, holding only the path
 * from the root to the current node: a tree of any size and depth is written in memory
 * proportional to its depth, without recursion.
 *
 * <pre>{@code
 * try (OutputStream out = Files.newOutputStream(path)) {
 *   TreeJsonWriter writer = TreeJson.writer(out);
 *   for (Node e : tree.entries()) {   // preorder, each with its depth
 *     writer.write(e);
 *   }
 *   writer.finish();
 * }
 * }</pre>
 *
 * <p>The bytes written depend only on the nodes written (see {@link TreeJson} for the layout), so a
 * tree exported, imported and exported again gives the same bytes. The writer checks that entries
 * come in preorder (each entry's depth at most one more than the previous one's, its parent the
 * node the preorder puts above it) but not that ids are unique.
 *
 * <p>Not thread-safe: one writer per thread.
 */
public final class TreeJsonWriter implements Closeable, Flushable {
  /** A date's relaxed form: ISO-8601 in UTC with milliseconds (Extended JSON's, years 1970-9999). */
  private static final java.time.format.DateTimeFormatter ISO_MILLIS =
      java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
          .withZone(java.time.ZoneOffset.UTC);

  /** The first millisecond of the year 10000, past which a date is written as a number. */
  private static final long LAST_RELAXED_DATE = 253402300800000L;

  /** Indentation grows two spaces per level up to this many levels, so a file stays linear. */
  static final int MAX_INDENT_LEVELS = 32;

  /** Values nest at most this deep inside an attribute, as in MongoDB documents. */
  static final int MAX_VALUE_DEPTH = 100;

  private static final String[] INDENTS = new String[MAX_INDENT_LEVELS + 1];

  static {
    for (int i = 0; i <= MAX_INDENT_LEVELS; i++) {
      INDENTS[i] = "  ".repeat(i);
    }
  }

  private final OutputStream stream;
  private final Writer out;
  private final List<String> path = new ArrayList<>(); // ids from the root to the pending node
  private @Nullable Node pending; // written except for its children and closing brace
  private boolean started;
  private boolean finished;
  private long count;

  TreeJsonWriter(OutputStream stream) {
    this.stream = requireNonNull(stream, "stream");
    this.out = new BufferedWriter(new OutputStreamWriter(stream, UTF_8), 1 << 16);
  }

  /**
   * Writes the next node in preorder.
   *
   * @return this writer
   * @throws IllegalArgumentException if the entry does not continue a preorder (its depth is more
   *     than one below the previous entry, or its parent is not the node above it), or if an
   *     attribute value has no form in this format; nothing of the entry is written then
   * @throws IllegalStateException if the writer is finished
   * @throws UncheckedIOException if the stream fails
   */
  public TreeJsonWriter write(Node entry) {
    requireNonNull(entry, "entry");
    if (finished) {
      throw new IllegalStateException("the writer is finished");
    }
    int depth = entry.depth();
    if (depth > path.size()) {
      throw new IllegalArgumentException("node '" + entry.id() + "' at depth " + depth
          + " does not continue a preorder: the previous node is at depth " + (path.size() - 1));
    }
    String expectedParent = depth == 0 ? null : path.get(depth - 1);
    if (expectedParent == null ? entry.parentId() != null
        : !expectedParent.equals(entry.parentId())) {
      throw new IllegalArgumentException("node '" + entry.id() + "' names parent '"
          + entry.parentId() + "' but the preorder puts it under "
          + (expectedParent == null ? "no parent (a root)" : "'" + expectedParent + "'"));
    }
    // Render the entry's head first, so a bad attribute leaves the output untouched.
    StringBuilder head = new StringBuilder(64);
    head.append(indent(depth)).append("{\"id\": ");
    appendString(head, entry.id());
    if (!entry.attributes().isEmpty()) {
      head.append(", \"attributes\": ");
      appendValue(head, entry.attributes(), entry.id(), null, 0);
    }
    try {
      if (!started) {
        out.write("[\n");
        started = true;
      }
      if (pending != null) {
        if (depth == pending.depth() + 1) {
          out.write(", \"children\": [\n");
        } else {
          out.write("}");
          closeLevels(pending.depth(), depth);
          out.write(",\n");
        }
      }
      out.write(head.toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    while (path.size() > depth) {
      path.remove(path.size() - 1);
    }
    path.add(entry.id());
    pending = entry;
    count++;
    return this;
  }

  /**
   * Writes every node of {@code tree}, in preorder.
   *
   * @return this writer
   */
  public TreeJsonWriter writeAll(Tree tree) {
    for (Node e : tree.entries()) {
      write(e);
    }
    return this;
  }

  /** The number of nodes written so far. */
  public long count() {
    return count;
  }

  /**
   * Closes the open nodes and the root list and flushes; the stream stays open. Does nothing if
   * already finished. A writer finished before any node writes the empty forest, {@code []}.
   *
   * @throws UncheckedIOException if the stream fails
   */
  public void finish() {
    if (finished) {
      return;
    }
    finished = true;
    try {
      if (!started) {
        out.write("[]\n");
      } else {
        out.write("}");
        closeLevels(pending.depth(), 0);
        out.write("\n]\n");
      }
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Flushes what was written so far (not a complete document until {@link #finish()}). */
  @Override
  public void flush() {
    try {
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@link #finish() Finishes} the document and closes the stream. */
  @Override
  public void close() {
    try {
      finish();
    } finally {
      try {
        stream.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** Closes the children lists of the levels from {@code from - 1} down to {@code to}. */
  private void closeLevels(int from, int to) throws IOException {
    for (int level = from - 1; level >= to; level--) {
      out.write("\n");
      out.write(indent(level));
      out.write("]}");
    }
  }

  private static String indent(int depth) {
    return INDENTS[Math.min(depth + 1, MAX_INDENT_LEVELS)];
  }

  // ------------------------------------------------------------------------------------ values

  private static void appendValue(StringBuilder sb, @Nullable Object value, String id,
      @Nullable String attribute, int nesting) {
    if (nesting > MAX_VALUE_DEPTH) {
      throw new IllegalArgumentException("attribute '" + attribute + "' of node '" + id
          + "' nests deeper than " + MAX_VALUE_DEPTH + " levels");
    }
    if (value == null) {
      sb.append("null");
    } else if (value instanceof String s) {
      appendString(sb, s);
    } else if (value instanceof Boolean b) {
      sb.append(b.booleanValue());
    } else if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
      sb.append(((Number) value).intValue());
    } else if (value instanceof Long l) {
      if (l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE) {
        // A plain number this small reads back as an Integer: keep the type.
        sb.append("{\"" + TreeJson.NUMBER_LONG + "\": \"").append(l.longValue()).append("\"}");
      } else {
        sb.append(l.longValue());
      }
    } else if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (Double.isFinite(d)) {
        sb.append(d); // Double.toString: always a '.' or an exponent, so it reads back as a double
      } else {
        sb.append("{\"" + TreeJson.NUMBER_DOUBLE + "\": \"").append(d).append("\"}");
      }
    } else if (value instanceof java.util.Date date) {
      long millis = date.getTime();
      if (millis >= 0 && millis < LAST_RELAXED_DATE) {
        sb.append("{\"" + TreeJson.DATE + "\": \"")
            .append(ISO_MILLIS.format(java.time.Instant.ofEpochMilli(millis))).append("\"}");
      } else {
        sb.append("{\"" + TreeJson.DATE + "\": {\"" + TreeJson.NUMBER_LONG + "\": \"")
            .append(millis).append("\"}}");
      }
    } else if (value instanceof Map<?, ?> map) {
      if (map.isEmpty()) {
        sb.append("{}");
        return;
      }
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!(e.getKey() instanceof String key)) {
          throw new IllegalArgumentException("attribute '" + attribute + "' of node '" + id
              + "' has a non-string key: " + e.getKey());
        }
        if (!first) {
          sb.append(", ");
        }
        first = false;
        appendString(sb, key);
        sb.append(": ");
        appendValue(sb, e.getValue(), id, attribute == null ? key : attribute, nesting + 1);
      }
      sb.append('}');
    } else if (value instanceof List<?> list) {
      sb.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          sb.append(", ");
        }
        appendValue(sb, list.get(i), id, attribute, nesting + 1);
      }
      sb.append(']');
    } else {
      throw new IllegalArgumentException("attribute '" + attribute + "' of node '" + id
          + "' is a " + value.getClass().getName() + ", which has no form in the JSON tree format"
          + " (supported: string, number, boolean, date, null, map, list)");
    }
  }

  /** Appends {@code s} as a JSON string; control characters and lone surrogates are escaped. */
  static void appendString(StringBuilder sb, String s) {
    sb.append('"');
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default -> {
          if (c < 0x20) {
            appendEscape(sb, c);
          } else if (Character.isHighSurrogate(c)) {
            if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
              sb.append(c).append(s.charAt(++i));
            } else {
              appendEscape(sb, c); // UTF-8 cannot carry a lone surrogate: escape it
            }
          } else if (Character.isLowSurrogate(c)) {
            appendEscape(sb, c);
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  private static void appendEscape(StringBuilder sb, char c) {
    sb.append("\\u");
    String hex = Integer.toHexString(c);
    for (int k = hex.length(); k < 4; k++) {
      sb.append('0');
    }
    sb.append(hex);
  }
}
