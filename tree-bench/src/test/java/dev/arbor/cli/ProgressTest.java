package dev.arbor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Progress}: which phases get a line, whatever the machine's load does to its ticks. */
class ProgressTest {

  @Test
  void aPhaseLongerThanTheIntervalIsToldEvenIfNoTickCameInTime() throws Exception {
    StringWriter text = new StringWriter();
    // ticks every 200 ms, the first after 200 ms: a phase of 250 ms is told by a tick or, if the
    // tick came late (a busy machine), as the next phase starts
    try (Progress p = new Progress(new PrintWriter(text), true, 200)) {
      p.phase("reading");
      Thread.sleep(250);
      p.phase("loading");
      p.done("imported");
    }
    List<String> lines = text.toString().lines().toList();
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("arbor: reading: ")), lines::toString);
    assertTrue(lines.get(lines.size() - 1).startsWith("imported in "), lines::toString);
  }

  @Test
  void shortPhasesAndQuietRunsPrintOnlyTheirSummary() {
    StringWriter text = new StringWriter();
    try (Progress p = new Progress(new PrintWriter(text), true, 10_000)) {
      p.phase("reading");
      p.phase("loading");
      p.done("imported");
    }
    assertEquals(1, text.toString().lines().count(), text::toString);
    StringWriter quiet = new StringWriter();
    try (Progress p = new Progress(new PrintWriter(quiet), false, 1)) {
      p.phase("reading");
      p.done("imported");
    }
    assertEquals("", quiet.toString());
  }
}
