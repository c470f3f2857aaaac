package dev.arbor.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arbor.mongo.TreePattern;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ScopeBench} runs both configurations and counts what its writers did. */
class ScopeBenchTest {
  @Test
  void measuresTheBaselineOneTreeAndATreePerWriter() throws Exception {
    List<ScopeBench.Figures> figures = ScopeBench.run(List.of(TreePattern.PARENT_REFERENCES),
        0.5, 2, 30, null);
    assertEquals(3, figures.size());
    assertEquals(List.of(1, 1, 2), figures.stream().map(ScopeBench.Figures::trees).toList());
    assertEquals(List.of(1, 2, 2), figures.stream().map(ScopeBench.Figures::writers).toList());
    for (ScopeBench.Figures f : figures) {
      assertTrue(f.changes() > 0 && f.changes() % 3 == 0, f.toString());
      assertEquals(0, f.failures(), f.toString());
      assertTrue(f.toString().contains("changes/s"), f.toString());
    }
  }
}
