package dev.arbor.core.json;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The nested-JSON tree format: reads and writes a whole forest as one JSON document.
 *
 * <h2>The format</h2>
 *
 * <p>A UTF-8 JSON array of the roots, in order; each node an object with
 *
 * <ul>
 *   <li>{@code "id"}: a non-empty string, unique in the file (required, before {@code children});
 *   <li>{@code "attributes"}: an object of any JSON values (optional, before {@code children});
 *   <li>{@code "children"}: an array of nodes in sibling order (optional, last).
 * </ul>
 *
 * <p>No other field is allowed, so a misspelt field is an error, not lost data. The category tree
 * of the MongoDB manual, as {@link #write} lays it out:
 *
 * <pre>{@code
 * [
 *   {"id": "Books", "attributes": {"shelf": 1}, "children": [
 *     {"id": "Programming", "children": [
 *       {"id": "Languages"},
 *       {"id": "Databases", "children": [
 *         {"id": "MongoDB", "attributes": {"stars": 5, "tags": ["document", "nosql"]}},
 *         {"id": "dbm"}
 *       ]}
 *     ]}
 *   ]}
 * ]
 * }</pre>
 *
 * <p>The writer's layout is fixed, so equal trees give equal bytes, and export, import, export
 * gives the same file: one node per line, indented two spaces per level (up to {@value
 * TreeJsonWriter#MAX_INDENT_LEVELS} levels, so that a very deep tree's file stays proportional to
 * its number of nodes), empty {@code attributes} and {@code children} left out, attributes in their
 * stored order.
 *
 * <h2>Attribute values</h2>
 *
 * <table>
 * <caption>Java value in a tree, and its JSON</caption>
 * <tr><th>Java<th>JSON<th>read back as
 * <tr><td>{@code String}, {@code Boolean}, {@code null}<td>string, {@code true}/{@code false},
 *     {@code null}<td>the same
 * <tr><td>{@code Integer} (also {@code Short}, {@code Byte})<td>{@code 42}<td>{@code Integer}
 * <tr><td>{@code Long} beyond the {@code int} range<td>{@code 10000000000}<td>{@code Long}
 * <tr><td>{@code Long} within the {@code int} range<td>{@code {"$numberLong": "42"}}<td>{@code
 *     Long}
 * <tr><td>{@code Double} (also {@code Float}), finite<td>{@code 42.0}, {@code 1.0E-7} (always a
 *     fraction or an exponent)<td>{@code Double}
 * <tr><td>{@code Double} NaN or infinite<td>{@code {"$numberDouble": "NaN"}}, {@code "Infinity"},
 *     {@code "-Infinity"}<td>{@code Double}
 * <tr><td>{@code Map} with string keys, {@code List}<td>object (keys in order), array<td>{@code
 *     Map}, {@code List}
 * </table>
 *
 * <p>So integers, longs and doubles keep their Java (and BSON) type through a round trip. The two
 * typed wrappers are those of MongoDB Extended JSON. Values nest at most {@value
 * TreeJsonWriter#MAX_VALUE_DEPTH} levels, MongoDB's own limit. Other value types (dates, ObjectIds,
 * decimals) have no form here and are refused by the writer, naming the node and the attribute;
 * {@link TreeStore#snapshot()} and {@link TreeStore#load} copy them between stores directly.
 *
 * <h2>Errors</h2>
 *
 * <p>A malformed file is refused with a {@link TreeJsonException} whose message starts with the
 * line and column: JSON syntax errors, a node without an {@code id}, an {@code id} that is not a
 * non-empty string, {@code attributes} that is not an object, {@code children} that is not an
 * array, an unknown field, a field given twice, a duplicate id (a node nested inside itself, the
 * only way a nested file can express a cycle, is a duplicate id), an integer beyond 64 bits.
 *
 * <h2>Memory</h2>
 *
 * <p>{@link #reader} and {@link #writer} stream node by node and hold only the path from the root
 * to the current node (the reader also the set of ids seen). {@link #read} and {@link #write} work
 * on a whole {@link Tree}, which holds every node.
 *
 * <h2>Thread safety</h2>
 *
 * <p>The static methods may be called from any number of threads at once; each reader and writer
 * they return belongs to one thread.
 */
public final class TreeJson {
  /** The typed wrapper for a {@code Long} that would otherwise read back as an {@code Integer}. */
  public static final String NUMBER_LONG = "$numberLong";

  /** The typed wrapper for the doubles JSON has no literal for: NaN and the infinities. */
  public static final String NUMBER_DOUBLE = "$numberDouble";

  /**
   * The typed wrapper for a date ({@code java.util.Date}, which a MongoDB store reads a BSON date
   * as): MongoDB Extended JSON's, {@code {"$date": "2020-01-01T00:00:00.000Z"}} for the years 1970
   * to 9999, {@code {"$date": {"$numberLong": "<milliseconds since 1970>"}}} for the others.
   */
  public static final String DATE = "$date";

  private static final JsonFactory FACTORY = JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder()
          .maxNestingDepth(Integer.MAX_VALUE) // deep trees nest deeply; no recursion depends on it
          .build())
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .disable(StreamReadFeature.AUTO_CLOSE_SOURCE)
      .build();

  private TreeJson() {}

  /**
   * Reads a whole forest from UTF-8 JSON. The stream is not closed.
   *
   * @throws TreeJsonException if the input is malformed, naming the line and column
   * @throws UncheckedIOException if reading fails
   */
  public static Tree read(InputStream in) {
    try (TreeJsonReader reader = reader(in)) {
      return reader.readAll();
    }
  }

  /**
   * Reads a whole forest from JSON characters. The reader is not closed.
   *
   * @throws TreeJsonException if the input is malformed, naming the line and column
   * @throws UncheckedIOException if reading fails
   */
  public static Tree read(Reader in) {
    try (TreeJsonReader reader = reader(in)) {
      return reader.readAll();
    }
  }

  /**
   * Reads a whole forest from a JSON string.
   *
   * @throws TreeJsonException if the input is malformed, naming the line and column
   */
  public static Tree parse(String json) {
    return read(new StringReader(requireNonNull(json, "json")));
  }

  /**
   * Writes a whole forest as UTF-8 JSON and flushes. The stream is not closed.
   *
   * @throws IllegalArgumentException if an attribute value has no form in this format, naming the
   *     node and the attribute
   * @throws UncheckedIOException if writing fails
   */
  public static void write(Tree tree, OutputStream out) {
    requireNonNull(tree, "tree");
    TreeJsonWriter writer = writer(out);
    writer.writeAll(tree);
    writer.finish();
  }

  /** A whole forest as a JSON string, exactly the characters {@link #write} writes. */
  public static String toJson(Tree tree) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    write(tree, out);
    return out.toString(StandardCharsets.UTF_8);
  }

  /** A reader of UTF-8 JSON from {@code in}, node by node; closing it leaves {@code in} open. */
  public static TreeJsonReader reader(InputStream in) {
    requireNonNull(in, "in");
    try {
      return new TreeJsonReader(FACTORY.createParser(in));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A reader of JSON text from {@code in}, node by node; closing it leaves {@code in} open. */
  public static TreeJsonReader reader(Reader in) {
    requireNonNull(in, "in");
    try {
      return new TreeJsonReader(FACTORY.createParser(in));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A writer of UTF-8 JSON to {@code out}, node by node, in preorder. */
  public static TreeJsonWriter writer(OutputStream out) {
    return new TreeJsonWriter(out);
  }
}
