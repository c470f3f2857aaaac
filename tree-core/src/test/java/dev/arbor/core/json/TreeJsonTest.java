package dev.arbor.core.json;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.core.Node;
import dev.arbor.core.Fixtures;
import dev.arbor.core.Tree;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TreeJsonTest {

  /** The manual's category tree with a few attributes, as in the package documentation. */
  static Tree categories() {
    return Tree.builder()
        .add("Books", null, Map.of("shelf", 1))
        .add("Programming", "Books")
        .add("Languages", "Programming")
        .add("Databases", "Programming")
        .add("MongoDB", "Databases", attributes("stars", 5, "tags", List.of("document", "nosql")))
        .add("dbm", "Databases")
        .build();
  }

  static final String CATEGORIES_JSON = """
      [
        {"id": "Books", "attributes": {"shelf": 1}, "children": [
          {"id": "Programming", "children": [
            {"id": "Languages"},
            {"id": "Databases", "children": [
              {"id": "MongoDB", "attributes": {"stars": 5, "tags": ["document", "nosql"]}},
              {"id": "dbm"}
            ]}
          ]}
        ]}
      ]
      """;

  @Test
  void withoutTheDuplicateCheckRepeatsAreReadAndFoundAgainWithTheirPlace() {
    String json = "[\n  {\"id\": \"a\", \"children\": [\n    {\"id\": \"b\"},\n"
        + "    {\"id\": \"a\"}\n  ]},\n  {\"id\": \"c\"}\n]\n";
    List<String> ids = new ArrayList<>();
    try (TreeJsonReader r = TreeJson.reader(new ByteArrayInputStream(json.getBytes(UTF_8)))
        .withoutDuplicateCheck()) {
      r.forEachRemaining(e -> ids.add(e.id()));
    }
    assertEquals(List.of("a", "b", "a", "c"), ids);
    try (TreeJsonReader r = TreeJson.reader(new ByteArrayInputStream(json.getBytes(UTF_8)))) {
      TreeJsonException repeat = r.findRepeat("a");
      assertEquals(4, repeat.line());
      assertEquals(12, repeat.column());
      assertTrue(repeat.getMessage().contains("duplicate id 'a'"), repeat.getMessage());
    }
    try (TreeJsonReader r = TreeJson.reader(new ByteArrayInputStream(json.getBytes(UTF_8)))) {
      assertEquals(null, r.findRepeat("b"));
    }
    // the checking reader refuses the same place
    TreeJsonException checked = assertThrows(TreeJsonException.class, () -> {
      try (TreeJsonReader r = TreeJson.reader(new ByteArrayInputStream(json.getBytes(UTF_8)))) {
        r.forEachRemaining(e -> { });
      }
    });
    assertEquals(4, checked.line());
    assertEquals(12, checked.column());
  }

  @Test
  void aNameRuleRefusesNamesAtTheirPositionAndIsNotAskedAboutTypedNumbers() {
    List<String> asked = new ArrayList<>();
    String json = "[{\"id\": \"a\", \"attributes\": {\"n\": {\"$numberLong\": \"5\"},"
        + " \"o\": {\"k\": [{\"bad\": 1}]}}}]";
    TreeJsonException e = assertThrows(TreeJsonException.class, () -> TreeJson.reader(
        new ByteArrayInputStream(json.getBytes(UTF_8))).refusing((name, attribute) -> {
          asked.add(name + (attribute ? " (attribute)" : ""));
          return name.equals("bad") ? "not wanted" : null;
        }).readAll());
    assertEquals("line 1, column 69: key 'bad' in attribute 'o' of node 'a': not wanted",
        e.getMessage());
    assertEquals(List.of("n (attribute)", "o (attribute)", "k", "bad"), asked);
  }

  @Test
  void writesTheDocumentedLayout() {
    assertEquals(CATEGORIES_JSON, TreeJson.toJson(categories()));
  }

  @Test
  void readsTheDocumentedLayout() {
    Tree tree = TreeJson.parse(CATEGORIES_JSON);
    assertEquals(categories(), tree);
    assertEquals(List.of("Languages", "Databases"), tree.children("Programming"));
  }

  @Test
  void emptyForest() {
    assertEquals("[]\n", TreeJson.toJson(Tree.empty()));
    assertTrue(TreeJson.parse("[]").isEmpty());
    assertTrue(TreeJson.parse(" [ ] \n").isEmpty());
  }

  @Test
  void severalRootsAndClosingLevels() {
    Tree tree = Tree.parse("a(b(c(d)) e) f g(h)");
    String json = TreeJson.toJson(tree);
    assertEquals("""
        [
          {"id": "a", "children": [
            {"id": "b", "children": [
              {"id": "c", "children": [
                {"id": "d"}
              ]}
            ]},
            {"id": "e"}
          ]},
          {"id": "f"},
          {"id": "g", "children": [
            {"id": "h"}
          ]}
        ]
        """, json);
    assertEquals(tree, TreeJson.parse(json));
  }

  @Test
  void fieldsInAnyOrderBeforeChildrenAndEmptyOnesAccepted() {
    Tree tree = TreeJson.parse("""
        [{"attributes": {"x": 1}, "id": "a", "children": []},
         {"id": "b", "attributes": {}}]
        """);
    assertEquals(Tree.builder().add("a", null, Map.of("x", 1)).add("b", null).build(), tree);
    assertEquals("[\n  {\"id\": \"a\", \"attributes\": {\"x\": 1}},\n  {\"id\": \"b\"}\n]\n",
        TreeJson.toJson(tree));
  }

  @Test
  void valueTypesRoundTripExactly() {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("z", null);
    nested.put("a", List.of(1, 2L, 3.0, List.of(), Map.of()));
    Map<String, Object> attributes = new LinkedHashMap<>();
    attributes.put("string", "text");
    attributes.put("empty", "");
    attributes.put("int", 42);
    attributes.put("negativeInt", Integer.MIN_VALUE);
    attributes.put("smallLong", 42L);
    attributes.put("longMin", Long.MIN_VALUE);
    attributes.put("bigLong", 10_000_000_000L);
    attributes.put("double", 42.0);
    attributes.put("fraction", 0.1);
    attributes.put("tiny", 1e-300);
    attributes.put("huge", 1.7976931348623157e308);
    attributes.put("negativeZero", -0.0);
    attributes.put("nan", Double.NaN);
    attributes.put("inf", Double.POSITIVE_INFINITY);
    attributes.put("negInf", Double.NEGATIVE_INFINITY);
    attributes.put("true", true);
    attributes.put("false", false);
    attributes.put("null", null);
    attributes.put("nested", nested);
    attributes.put("list", Arrays.asList("a", null, 7));
    Tree tree = Tree.builder().add("n", null, attributes).build();

    String json = TreeJson.toJson(tree);
    Tree back = TreeJson.parse(json);
    assertEquals(tree, back);
    assertEquals(json, TreeJson.toJson(back));
    Map<String, Object> read = back.get("n").attributes();
    assertSame(Integer.class, read.get("int").getClass());
    assertSame(Long.class, read.get("smallLong").getClass());
    assertSame(Long.class, read.get("bigLong").getClass());
    assertSame(Double.class, read.get("double").getClass());
    assertEquals(Double.doubleToRawLongBits(-0.0),
        Double.doubleToRawLongBits((Double) read.get("negativeZero")));
    assertTrue(((Double) read.get("nan")).isNaN());
    assertEquals(List.copyOf(attributes.keySet()), List.copyOf(read.keySet()), "key order");
    assertTrue(json.contains("\"smallLong\": {\"$numberLong\": \"42\"}"), json);
    assertTrue(json.contains("\"bigLong\": 10000000000,"), json);
    assertTrue(json.contains("\"double\": 42.0,"), json);
    assertTrue(json.contains("\"nan\": {\"$numberDouble\": \"NaN\"}"), json);
  }

  /**
   * A date (what a MongoDB store reads a BSON date as) travels as Extended JSON's {@code $date}:
   * relaxed (ISO-8601, milliseconds) from 1970 to 9999, a number of milliseconds otherwise, at
   * any depth, and reads back equal. (Before, {@code arbor export} refused a collection with a
   * date in any node's attributes: a trial of collections made by others.)
   */
  @Test
  void datesTravelAsExtendedJsonDatesAndReadBackEqual() {
    Map<String, Object> attributes = new java.util.LinkedHashMap<>();
    attributes.put("created", new java.util.Date(1577836800123L));
    attributes.put("ancient", new java.util.Date(-86_400_000L * 365 * 200));
    attributes.put("far", new java.util.Date(253402300800000L));
    attributes.put("nested", Map.of("at", List.of(new java.util.Date(0L))));
    Tree tree = Tree.builder().add("n", null, attributes).build();
    String json = TreeJson.toJson(tree);
    assertTrue(json.contains("\"created\": {\"$date\": \"2020-01-01T00:00:00.123Z\"}"), json);
    assertTrue(json.contains("\"ancient\": {\"$date\": {\"$numberLong\": \"-6307200000000\"}}"),
        json);
    assertTrue(json.contains("\"far\": {\"$date\": {\"$numberLong\": \"253402300800000\"}}"),
        json);
    assertTrue(json.contains("{\"$date\": \"1970-01-01T00:00:00.000Z\"}"), json);
    Tree back = TreeJson.parse(json);
    assertEquals(tree, back);
    assertSame(java.util.Date.class, back.get("n").attributes().get("created").getClass());
    assertEquals(new java.util.Date(1577836800000L), TreeJson.parse(
        "[{\"id\": \"a\", \"attributes\": {\"d\": {\"$date\": \"2020-01-01T01:00:00+01:00\"}}}]")
        .get("a").attributes().get("d"));
  }

  @Test
  void plainJsonNumbersReadAsIntLongOrDouble() {
    Map<String, Object> a = TreeJson.parse(
        "[{\"id\": \"n\", \"attributes\": {\"i\": -7, \"l\": 3000000000, \"d\": 1e2, \"e\": 2.5}}]")
        .get("n").attributes();
    assertEquals(-7, a.get("i"));
    assertEquals(3_000_000_000L, a.get("l"));
    assertEquals(100.0, a.get("d"));
    assertEquals(2.5, a.get("e"));
  }

  @Test
  void hostileIdsAndStringsRoundTrip() {
    Tree.Builder builder = Tree.builder();
    String previous = null;
    for (String id : Fixtures.HOSTILE_IDS) {
      builder.add(id, previous, Map.of("label", id));
      previous = id;
    }
    // Ids cannot hold an unpaired surrogate (UTF-8 cannot); attribute strings travel escaped.
    assertThrows(IllegalArgumentException.class, () -> Tree.builder().add("lone \ud800", null));
    builder.add("lone high", null, Map.of("low", "low \udc00 pair \ud83c\udf33 \u2028",
        "high", "lone \ud800 high"));
    Tree tree = builder.build();
    byte[] bytes = bytes(tree);
    Tree back = TreeJson.read(new ByteArrayInputStream(bytes));
    assertEquals(tree, back);
    assertEquals(new String(bytes, UTF_8), new String(bytes(back), UTF_8));
    String json = new String(bytes, UTF_8);
    assertTrue(json.contains("\"lone \\ud800 high\""), json);
    assertTrue(json.contains("\\u0000nul"), json);
    assertFalse(json.lines().anyMatch(l -> l.contains("line\nbreak")));
  }

  @Test
  void deepChainNeedsNoRecursion() {
    int depth = 100_000;
    Tree.Builder builder = Tree.builder();
    for (int i = 0; i < depth; i++) {
      builder.add("n" + i, i == 0 ? null : "n" + (i - 1));
    }
    builder.add("other root", null);
    Tree chain = builder.build();
    byte[] bytes = bytes(chain);
    // Indentation stops growing at 32 levels, so the file stays linear in the number of nodes
    // (indenting all 100 000 levels would take 10 GB).
    assertTrue(bytes.length < 200L * depth, "bytes: " + bytes.length);
    Tree back = TreeJson.read(new ByteArrayInputStream(bytes));
    assertEquals(chain, back);
    assertEquals(depth - 1, back.get("n" + (depth - 1)).depth());
    assertTrue(Arrays.equals(bytes, bytes(back)));
  }

  @Test
  void streamingReaderYieldsPreorderWithDepthAndParent() {
    try (TreeJsonReader reader = TreeJson.reader(
        new ByteArrayInputStream(CATEGORIES_JSON.getBytes(UTF_8)))) {
      List<String> seen = new ArrayList<>();
      while (reader.hasNext()) {
        Node e = reader.next();
        seen.add(e.id() + "/" + e.parentId() + "/" + e.depth());
      }
      assertEquals(List.of("Books/null/0", "Programming/Books/1", "Languages/Programming/2",
          "Databases/Programming/2", "MongoDB/Databases/3", "dbm/Databases/3"), seen);
      assertEquals(6, reader.count());
    }
  }

  @Test
  void streamingWriterChecksPreorder() {
    TreeJsonWriter writer = TreeJson.writer(new ByteArrayOutputStream());
    writer.write(new Node("a", null, 0, Map.of()));
    IllegalArgumentException tooDeep = assertThrows(IllegalArgumentException.class,
        () -> writer.write(new Node("c", "b", 2, Map.of())));
    assertTrue(tooDeep.getMessage().contains("'c'"), tooDeep.getMessage());
    IllegalArgumentException wrongParent = assertThrows(IllegalArgumentException.class,
        () -> writer.write(new Node("c", "x", 1, Map.of())));
    assertTrue(wrongParent.getMessage().contains("under 'a'"), wrongParent.getMessage());
  }

  @Test
  void writerRefusesValuesWithoutJsonFormNamingNodeAndAttribute() {
    Tree tree = Tree.builder()
        .add("ok", null)
        // a date has a form ($date) since stop 56; a Duration none
        .add("when", null, Map.of("meta", Map.of("took", java.time.Duration.ofSeconds(1))))
        .build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    TreeJsonWriter writer = TreeJson.writer(out);
    writer.write(tree.entries().get(0));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> writer.write(tree.entries().get(1)));
    assertTrue(e.getMessage().contains("attribute 'meta' of node 'when'"), e.getMessage());
    assertTrue(e.getMessage().contains("java.time.Duration"), e.getMessage());
    writer.finish(); // the refused node left no trace
    assertEquals("[\n  {\"id\": \"ok\"}\n]\n", out.toString(UTF_8));
  }

  // ------------------------------------------------------------------------------- malformed

  static Stream<Arguments> malformed() {
    return Stream.of(
        bad("syntax: trailing comma", "[\n  {\"id\": \"a\",}\n]", 2, "invalid JSON"),
        bad("syntax: unquoted id", "[\n  {\"id\": a}\n]", 2, "invalid JSON"),
        bad("syntax: unclosed list", "[\n  {\"id\": \"a\"}\n", 3, "invalid JSON"),
        bad("empty input", "", 1, "expected '[' starting the list of root nodes, found the end"),
        bad("top level not a list", "{\"id\": \"a\"}", 1, "expected '['"),
        bad("root not an object", "[\n  \"a\"\n]", 2,
            "expected a node object '{' in the list of root nodes, found a string"),
        bad("child not an object", "[{\"id\": \"a\", \"children\": [\n  [] ]}]", 2,
            "in the children of 'a', found an array"),
        bad("content after the list", "[]\n[]", 2, "after the list of root nodes"),
        bad("duplicate ids", "[\n  {\"id\": \"a\"},\n  {\"id\": \"b\"},\n  {\"id\": \"a\"}\n]", 4,
            "duplicate id 'a'"),
        bad("cycle: a node inside itself",
            "[{\"id\": \"a\", \"children\": [\n  {\"id\": \"b\", \"children\": [\n"
                + "    {\"id\": \"a\"}]}]}]", 3, "duplicate id 'a'"),
        bad("missing id", "[\n  {\"id\": \"a\"},\n  {\"attributes\": {\"x\": 1}}\n]", 3,
            "node without an 'id' in the list of root nodes"),
        bad("id after children", "[{\"id\": \"p\", \"children\": [\n  {\"children\": [], "
            + "\"id\": \"a\"}]}]", 2, "before its 'children' in the children of 'p'"),
        bad("id not a string", "[\n  {\"id\": 7}\n]", 2, "'id' must be a string, found a number"),
        bad("id null", "[\n  {\"id\": null}\n]", 2, "'id' must be a string, found null"),
        bad("id empty", "[\n\n  {\"id\": \"\"}\n]", 3, "'id' must not be empty"),
        bad("children not an array", "[\n  {\"id\": \"a\", \"children\": {}}\n]", 2,
            "'children' of node 'a' must be an array, found an object"),
        bad("children a string", "[\n  {\"id\": \"a\", \"children\": \"b\"}\n]", 2,
            "'children' of node 'a' must be an array, found a string"),
        bad("attributes not an object", "[\n  {\"id\": \"a\", \"attributes\": [1]}\n]", 2,
            "'attributes' of node 'a' must be an object, found an array"),
        bad("attributes after children",
            "[{\"id\": \"a\", \"children\": [],\n  \"attributes\": {}}]", 2,
            "field 'attributes' of node 'a' must come before its 'children'"),
        bad("unknown field", "[\n  {\"id\": \"a\", \"childern\": []}\n]", 2,
            "unknown field 'childern' in node 'a'"),
        bad("field twice", "[\n  {\"id\": \"a\",\n   \"id\": \"b\"}\n]", 3, "Duplicate field 'id'"),
        bad("attribute twice", "[{\"id\": \"a\", \"attributes\": {\"x\": 1,\n \"x\": 2}}]", 2,
            "Duplicate field 'x'"),
        bad("integer beyond 64 bits",
            "[\n  {\"id\": \"a\", \"attributes\": {\"n\": 99999999999999999999}}\n]", 2,
            "integer 99999999999999999999 in attribute 'n' of node 'a' does not fit in 64 bits"),
        bad("double out of range", "[{\"id\": \"a\", \"attributes\": {\"n\": [\n 1e999]}}]", 2,
            "out of the range of a double"),
        bad("malformed $numberLong",
            "[{\"id\": \"a\", \"attributes\": {\"n\":\n {\"$numberLong\": 5}}}]", 2,
            "attribute 'n' of node 'a' has a malformed typed number"),
        bad("malformed $date",
            "[{\"id\": \"a\", \"attributes\": {\"d\":\n {\"$date\": \"yesterday\"}}}]", 2,
            "attribute 'd' of node 'a' has a malformed date"),
        bad("$date beside another key", "[{\"id\": \"a\", \"attributes\": {\"d\":\n"
            + " {\"$date\": \"2020-01-01T00:00:00Z\", \"x\": 1}}}]", 2,
            "attribute 'd' of node 'a' has a malformed date"),
        bad("attribute nested too deep", "[{\"id\": \"a\", \"attributes\": {\"n\":\n"
            + "[".repeat(101) + "]".repeat(101) + "}}]", 2, "nests deeper than 100 levels"),
        bad("invalid UTF-8", "[{\"id\": \"\u00ff\u00fe\"}]", 1, "invalid JSON"),
        // the escape of a lone surrogate: no id holds one (an attribute's string may)
        bad("id with an unpaired surrogate", "[\n  {\"id\": \"x\\ud800y\"}]", 2,
            "'id' 'x…' has an unpaired surrogate (\\ud800) at index 1, which UTF-8 cannot hold"));
  }

  private static Arguments bad(String name, String json, int line, String reason) {
    return Arguments.of(name, json, line, reason);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void malformedInputIsRefusedWithLineAndReason(String name, String json, int line,
      String reason) {
    byte[] bytes = name.equals("invalid UTF-8")
        ? json.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1) : json.getBytes(UTF_8);
    TreeJsonException whole = assertThrows(TreeJsonException.class,
        () -> TreeJson.read(new ByteArrayInputStream(bytes)));
    check(whole, line, reason);
    TreeJsonException streamed = assertThrows(TreeJsonException.class, () -> {
      try (TreeJsonReader reader = TreeJson.reader(new ByteArrayInputStream(bytes))) {
        while (reader.hasNext()) {
          reader.next();
        }
      }
    });
    check(streamed, line, reason);
  }

  private static void check(TreeJsonException e, int line, String reason) {
    assertEquals(line, e.line(), e.getMessage());
    assertTrue(e.getMessage().startsWith("line " + line + ", column "), e.getMessage());
    assertTrue(e.getMessage().contains(reason), e.getMessage());
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
    assertFalse(e.getMessage().contains("Source"), e.getMessage());
  }

  private static byte[] bytes(Tree tree) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    TreeJson.write(tree, out);
    return out.toByteArray();
  }

  private static Map<String, Object> attributes(Object... keysAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }
}
