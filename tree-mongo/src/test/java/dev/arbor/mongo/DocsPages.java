package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The README and the pages of {@code docs/}, read by the tests that run their examples: an example
 * runs in a test between {@code // MARKER:begin} and {@code // MARKER:end} lines, and the page
 * must show it as a Java block of its own, line for line (indentation aside), so that a block
 * changed in the page, or in the test, fails the test.
 */
final class DocsPages {
  private static final Pattern JAVA_BLOCK = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL);

  private DocsPages() {}

  /** The repository's README.md (tests run in the module's directory). */
  static Path readme() {
    return Path.of("..", "README.md");
  }

  /** A page of the repository's docs/ directory, e.g. {@code data-api.md}. */
  static Path page(String name) {
    return Path.of("..", "docs", name);
  }

  /** A test source of this module, e.g. {@code ReadmeExampleTest.java}. */
  static Path testSource(String name) {
    return Path.of("src", "test", "java", "dev", "arbor", "mongo", name);
  }

  /**
   * Asserts that {@code page} shows the snippet that {@code source} marks with {@code marker} as
   * one Java block: the same lines, stripped, blank lines aside; the block may only add closing
   * braces after them (a snippet cut inside a {@code try} whose assertions follow in the test).
   */
  static void assertShown(Path page, Path source, String marker) throws IOException {
    String code = Files.readString(source);
    String begin = "// " + marker + ":begin\n";
    int from = code.indexOf(begin);
    int to = code.indexOf("// " + marker + ":end", from);
    if (from < 0 || to < 0) {
      fail(source + " marks no snippet " + marker);
    }
    List<String> snippet = lines(code.substring(from + begin.length(), to));
    Matcher block = JAVA_BLOCK.matcher(Files.readString(page));
    List<String> closest = List.of();
    while (block.find()) {
      List<String> shown = lines(block.group(1));
      if (shown.size() >= snippet.size() && shown.subList(0, snippet.size()).equals(snippet)
          && shown.subList(snippet.size(), shown.size()).stream().allMatch("}"::equals)) {
        return;
      }
      if (common(shown, snippet) > common(closest, snippet)) {
        closest = shown;
      }
    }
    fail(page + " shows no Java block equal to the snippet " + marker + " of " + source
        + "\nsnippet:\n" + String.join("\n", snippet)
        + "\nclosest block:\n" + String.join("\n", closest));
  }

  private static List<String> lines(String text) {
    return text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
  }

  private static long common(List<String> a, List<String> b) {
    return a.stream().filter(b::contains).count();
  }
}
