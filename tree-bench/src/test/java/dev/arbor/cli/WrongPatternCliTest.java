package dev.arbor.cli;

import static dev.arbor.cli.Cli.onServer;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Tree;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code repair}, {@code export}, {@code check} and {@code convert} given a {@code -p} other than
 * the pattern the collection is laid out in: one line naming that pattern, exit code 1, nothing
 * written, for all 20 ordered pairs of different patterns.
 */
class WrongPatternCliTest {

  static List<Arguments> pairs() {
    List<Arguments> pairs = new ArrayList<>();
    for (TreePattern laidOut : TreePattern.values()) {
      for (TreePattern given : TreePattern.values()) {
        if (laidOut != given) {
          pairs.add(Arguments.of(laidOut, given));
        }
      }
    }
    return pairs;
  }

  @ParameterizedTest(name = "{0} given as {1}")
  @MethodSource("pairs")
  void everyCommandRefusesNamingThePatternTheCollectionIsLaidOutIn(TreePattern laidOut,
      TreePattern given) {
    MongoCollection<Document> c = MongoTestServer.get().freshCollection();
    String name = c.getNamespace().getCollectionName();
    laidOut.open(c).load(Tree.parse("Books(Programming(Languages Databases(MongoDB dbm)))"));
    List<Document> before = c.find().into(new ArrayList<>());
    String db = MongoTestServer.get().database().getName();
    String line = "collection " + db + "." + name + " is laid out in " + Patterns.name(laidOut)
        + ", not " + Patterns.name(given) + ": give -p " + Patterns.name(laidOut)
        + " (arbor convert changes the pattern of a tree)";

    for (String command : List.of("repair", "export", "check", "convert")) {
      List<String> args = new ArrayList<>(List.of(command, "-c", name, "-p",
          Patterns.name(given)));
      if (command.equals("convert")) {
        args.addAll(List.of("--to-collection", name + "_converted", "--to-pattern",
            Patterns.name(laidOut)));
      }
      Cli.Result result = Cli.run(onServer(args.toArray(String[]::new)));
      assertEquals(Arbor.EXIT_FAILURE, result.exit(), result::toString);
      assertEquals(List.of("arbor " + command + ": " + line), result.errLines());
      assertEquals("", result.out());
      assertEquals(before, c.find().into(new ArrayList<>()), command + " wrote nothing");
    }
    assertEquals(0, MongoTestServer.get().database().getCollection(name + "_converted")
        .countDocuments(), "convert wrote nothing");
  }
}
