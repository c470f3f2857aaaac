package dev.arbor.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  /**
   * The exported package holds the API alone: every type compiled into {@code dev.arbor.mongo} is
   * public and one of these; the machinery is in {@code dev.arbor.mongo.internal} and its
   * subpackages, which the module does not export ({@link #treeMongoExportsItsApiPackageOnly}).
   */
  @Test
  void theApiPackageHoldsTheApiAlone() throws Exception {
    Set<String> api = new TreeSet<>();
    try (java.util.stream.Stream<Path> files =
        Files.list(Path.of("target", "classes", "dev", "arbor", "mongo"))) {
      for (Path f : files.toList()) {
        String name = f.getFileName().toString();
        if (name.endsWith(".class") && !name.contains("$") && !name.startsWith("package-info")) {
          String type = name.substring(0, name.length() - ".class".length());
          assertTrue(java.lang.reflect.Modifier.isPublic(
              Class.forName("dev.arbor.mongo." + type).getModifiers()), type + " is not API");
          api.add(type);
        }
      }
    }
    assertEquals(new TreeSet<>(Set.of("Doctor", "MongoTree", "NodeIdType",
        "NodeTooLargeException", "TreeField", "TreeOptions", "TreePattern", "TreeSizes",
        "TypedTree")), api);
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
