package dev.arbor.cli;

import com.mongodb.client.MongoDatabase;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.CliException;
import java.nio.file.Path;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code arbor convert}: a tree copied from one collection and pattern to another. */
@Command(name = "convert", mixinStandardHelpOptions = true,
    description = {
        "Copy the tree of a collection into another collection in another pattern: streamed in "
            + "preorder from the source and written in batches by the target pattern's loader, in "
            + "bounded memory; a failure undoes what was written.",
        "The target must be empty unless --replace is given; then the tree is loaded beside it "
            + "and renamed over it in one step, which also allows converting a collection in "
            + "place (leave out --to-collection).",
        "The source options are those of the other commands (--uri, --data-dir, --db, "
            + "--collection, --pattern); the target is on the same server and database unless "
            + "--to-uri, --to-data-dir or --to-db say otherwise."})
final class ConvertCommand extends ArborCommand {
  @Mixin
  StoreOptions source;

  @Option(names = "--to-collection", paramLabel = "NAME",
      description = "Target collection. Default: the source collection (needs --replace).")
  String toCollection;

  @Option(names = "--to-pattern", required = true, paramLabel = "PATTERN",
      converter = Patterns.class, completionCandidates = Patterns.class,
      description = "Target pattern: ${COMPLETION-CANDIDATES}.")
  TreePattern toPattern;

  @Option(names = "--to-field", paramLabel = "FIELD=NAME",
      description = "As --field, for the target: the name a structural field of the target"
          + " pattern takes, when not the default. Repeat for several.")
  java.util.Map<String, String> toFields = new java.util.LinkedHashMap<>();

  @Option(names = "--to-id-type", paramLabel = "TYPE", converter = IdTypes.class,
      completionCandidates = IdTypes.class,
      description = "As --id-type, for the target: ${COMPLETION-CANDIDATES}. Default: string.")
  dev.arbor.mongo.NodeIdType toIdType;

  @Option(names = "--to-scope", paramLabel = "FIELD=VALUE",
      description = "As --scope, for the target: the tree of the target collection whose"
          + " documents have FIELD equal to VALUE (an empty one). Default: none, the target"
          + " collection holds one tree.")
  String toScope;

  @Option(names = "--to-uri", paramLabel = "URI",
      description = "Target server. Default: the source server.")
  String toUri;

  @Option(names = "--to-data-dir", paramLabel = "DIR",
      description = "Target embedded server with its data in DIR. Default: the source server.")
  Path toDataDir;

  @Option(names = "--to-db", paramLabel = "NAME",
      description = "Target database. Default: the source database.")
  String toDb;

  @Option(names = "--replace", description = "Replace the target if it holds documents.")
  boolean replace;

  @Option(names = "--no-check", negatable = false,
      description = "Skip the structural check of the source before converting (it reads the "
          + "source once more; convert refuses a source with problems).")
  boolean noCheck;

