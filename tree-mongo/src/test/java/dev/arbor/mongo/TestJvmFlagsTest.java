package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The test JVMs' {@code -XX} flags (the parent POM's {@code arbor.testJit}, tree-mongo's
 * collector) are all flags this JVM knows: they start with {@code
 * -XX:+IgnoreUnrecognizedVMOptions} so that a JVM without HotSpot's flags still runs the suite,
 * which would also hide a mistyped flag (the JVM would start and ignore it). Skipped on a JVM
 * without HotSpot's diagnostic bean.
 */
class TestJvmFlagsTest {
  @Test
  void everyFlagOfTheTestJvmIsOneItKnows() {
    HotSpotDiagnosticMXBean hotSpot;
    try {
      hotSpot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    } catch (IllegalArgumentException e) {
      hotSpot = null;
    }
    assumeTrue(hotSpot != null, "not a HotSpot JVM");
    List<String> flags = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!argument.startsWith("-XX:")) {
        continue;
      }
      String name = argument.substring(4).replaceFirst("^[+-]", "").replaceFirst("=.*", "");
      flags.add(name);
      try {
        hotSpot.getVMOption(name);
      } catch (IllegalArgumentException e) {
        unknown.add(argument);
      }
    }
    assumeTrue(flags.contains("IgnoreUnrecognizedVMOptions"),
        "run without the POM's JVM flags");
    assertEquals(List.of(), unknown, "flags this JVM does not know (and ignored)");
  }
}
