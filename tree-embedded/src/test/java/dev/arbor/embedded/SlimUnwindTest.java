package dev.arbor.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import de.bwaldvogel.mongo.backend.aggregation.stage.UnwindStage;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@link SlimUnwind} against mongo-java-server's own {@code UnwindStage}: the same documents, with
 * their fields in the same order and as independent of the input, for every option and every kind
 * of value at the path; and the array unwound is read once, not copied once per element.
 */
class SlimUnwindTest {
  private static final List<Object> SPECS = List.of("$a",
      new Document("path", "$a"),
      new Document("path", "$a").append("preserveNullAndEmptyArrays", true),
      new Document("path", "$a").append("includeArrayIndex", "i"),
      new Document("path", "$a").append("preserveNullAndEmptyArrays", true)
          .append("includeArrayIndex", "i"),
      new Document("path", "$a").append("includeArrayIndex", "a"));

  private static List<Document> inputs() {
    List<Document> docs = new ArrayList<>();
    docs.add(new Document("_id", 1).append("b", 2)); // missing
    docs.add(new Document("_id", 2).append("a", null).append("b", 2));
    docs.add(new Document("_id", 3).append("a", new ArrayList<>()).append("b", 2));
    docs.add(new Document("_id", 4).append("a", "scalar").append("b", 2));
    docs.add(new Document("_id", 5).append("a", new Document("x", 1)).append("b", 2));
    docs.add(new Document("_id", 6).append("before", new Document("n", new ArrayList<>(List.of(1,
        new Document("m", 2))))).append("a", new ArrayList<>(List.of(1, "two",
        new Document("three", new ArrayList<>(List.of(3))), new ArrayList<>(List.of(4, 5)))))
        .append("after", new ArrayList<>(List.of(new Document("k", "v")))));
    docs.add(new Document("a", new ArrayList<>(List.of(new Document("_id", 7), 8))));
    return docs;
  }

  @Test
  void givesTheServersDocumentsForEveryOptionAndValue() {
    for (Object spec : SPECS) {
      SlimUnwind slim = SlimUnwind.of(spec);
      assertNotNull(slim, spec::toString);
      List<Document> expected = new UnwindStage(spec).apply(inputs().stream()).toList();
      List<Document> input = inputs();
      List<Document> actual = slim.apply(input.stream()).toList();
      assertEquals(expected, actual, spec::toString);
      // the same fields in the same order, at every level
      assertEquals(expected.toString(), actual.toString(), spec::toString);
      // the input is left as it was
      assertEquals(inputs(), input, spec::toString);
      // what the server copies deeply is copied here too
      for (Document out : actual) {
        for (Document in : input) {
          for (String field : List.of("before", "after")) {
            if (out.get(field) != null && out.get("_id") == in.get("_id")) {
              assertNotSame(in.get(field), out.get(field), spec::toString);
            }
          }
        }
      }
    }
  }

  @Test
  void aPathThatIsNotATopLevelFieldKeepsTheServersStage() {
    assertNull(SlimUnwind.of("$a.b"));
    assertNull(SlimUnwind.of(new Document("path", "$a.b")));
    assertNull(SlimUnwind.of(new Document("path", 1)));
    assertNull(SlimUnwind.of(42));
  }

  @Test
  void theElementsAreTheServersOwnNotCopies() {
    Document element = new Document("x", 1);
    Document in = new Document("_id", 1).append("a", new ArrayList<>(List.of(element)));
    Document out = SlimUnwind.of("$a").apply(Stream.of(in)).toList().get(0);
    Document server = new UnwindStage("$a").apply(Stream.of(in)).toList().get(0);
    assertSame(server.get("a"), out.get("a"), "the server does not copy the element either");
    assertSame(element, out.get("a"));
  }

  /**
   * The server's stage copies the whole document, its array included, for each element: n + 1
   * walks of an array of n elements. This one walks it once.
   */
  @Test
  void theArrayIsWalkedOnceNotOncePerElement() {
    AtomicInteger walks = new AtomicInteger();
    List<Object> array = new ArrayList<>() {
      private static final long serialVersionUID = 1L;

      @Override
      public Stream<Object> stream() {
        walks.incrementAndGet();
        return super.stream();
      }
    };
    for (int i = 0; i < 1_000; i++) {
      array.add(new Document("n", i));
    }
    Document in = new Document("_id", 1).append("a", array).append("b", "c");
    List<Document> out = SlimUnwind.of("$a").apply(Stream.of(in)).toList();
    assertEquals(1_000, out.size());
    assertEquals(1, walks.get(), "the array is walked once");
    walks.set(0);
    new UnwindStage("$a").apply(Stream.of(in)).toList();
    assertEquals(1_001, walks.get(), "the server's stage walks it for every element too");
  }
}
