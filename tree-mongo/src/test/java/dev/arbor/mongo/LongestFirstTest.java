package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashSet;
import org.junit.jupiter.api.Test;

/**
 * {@link LongestFirst} names test classes that exist, once each: a class renamed without it would
 * only start late, unnoticed.
 */
class LongestFirstTest {
  @Test
  void everyNamedClassExistsOnce() {
    assertEquals(LongestFirst.LONGEST.size(), new HashSet<>(LongestFirst.LONGEST).size(),
        "a class named twice");
    for (String name : LongestFirst.LONGEST) {
      assertDoesNotThrow(() -> Class.forName(LongestFirst.class.getPackageName() + "." + name),
          name);
    }
  }
}
