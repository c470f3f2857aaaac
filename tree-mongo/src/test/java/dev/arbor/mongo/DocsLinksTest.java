package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README and docs/*.md as a set of pages: every relative link names a file that exists, and
 * every anchor a heading of its page (as GitHub makes anchors of headings); the README stays a
 * front page, and every page opens with its title, a summary and its contents.
 */
class DocsLinksTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

  @Test
  void everyRelativeLinkAndAnchorResolves() throws IOException {
    List<String> broken = new ArrayList<>();
    Map<Path, Set<String>> anchors = new HashMap<>();
    for (Path page : pages()) {
      List<String> lines = Files.readAllLines(page);
      boolean code = false;
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        if (line.strip().startsWith("```")) {
          code = !code;
          continue;
        }
        if (code) {
          continue;
        }
        Matcher link = LINK.matcher(line.replaceAll("`[^`]*`", ""));
        while (link.find()) {
          String target = link.group(1);
          if (target.matches("^[a-z]+:.*")) {
            continue; // https:, mailto:
          }
          int hash = target.indexOf('#');
          String file = hash < 0 ? target : target.substring(0, hash);
          Path to = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
          String where = ROOT.relativize(page) + ":" + (i + 1) + ": ";
          if (!Files.exists(to)) {
            broken.add(where + "no file " + target);
          } else if (hash >= 0 && to.toString().endsWith(".md")
              && !anchors.computeIfAbsent(to, DocsLinksTest::anchors)
                  .contains(target.substring(hash + 1))) {
            broken.add(where + "no heading for " + target);
          }
        }
      }
    }
    assertEquals(List.of(), broken);
  }

  @Test
  void theReadmeIsAFrontPageAndEveryPageOpensWithASummaryAndContents() throws IOException {
    List<String> readme = Files.readAllLines(DocsPages.readme());
    assertTrue(readme.size() <= 400, "README.md has " + readme.size() + " lines, at most 400");
    for (Path page : pages()) {
      if (page.equals(DocsPages.readme())) {
        continue;
      }
      List<String> lines = Files.readAllLines(page);
      assertTrue(lines.get(0).startsWith("# ") && lines.get(1).isEmpty()
          && !lines.get(2).isBlank() && !lines.get(2).startsWith("#"),
          page + " opens with its title and a summary paragraph");
      int contents = lines.indexOf("**Contents**");
      int firstSection = 0;
      while (firstSection < lines.size() && !lines.get(firstSection).startsWith("## ")) {
        firstSection++;
      }
      assertTrue(contents > 2 && contents < firstSection,
          page + " lists its contents before its first section");
    }
  }

  /** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as '-'. */
  static Set<String> anchors(Path page) {
    List<String> lines;
    try {
      lines = Files.readAllLines(page);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean code = false;
    for (String line : lines) {
      if (line.strip().startsWith("```")) {
        code = !code;
        continue;
      }
      Matcher heading = HEADING.matcher(line);
      if (code || !heading.matches()) {
        continue;
      }
      String slug = heading.group(1).toLowerCase(java.util.Locale.ROOT)
          .replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
      int n = seen.merge(slug, 1, Integer::sum) - 1;
      anchors.add(n == 0 ? slug : slug + "-" + n);
    }
    return anchors;
  }

  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>(List.of(DocsPages.readme()));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }
}
