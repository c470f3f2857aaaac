package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Invalid option values: one line on standard error naming the value and the valid ones. */
class BenchCommandTest {

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--patterns | parent-references,trees | unknown pattern 'trees' (valid: parent-references,"
          + " child-references, array-of-ancestors, materialized-paths, nested-sets, all, none)",
      "--shapes | bushy | unknown shape 'bushy' (valid: balanced, deep, wide, random, catalog",
      "--ops | children,teleport | unknown operation 'teleport' (valid: load, insert-leaf,",
      "--workload | shopping | unknown workload 'shopping' (valid: browse, balanced, reorganise",
      "--sizes | 12x | invalid size '12x' (valid: a number of nodes like 1000, 10k, 1M)",
      "--sizes | 5 | size '5' is out of range (valid: 10 to",
      "--repeat | 0 | --repeat must be at least 1, got 0",
  })
  void anUnknownValueGivesOneLineListingTheValidOnes(String option, String value,
      String expected) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = new CommandLine(new BenchCommand()).setOut(new PrintWriter(out))
        .setErr(new PrintWriter(err)).execute(option, value);
    assertEquals(2, exit, err::toString);
    String message = err.toString().strip();
    assertEquals(1, message.lines().count(), message);
    assertTrue(message.startsWith("arbor bench: "), message);
    assertTrue(message.contains(expected), message);
    assertEquals("", out.toString());
  }

  @ParameterizedTest
  @CsvSource({"Materialized_Paths, MATERIALIZED_PATHS", "all, PARENT_REFERENCES"})
  void namesAreCaseAndSeparatorInsensitive(String value, String first) {
    assertEquals(first, Names.parse("pattern", java.util.List.of(value),
        dev.arbor.mongo.TreePattern.values(), java.util.List.of()).get(0).name());
  }
}
