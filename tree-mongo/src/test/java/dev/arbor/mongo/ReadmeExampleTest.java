package dev.arbor.mongo;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first program, taken from the README as it stands, compiled and run as a new user
 * would: it must compile against the modules alone, run to the end, and print what its comments
 * say it prints.
 */
class ReadmeExampleTest {
  private static final String CLASS = "FirstTree";

  @TempDir
  Path dir;

  @Test
  void theReadmesFirstProgramRunsAsWrittenAndPrintsWhatItSays() throws Exception {
    String source = program(Files.readString(Path.of("..", "README.md")));
    Path file = dir.resolve(CLASS + ".java");
    Files.writeString(file, source);

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "tests run on a JDK");
    StringWriter diagnostics = new StringWriter();
    String classpath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    boolean compiled = javac.getTask(diagnostics, null, null, List.of("-d", dir.toString(),
        "-classpath", classpath, "-Xlint:all", "-Werror"), null,
        javac.getStandardFileManager(null, null, UTF_8).getJavaFileObjects(file)).call();
    assertTrue(compiled, "the README's program does not compile:\n" + diagnostics);

    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = System.out;
    try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
        getClass().getClassLoader())) {
      Method main = loader.loadClass(CLASS).getMethod("main", String[].class);
      System.setOut(new PrintStream(printed, true, UTF_8));
      main.invoke(null, (Object) new String[0]);
    } finally {
      System.setOut(out);
    }
    assertEquals(expectedOutput(source), printed.toString(UTF_8).lines().toList());
  }

  /** The Java block of the README that declares the first program. */
  static String program(String readme) {
    Matcher block = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(readme);
    while (block.find()) {
      if (block.group(1).contains("public class " + CLASS + " ")) {
        return block.group(1);
      }
    }
    throw new AssertionError("README.md shows no 'public class " + CLASS + "' in a java block");
  }

  /** What the program's comments say it prints: {@code println(...); // [a, b]} lines. */
  static List<String> expectedOutput(String source) throws IOException {
    List<String> expected = new ArrayList<>();
    Matcher m = Pattern.compile("System\\.out\\.println\\(.*\\);\\s*// (\\[[^\\]]*\\])")
        .matcher(source);
    while (m.find()) {
      expected.add(m.group(1));
    }
    assertTrue(expected.size() >= 3, "the program says what it prints: " + expected);
    return expected;
  }
}
