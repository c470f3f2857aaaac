package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every Java and {@code mongosh} block of the README and of docs/ is compiled or run by a test:
 * each equals a snippet that a test of some module marks ({@code // NAME:begin} ...
 * {@code // NAME:end}, compared by {@link DocsPages#assertShown} in that test), or is one of the
 * blocks a test reads out of its page itself (the README's first program, the Java sample of
 * docs/cli.md, the validator in {@code mongosh}). A block added to a page without a test fails
 * here, naming the page and its line.
 */
class DocsBlocksTest {
  private static final Pattern BLOCK = Pattern.compile("```(java|js)\n(.*?)```", Pattern.DOTALL);
  private static final Pattern SNIPPET =
      Pattern.compile("// ([\\w-]+):begin\n(.*?)// \\1:end", Pattern.DOTALL);

  /** Blocks read out of their page by the test named, by the first line of the block. */
  private static final Map<String, String> READ_BY_THEIR_TEST = Map.of(
      "import com.mongodb.client.MongoClient;", "ReadmeExampleTest (the README's first program)",
      "Tree tree;", "tree-bench's DocsSampleTest (docs/cli.md, From Java)",
      "db.createCollection(\"categories\", { validator: { $jsonSchema: { anyOf: [",
      "DocsExamplesTest (the validator in mongosh)");

  @Test
  void everyCodeBlockOfThePagesIsATestsSnippet() throws IOException {
    List<List<String>> snippets = snippets();
    List<Path> pages = new ArrayList<>(List.of(DocsPages.readme()));
    try (Stream<Path> docs = Files.list(Path.of("..", "docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    List<String> untested = new ArrayList<>();
    int blocks = 0;
    for (Path page : pages) {
      String text = Files.readString(page);
      Matcher block = BLOCK.matcher(text);
      while (block.find()) {
        blocks++;
        List<String> shown = lines(block.group(2));
        boolean tested = READ_BY_THEIR_TEST.containsKey(shown.get(0))
            || snippets.stream().anyMatch(s -> shows(shown, s));
        if (!tested) {
          int line = (int) text.substring(0, block.start()).lines().count() + 1;
          untested.add(page.getFileName() + ":" + line + " " + shown.get(0));
        }
      }
    }
    assertEquals(List.of(), untested, "code blocks no test compiles or runs (of " + blocks + ")");
  }

  /** The snippets marked in the test sources of every module. */
  private static List<List<String>> snippets() throws IOException {
    List<List<String>> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(Path.of(".."))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")
          && p.toString().contains("src" + java.io.File.separator + "test")).toList()) {
        Matcher m = SNIPPET.matcher(Files.readString(f));
        while (m.find()) {
          out.add(lines(m.group(2)));
        }
      }
    }
    return out;
  }

  /** As {@link DocsPages#assertShown}: the same lines, then only closing braces. */
  private static boolean shows(List<String> shown, List<String> snippet) {
    return shown.size() >= snippet.size() && shown.subList(0, snippet.size()).equals(snippet)
        && shown.subList(snippet.size(), shown.size()).stream().allMatch("}"::equals);
  }

  private static List<String> lines(String text) {
    return text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
  }
}
