package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The library modules export their API packages only: what a modular build sees of tree-core and
 * tree-mongo, read from the compiled {@code module-info.class}.
 */
class ModuleDescriptorTest {
  @Test
  void treeMongoExportsItsApiPackageOnly() throws IOException {
    ModuleDescriptor d = read(Path.of("target", "classes"));
    assertEquals("dev.arbor.mongo", d.name());
    assertEquals(Map.of("dev.arbor.mongo", Set.of()), exports(d));
  }

  @Test
  void treeCoreExportsItsHelpersToTheStoresOnly() throws IOException {
    ModuleDescriptor d = read(Path.of("..", "tree-core", "target", "classes"));
    assertEquals("dev.arbor.core", d.name());
    assertEquals(Map.of("dev.arbor.core", Set.of(), "dev.arbor.core.json", Set.of(),
        "dev.arbor.core.internal", Set.of("dev.arbor.mongo")), exports(d));
  }

  private static ModuleDescriptor read(Path classes) throws IOException {
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      return ModuleDescriptor.read(in);
    }
  }

  private static Map<String, Set<String>> exports(ModuleDescriptor d) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (ModuleDescriptor.Exports e : d.exports()) {
      out.put(e.source(), new TreeSet<>(e.targets()));
    }
    return out;
  }
}
