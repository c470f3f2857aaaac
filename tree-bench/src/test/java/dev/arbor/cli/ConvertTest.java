package dev.arbor.cli;

import static dev.arbor.cli.Cli.onServer;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code arbor convert} between every ordered pair of patterns preserves the tree. */
class ConvertTest {

  static List<Arguments> pairs() {
    List<Arguments> pairs = new ArrayList<>();
    for (TreePattern from : TreePattern.values()) {
      for (TreePattern to : TreePattern.values()) {
        pairs.add(Arguments.of(from, to));
      }
    }
    return pairs;
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("pairs")
  void convertPreservesTheTree(TreePattern from, TreePattern to) {
    Tree tree = SampleTrees.mixed(31L * from.ordinal() + to.ordinal(), 120, 25);
    MongoCollection<Document> source = MongoTestServer.get().freshCollection();
    MongoCollection<Document> target = MongoTestServer.get().freshCollection();
    from.open(source).load(tree);

    Cli.Result result = Cli.run(onServer("convert", "-q",
        "-c", source.getNamespace().getCollectionName(), "-p", Patterns.name(from),
        "--to-collection", target.getNamespace().getCollectionName(),
        "--to-pattern", Patterns.name(to)));

    assertEquals(0, result.exit(), result::toString);
    TreeStore converted = to.open(target);
    assertEquals(tree, converted.snapshot());
    assertEquals(List.of(), converted.check());
    assertEquals(tree, from.open(source).snapshot(), "the source is unchanged");
  }
}
