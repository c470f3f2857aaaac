package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.TreePattern;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Runs {@code arbor bench} end to end on the embedded server at a tiny size over every pattern,
 * operation and workload, and checks that the files parse and hold one row per measurement.
 * Asserts no timing.
 */
class BenchEndToEndTest {
  private static final List<String> SHAPES = List.of("balanced", "wide");
  private static final int SIZE = 30;

  @TempDir
  static Path dir;
  static int exit;
  static String stdout;
  static String stderr;

  @BeforeAll
  static void runBench() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    exit = new CommandLine(new BenchCommand()).setOut(new PrintWriter(out))
        .setErr(new PrintWriter(err))
        .execute("--uri", testServerUri(), "--sizes", String.valueOf(SIZE), "--shapes",
            String.join(",", SHAPES), "--repeat", "1", "--warmup", "0", "--out", dir.toString());
    stdout = out.toString();
    stderr = err.toString();
  }

  /** The test server's URI when the suite runs against a real one, else "" (embedded). */
  static String testServerUri() {
    String uri = System.getProperty("arbor.mongo.uri");
    if (uri == null || uri.isBlank()) {
      uri = System.getenv("ARBOR_MONGO_URI");
    }
    return uri == null ? "" : uri;
  }

  /** The (pattern, shape, size, name) keys the run must have measured, once each. */
  private static Set<String> expectedKeys() {
    Set<String> keys = new HashSet<>();
    for (TreePattern p : TreePattern.values()) {
      for (String shape : SHAPES) {
        for (Operation op : Operation.values()) {
          keys.add(Names.of(p) + "/" + shape + "/" + SIZE + "/" + Names.of(op));
        }
        for (Workload w : Workload.BUILT_IN) {
          keys.add(Names.of(p) + "/" + shape + "/" + SIZE + "/" + w.name());
        }
      }
    }
    return keys;
  }

  @Test
  void exitsCleanlyWithAComparison() {
    assertEquals(0, exit, () -> "exit status; stderr:\n" + stderr + "\nstdout:\n" + stdout);
    assertTrue(stdout.contains("Round trips per operation"), stdout);
    assertTrue(stdout.contains("Ranking for browse"), stdout);
    assertTrue(stdout.contains("Decision:\n  browse 95/5 (realised 95/5 in every measurement): "),
        stdout);
    assertTrue(stdout.contains("Ranked by round trips and documents written"), stdout);
    assertTrue(stdout.contains("[") && stdout.contains("move-subtree"), "progress lines");
    assertFalse(stdout.contains("WARNING"), stdout);
  }

  @Test
  void csvHasOneRowPerMeasurement() throws Exception {
    List<String> lines = Files.readAllLines(dir.resolve(Output.CSV));
    List<String> header = Csv.parseLine(lines.get(0));
    assertEquals(Output.CSV_COLUMNS, header);
    Set<String> keys = new HashSet<>();
    for (String line : lines.subList(1, lines.size())) {
      List<String> cells = Csv.parseLine(line);
      assertEquals(header.size(), cells.size(), line);
      String key = cell(header, cells, "pattern") + "/" + cell(header, cells, "shape") + "/"
          + cell(header, cells, "size") + "/" + cell(header, cells, "name");
      assertTrue(keys.add(key), "duplicate row " + key);
      assertTrue(cell(header, cells, "note").isEmpty(), line);
      assertTrue(Double.parseDouble(cell(header, cells, "median_us")) > 0, line);
      assertTrue(Double.parseDouble(cell(header, cells, "round_trips")) >= 1, line);
      assertFalse(cell(header, cells, "server_version").isEmpty(), line);
      assertEquals("42", cell(header, cells, "seed"), line);
    }
    assertEquals(expectedKeys(), keys);
  }

  @Test
  void jsonHasOneMeasurementPerRowAndTheRunsParameters() throws Exception {
    Document json = Document.parse(Files.readString(dir.resolve(Output.JSON)));
    Document run = json.get("run", Document.class);
    assertEquals(List.of(SIZE), run.getList("sizes", Integer.class));
    assertEquals(TreePattern.values().length, run.getList("patterns", String.class).size());
    assertTrue(run.getBoolean("embedded"));
    List<Document> measurements = json.getList("measurements", Document.class);
    Set<String> keys = new HashSet<>();
    for (Document m : measurements) {
      keys.add(m.getString("pattern") + "/" + m.getString("shape") + "/" + m.getInteger("size")
          + "/" + m.getString("name"));
    }
    assertEquals(expectedKeys(), keys);
    assertEquals(expectedKeys().size(), measurements.size());
    List<Document> recommendations = json.getList("recommendations", Document.class);
    assertEquals(Workload.BUILT_IN.size(), recommendations.size());
    for (Document r : recommendations) {
      List<Document> ranking = r.getList("ranking", Document.class);
      assertEquals(TreePattern.values().length, ranking.size());
      assertEquals(1, ranking.get(0).getInteger("rank"));
      assertEquals("counts", r.getString("rankedBy"), "on the embedded server");
      assertTrue(r.getBoolean("realisedExactly"), r::toJson);
      int previous = 1;
      for (Document x : ranking) {
        assertFalse(x.getString("reason").isBlank());
        assertTrue(x.getInteger("rank") >= previous, "ranks in order");
        previous = x.getInteger("rank");
        assertTrue(x.getDouble("microsPerOpLow") <= x.getDouble("microsPerOp")
            && x.getDouble("microsPerOp") <= x.getDouble("microsPerOpHigh"), x::toJson);
      }
    }
  }

  @Test
  void reportsAreWrittenAndTheHtmlIsSelfContained() throws Exception {
    String md = Files.readString(dir.resolve(Output.MARKDOWN));
    assertTrue(md.indexOf("## Decision") < md.indexOf("## Rankings per workload"), md);
    assertTrue(md.contains("## Per operation, across patterns"), md);
    String perOperation = md.substring(md.indexOf("## Per operation, across patterns"));
    assertTrue(perOperation.contains("### move-subtree\n\n| shape |"), "tables in Markdown");
    assertTrue(md.contains("## Library overhead"), md);
    // Every read with a baseline has both ratios, with intervals; loads have insertMany's.
    String overhead = md.substring(md.indexOf("### Isolated reads"));
    assertTrue(overhead.matches("(?s).*\\| children \\| [0-9.]+ \\([0-9.]+-[0-9.]+\\) \\|.*"),
        overhead);
    assertTrue(md.contains("## Load throughput against insertMany"), md);
    String load = md.substring(md.indexOf("## Load throughput against insertMany"));
    assertTrue(load.matches("(?s).*\\| load \\| [0-9.]+ \\([0-9.]+-[0-9.]+\\) \\|.*"), load);
    assertTrue(md.contains(" (50%) |") || md.contains(" (33%) |"), "the protocol's share");
    String html = Files.readString(dir.resolve(Output.HTML));
    assertTrue(html.startsWith("<!DOCTYPE html>"));
    assertTrue(html.contains("<svg"), "inline charts");
    String withoutSvgNamespace = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assertFalse(withoutSvgNamespace.contains("http://") || withoutSvgNamespace.contains("https://")
        || withoutSvgNamespace.contains("<script") || withoutSvgNamespace.contains("<link"),
        "no network resource in the HTML report");
  }

  private static String cell(List<String> header, List<String> cells, String column) {
    return cells.get(header.indexOf(column));
  }

  /** A minimal RFC 4180 line parser (no embedded newlines in the benchmark's CSV). */
  static final class Csv {
    static List<String> parseLine(String line) {
      List<String> out = new ArrayList<>();
      StringBuilder cell = new StringBuilder();
      boolean quoted = false;
      for (int i = 0; i < line.length(); i++) {
        char c = line.charAt(i);
        if (quoted) {
          if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
            cell.append('"');
            i++;
          } else if (c == '"') {
            quoted = false;
          } else {
            cell.append(c);
          }
        } else if (c == '"') {
          quoted = true;
        } else if (c == ',') {
          out.add(cell.toString());
          cell.setLength(0);
        } else {
          cell.append(c);
        }
      }
      out.add(cell.toString());
      return out;
    }
  }
}
