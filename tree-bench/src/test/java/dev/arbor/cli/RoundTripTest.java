package dev.arbor.cli;

import static dev.arbor.cli.Cli.onServer;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoCollection;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import dev.arbor.core.json.TreeJson;
import dev.arbor.mongo.MongoTestServer;
import dev.arbor.mongo.TreePattern;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** export → import → export through the command line gives the same bytes, for every pattern. */
class RoundTripTest {

  @ParameterizedTest
  @EnumSource(TreePattern.class)
  void exportImportExportIsByteIdentical(TreePattern pattern) {
    Tree tree = SampleTrees.mixed(pattern.ordinal(), 150, 40);
    String name = Patterns.name(pattern);
    MongoCollection<Document> first = MongoTestServer.get().freshCollection();
    pattern.open(first).load(tree);

    Cli.Result export1 = Cli.run(onServer("export", "-q", "-p", name,
        "-c", first.getNamespace().getCollectionName()));
    assertEquals(0, export1.exit(), export1::toString);
    assertEquals("", export1.stderr());
    // The export holds the tree exactly: the library's bytes for the tree that was loaded.
    assertArrayEquals(bytes(tree), export1.stdout(), export1::out);

    MongoCollection<Document> second = MongoTestServer.get().freshCollection();
    Cli.Result imported = Cli.runWithStdin(export1.stdout(), onServer("import", "-", "-q",
        "-p", name, "-c", second.getNamespace().getCollectionName()));
    assertEquals(0, imported.exit(), imported::toString);
    TreeStore store = pattern.open(second);
    assertEquals(tree, store.snapshot());
    assertEquals(List.of(), store.check());

    Cli.Result export2 = Cli.run(onServer("export", "-q", "-p", name,
        "-c", second.getNamespace().getCollectionName()));
    assertEquals(0, export2.exit(), export2::toString);
    assertArrayEquals(export1.stdout(), export2.stdout());
  }

  static byte[] bytes(Tree tree) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    TreeJson.write(tree, out);
    return out.toByteArray();
  }
}