  @Override
  public Integer call() {
    if (toUri != null && toDataDir != null) {
      throw new ParameterException(spec.commandLine(),
          "--to-uri and --to-data-dir exclude each other: give one");
    }
    StoreOptions.validate(spec, "--to-collection", toCollection, "--to-db", toDb);
    if (source.pattern != null) {
      source.treeOptions(); // a --field the pattern does not keep: refused before connecting
    }
    dev.arbor.mongo.TreeOptions targetOptions =
        StoreOptions.treeOptions(spec, "--to-field", toFields, toPattern);
    if (toScope != null) {
      targetOptions = StoreOptions.withScope(spec, "--to-scope", targetOptions, toScope,
          toIdType, "--to-id-type");
    }
    if (toIdType != null) {
      targetOptions = targetOptions.withIdType(toIdType);
    }
    boolean sameServer = (toUri == null && toDataDir == null)
        || (toUri != null && toUri.equals(source.uri))
        || (toDataDir != null && source.dataDir != null
            && toDataDir.toAbsolutePath().normalize()
                .equals(source.dataDir.toAbsolutePath().normalize()));
    try (Progress progress = progress();
        Connection from = source.connect(progress);
        Connection to = sameServer ? null
            : Connection.open(spec, "--to-uri", toUri, toDataDir)) {
      MongoDatabase sourceDb = from.database(source.db);
      MongoDatabase targetDb = sameServer
          ? (toDb == null ? sourceDb : from.database(toDb))
          : to.database(toDb != null ? toDb : source.db);
      String targetCollection = toCollection != null ? toCollection : source.collection;
      String targetWhere = Loads.where(targetDb, targetCollection, toPattern, toScope);
      boolean inPlace = sameServer && sourceDb.getName().equals(targetDb.getName())
          && source.collection.equals(targetCollection);
      if (inPlace && (source.scope != null || toScope != null)) {
        throw new CliException("the target is the source collection " + sourceDb.getName() + "."
            + source.collection + ", which holds a tree with a scope: give --to-collection (a"
            + " scoped tree is not converted in place)");
      }
      if (inPlace && !replace) {
        throw new CliException("the target is the source collection " + sourceDb.getName() + "."
            + source.collection + ": add --replace to convert it in place, or give"
            + " --to-collection");
      }
      from.requireCollection(sourceDb, source.collection, source.scope);
      source.recognisePattern(sourceDb, progress);
      dev.arbor.mongo.TreeOptions sourceOptions = source.treeOptions();
      String sourceWhere = source.where(sourceDb);
      Loads.checkTarget(sameServer ? from : to, targetDb, targetCollection, toPattern,
          targetOptions, toScope, replace); // fail before reading
      ExportCommand.Source sourceTree = ExportCommand.open(sourceDb, source.collection,
          source.pattern, sourceOptions, source.scope, !noCheck, from, progress);
      Connection target = sameServer ? from : to;
      long n;
      try (Stream<Node> entries = sourceTree.store().entries()) {
        // fails at the end of the stream, so that the load is undone, unless every node of the
        // source formed the tree
        Loads.Counted counted = new Loads.Counted(
            refusingNames(entries.iterator(), targetOptions, sourceWhere), sourceTree.nodes(),
            read -> ExportCommand.notAll(sourceTree, read));
        progress.phase(String.format(java.util.Locale.ROOT, "converting %,d nodes from %s to %s",
            sourceTree.nodes(), sourceWhere, targetWhere), counted::count, sourceTree.nodes());
        n = Loads.write(counted, -1, target, targetDb, targetCollection, toPattern,
            targetOptions, toScope, replace, progress);
      }
      target.save(progress);
      progress.done("converted " + CheckCommand.nodes(n) + " from " + sourceWhere + " to "
          + targetWhere);
      return Arbor.EXIT_OK;
    }
  }

  /**
   * {@code nodes}, refusing the first whose id is not of the target's id type or whose attribute
   * the target pattern keeps for its structure, with a message naming the node, the source and
   * the option concerned (for an attribute, a field of the target under another name).
   */
  private java.util.Iterator<Node> refusingNames(java.util.Iterator<Node> nodes,
      dev.arbor.mongo.TreeOptions targetOptions, String sourceWhere) {
    return new java.util.Iterator<>() {
      @Override
      public boolean hasNext() {
        return nodes.hasNext();
      }

      @Override
      public Node next() {
        Node n = nodes.next();
        if (toIdType != null) {
          java.util.Optional<String> refused = toIdType.refusal(n.id());
          if (refused.isPresent()) {
            throw new CliException("node '" + n.id() + "' of " + sourceWhere + ": "
                + refused.get().replace("the tree stores", "the target stores")
                    .replace("TreeOptions.withIdType", "--to-id-type " + IdTypes.name(toIdType)));
          }
        }
        for (String name : n.attributes().keySet()) {
          java.util.Optional<String> refused = toPattern.nameRefusal(name, true, targetOptions);
          if (refused.isPresent()) {
            throw new CliException("node '" + n.id() + "' of " + sourceWhere + ": attribute '"
                + name + "' is " + refused.get().replace("this pattern", Patterns.name(toPattern))
                + hint(name, targetOptions));
          }
        }
        return n;
      }
    };
  }

  /** How to keep an attribute named as one of the target's fields. */
  private String hint(String name, dev.arbor.mongo.TreeOptions targetOptions) {
    for (var f : dev.arbor.mongo.TreeField.of(toPattern)) {
      if (name.equals(targetOptions.fieldName(f))) {
        return "; keep it by naming the target's field otherwise (--to-field "
            + f.name().toLowerCase(java.util.Locale.ROOT) + "=NAME)";
      }
    }
    return "";
  }
}
