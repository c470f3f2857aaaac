package dev.arbor.bench;

import dev.arbor.core.Tree;
import dev.arbor.core.json.TreeJson;
import dev.arbor.core.json.TreeJsonException;
import dev.arbor.mongo.NodeTooLargeException;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.Errors;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The tree of a nested-JSON file (the format of {@code arbor import}) given with {@code --tree}:
 * the one tree of such a run, measured instead of the generated shapes. It is read whole into
 * memory (the benchmark holds its trees, as it does generated ones) and checked before the server
 * starts: every pattern to measure must be able to hold it.
 */
final class TreeFile implements TreeSource {
  private final Path path;
  private final Tree tree;
  private final TreeFacts.Profile profile;

  private TreeFile(Path path, Tree tree) {
    this.path = path;
    this.tree = tree;
    this.profile = new TreeFacts(tree).profile();
  }

  /**
   * Reads and checks the tree of {@code path}.
   *
   * @param patterns the patterns that will load it: an attribute name one of them reserves, or a
   *     node too large for its documents, refuses the file
   * @throws Unusable naming the file and saying why: it cannot be read, is malformed (with the
   *     line and column), holds no node, or does not fit one of {@code patterns}
   */
  static TreeFile read(Path path, List<TreePattern> patterns) {
    Tree tree;
    try (InputStream in = Files.newInputStream(path)) {
      tree = TreeJson.reader(in).refusing((name, attribute) -> refusal(patterns, name, attribute))
          .readAll();
    } catch (TreeJsonException e) {
      throw new Unusable("--tree " + path + ": " + e.getMessage());
    } catch (IOException e) {
      throw new Unusable("cannot read --tree " + path + ": " + Errors.message(e));
    } catch (UncheckedIOException e) {
      throw new Unusable("cannot read --tree " + path + ": " + Errors.message(e.getCause()));
    }
    if (tree.isEmpty()) {
      throw new Unusable("--tree " + path + " holds no node (an empty array): there is nothing"
          + " to measure");
    }
    for (TreePattern p : patterns) {
      Optional<NodeTooLargeException> tooLarge = p.sizeRefusal(tree.entries().iterator());
      if (tooLarge.isPresent()) {
        throw new Unusable("--tree " + path + ": " + tooLarge.get().getMessage()
            .replace(" Nothing was written.", "") + " (--patterns can leave " + Names.of(p)
            + " out)");
      }
    }
    return new TreeFile(path, tree);
  }

  /** Why one of {@code patterns} refuses an attribute name, or null if none does. */
  private static String refusal(List<TreePattern> patterns, String name, boolean attribute) {
    for (TreePattern p : patterns) {
      Optional<String> refused = p.nameRefusal(name, attribute);
      if (refused.isPresent()) {
        String reason = refused.get();
        return reason.contains("this pattern") ? reason.replace("this pattern", Names.of(p))
            + " (--patterns can leave " + Names.of(p) + " out)" : reason;
      }
    }
    return null;
  }

  /** The file as given on the command line. */
  Path path() {
    return path;
  }

  /** The tree's shape in figures. */
  TreeFacts.Profile profile() {
    return profile;
  }

  /** The number of nodes: the only size of the run. */
  int size() {
    return tree.size();
  }

  /** The file's name, without its directory. */
  @Override
  public String label() {
    Path name = path.getFileName();
    return name == null ? path.toString() : name.toString();
  }

  /** {@code the tree of FILE}, the file as given; its shape is {@link #profile()}. */
  @Override
  public String description() {
    return "the tree of " + path;
  }

  /** The file's tree, whatever {@code size} and {@code seed}: a run of it has one size, its own. */
  @Override
  public Tree tree(int size, long seed) {
    return tree;
  }

  /** A file that cannot be measured: one line naming it and saying why. */
  static final class Unusable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Unusable(String message) {
      super(message);
    }
  }
}
