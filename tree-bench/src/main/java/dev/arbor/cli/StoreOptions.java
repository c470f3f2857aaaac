package dev.arbor.cli;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.arbor.mongo.NodeIdType;
import dev.arbor.mongo.TreeField;
import dev.arbor.mongo.TreeOptions;
import dev.arbor.mongo.TreePattern;
import dev.arbor.tools.Text;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.bson.Document;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec.Target;
import picocli.CommandLine.Spec;

/** The options that name one tree: where the server is, the database, collection and pattern. */
final class StoreOptions {
  @Spec(Target.MIXEE)
  CommandSpec mixee;

  @Option(names = "--uri", paramLabel = "URI",
      description = {"MongoDB connection string, for example",
          "  mongodb://localhost:27017/mydb",
          "Default: an embedded server (see --data-dir)."})
  String uri;

  @Option(names = "--data-dir", paramLabel = "DIR",
      description = "Use the embedded server, keeping its data in DIR (created if missing) so it "
          + "survives between runs. Without --uri or --data-dir the embedded server lives in "
          + "memory and keeps nothing after exit.")
  Path dataDir;

  @Option(names = "--db", paramLabel = "NAME",
      description = "Database. Default: the database of the URI, else '"
          + Connection.DEFAULT_DATABASE + "'.")
  String db;

  @Option(names = {"-c", "--collection"}, required = true, paramLabel = "NAME",
      description = "Collection holding the tree, one document per node.")
  String collection;

  @Option(names = {"-p", "--pattern"}, paramLabel = "PATTERN",
      converter = Patterns.class, completionCandidates = Patterns.class,
      description = "How the collection models the tree: ${COMPLETION-CANDIDATES}. Without it,"
          + " a command that reads an existing collection recognises its pattern from its"
          + " documents and says so; import needs it, unless it grafts (--graft, --under).")
  TreePattern pattern; // null until given or recognised

  @Option(names = "--field", paramLabel = "FIELD=NAME",
      description = {"The name a structural field has in the collection, when it is not the"
          + " default: parent, children, ancestors, path, left, right, depth (default"
          + " arborDepth) or rank (default arborRank). Repeat for several, for example",
          "  --field parent=parentId --field rank=position"})
  Map<String, String> fields = new LinkedHashMap<>();

  @Option(names = "--id-type", paramLabel = "TYPE", converter = IdTypes.class,
      completionCandidates = IdTypes.class,
      description = {"The BSON type of the node ids (_id, parent, children, ancestors):"
          + " ${COMPLETION-CANDIDATES}. Default: string. In the JSON files ids stay strings:"
          + " an ObjectId as its 24 lowercase hex digits, a UUID in its lowercase 8-4-4-4-12"
          + " form, a long in decimal."})
  NodeIdType idType;

  @Option(names = "--scope", paramLabel = "FIELD=VALUE",
      description = {"One of several trees kept in the collection (TreeOptions.withScope):"
          + " the documents whose FIELD equals VALUE. VALUE is read as JSON where it is one"
          + " value of JSON (0, true, \"0\", {\"org\": \"a\"}), else as a string, for example",
          "  --scope tenant=acme"})
  String scope;

  @Option(names = "--lease-seconds", hidden = true, paramLabel = "S",
      description = "How long the store's lock outlives a holder that stopped (default: the"
          + " library's): for tests that kill a command and run the next at once.")
  Long leaseSeconds;

  /**
   * The store options the command line gives: the field names of {@code --field}, the id type
   * of {@code --id-type}, the lease of the hidden {@code --lease-seconds}.
   *
   * @throws ParameterException naming the option if a field is unknown, not kept by the
   *     pattern, or its name cannot be used
   */
  TreeOptions treeOptions() {
    TreeOptions options = options(pattern);
    return leaseSeconds == null ? options
        : options.withLease(Duration.ofSeconds(leaseSeconds));
  }

  /**
   * The field names of {@code --field} (checked against {@code forPattern}; null: the names
   * alone), the scope of {@code --scope} and the id type of {@code --id-type}.
   */
  private TreeOptions options(TreePattern forPattern) {
    TreeOptions options = treeOptions(mixee, "--field", fields, forPattern);
    if (scope != null) {
      options = withScope(mixee, "--scope", options, scope, idType, "--id-type");
    }
    return idType == null ? options : options.withIdType(idType);
  }

  /**
   * The collection and pattern for messages ({@link Loads#where}), and the scope if there is
   * one: {@code "db.c (materialized-paths, scope tenant=acme)"}.
   */
  String where(MongoDatabase db) {
    return Loads.where(db, collection, pattern, scope);
  }

  /**
   * {@code options} with the scope of {@code FIELD=VALUE} ({@link #scopeValue}), for a tree whose
   * ids are of {@code idType} (null: strings), given by {@code idOption}.
   *
   * @throws ParameterException naming {@code option} if there is no {@code =}, the library
   *     refuses the field or value, or the id type is not strings (a scoped tree's are)
   */
  static TreeOptions withScope(CommandSpec spec, String option, TreeOptions options,
      String scope, NodeIdType idType, String idOption) {
    if (idType != null && idType != NodeIdType.STRING) {
      throw new ParameterException(spec.commandLine(), option + " and " + idOption + " "
          + IdTypes.name(idType) + " exclude each other: a tree with a scope stores its node"
          + " ids as strings");
    }
    int eq = scope.indexOf('=');
    if (eq <= 0) {
      throw new ParameterException(spec.commandLine(), "invalid " + option + " '"
          + Text.oneLine(scope) + "': give FIELD=VALUE, for example " + option + " tenant=acme");
    }
    try {
      return options.withScope(scope.substring(0, eq), scopeValue(scope.substring(eq + 1)));
    } catch (IllegalArgumentException bad) {
      throw new ParameterException(spec.commandLine(), "invalid " + option + " '"
          + Text.oneLine(scope) + "': " + bad.getMessage());
    }
  }

  /**
   * The value of a scope as the command line gives it: one JSON value ({@code 0} an int, {@code
   * 3000000000} a long, {@code "0"} a string, {@code {"org": "a"}} a document, {@code true}),
   * else the text itself as a string ({@code acme}).
   */
  static Object scopeValue(String text) {
    try {
      Document d = Document.parse("{\"v\": " + text + "}");
      if (d.size() == 1 && d.containsKey("v")) {
        return d.get("v");
      }
    } catch (RuntimeException notOneJsonValue) {
      // a plain string
    }
    return text;
  }

  /**
   * Settles the pattern of a collection that exists: {@code --pattern} if given, else the
   * pattern its node documents are laid out in ({@link TreePattern#recognise}), said in a note on
   * stderr; without {@code --id-type} too, a tree whose ids are all of one other type is
   * recognised with that type. An empty collection, or one whose documents fit no one pattern,
   * keeps asking for {@code --pattern}.
   *
   * @throws ParameterException without {@code --pattern}, if the pattern cannot be recognised
   */
  void recognisePattern(MongoDatabase database, Progress progress) {
    if (pattern != null) {
      return;
    }
    TreeOptions options = options(null);
    MongoCollection<Document> c = database.getCollection(collection);
    Optional<TreePattern> seen = TreePattern.recognise(c, options);
    String where = database.getName() + "." + collection;
    String ids = "";
    if (seen.isEmpty() && idType == null && scope == null) { // ids of one other type
      Map<NodeIdType, TreePattern> others = new LinkedHashMap<>();
      for (NodeIdType type : NodeIdType.values()) {
        if (type != NodeIdType.STRING) {
          TreePattern.recognise(c, options.withIdType(type)).ifPresent(p -> others.put(type, p));
        }
      }
      if (others.size() == 1) {
        idType = others.keySet().iterator().next();
        seen = Optional.of(others.get(idType));
        ids = ", its node ids " + IdTypes.name(idType) + " (--id-type " + IdTypes.name(idType)
            + ")";
      }
    }
    if (seen.isEmpty()) {
      throw new ParameterException(mixee.commandLine(), (scope != null
          ? "the tree of scope " + scope + " in collection " + where + " holds no nodes, or"
              + " none laid out in one pattern"
          : Connection.hasNodes(c)
          ? "the node documents of collection " + where + " fit no one pattern (they have no"
              + " pattern's structural fields, or those of two patterns equally)"
          : "collection " + where + " holds no nodes")
          + ", so its pattern cannot be recognised: give --pattern (-p): "
          + String.join(", ", Patterns.names()));
    }
    pattern = seen.get();
    progress.note("no --pattern: " + (scope == null ? "collection " + where
        : "the tree of scope " + scope + " in collection " + where) + " is laid out in "
        + Patterns.name(pattern) + ids);
  }

  /**
   * The pattern given or recognised.
   *
   * @throws ParameterException if there is none yet: {@code what} says what it is needed for
   */
  TreePattern pattern(String what) {
    if (pattern == null) {
      throw new ParameterException(mixee.commandLine(), "give --pattern (-p), " + what + ": "
          + String.join(", ", Patterns.names()));
    }
    return pattern;
  }

  /**
   * As {@link #treeOptions()}, for the options of another store (convert's target); a null
   * {@code pattern} checks the names alone, not whether the pattern keeps their fields.
   */
  static TreeOptions treeOptions(CommandSpec spec, String option, Map<String, String> fields,
      TreePattern pattern) {
    TreeOptions options = TreeOptions.defaults();
    for (Map.Entry<String, String> e : fields.entrySet()) {
      TreeField field;
      try {
        field = TreeField.valueOf(e.getKey().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException unknown) {
        throw new ParameterException(spec.commandLine(), "invalid " + option + " '"
            + Text.oneLine(e.getKey()) + "': not a structural field (parent, children,"
            + " ancestors, path, left, right, depth, rank)");
      }
      if (pattern != null && !field.usedBy(pattern)) {
        throw new ParameterException(spec.commandLine(), "invalid " + option + " '"
            + Text.oneLine(e.getKey()) + "': " + Patterns.name(pattern) + " keeps no "
            + e.getKey().toLowerCase(Locale.ROOT) + " field");
      }
      try {
        options = options.withFieldName(field, e.getValue());
        if (pattern != null) {
          pattern.reservedNames(options); // checks the names against the pattern
        }
      } catch (IllegalArgumentException bad) {
        throw new ParameterException(spec.commandLine(), "invalid " + option + " '"
            + Text.oneLine(e.getKey() + "=" + e.getValue()) + "': " + bad.getMessage());
      }
    }
    return options;
  }

  /** Connects as the options say, with a note on stderr when the data will not be kept. */
  Connection connect(Progress progress) {
    if (uri != null && dataDir != null) {
      throw new ParameterException(mixee.commandLine(),
          "--uri and --data-dir exclude each other: give one");
    }
    validate(mixee, "--collection", collection, "--db", db);
    Connection c = Connection.open(mixee, "--uri", uri, dataDir);
    if (c.temporary()) {
      progress.note("no --uri or --data-dir: using a temporary in-memory server, which starts"
          + " empty and keeps nothing after exit");
    }
    return c;
  }

  /**
   * Checks a collection name and an optional database name before anything connects, so that a
   * name MongoDB cannot take is a bad command line (exit code 2) named in words.
   *
   * @throws ParameterException naming the option
   */
  static void validate(CommandSpec spec, String collectionOption, String collection,
      String dbOption, String db) {
    String problem = collection == null ? null : MongoNames.collectionProblem(collection);
    if (problem != null) {
      throw new ParameterException(spec.commandLine(), "invalid " + collectionOption + " '"
          + Text.oneLine(collection) + "': " + problem);
    }
    problem = db == null ? null : MongoNames.databaseProblem(db);
    if (problem != null) {
      throw new ParameterException(spec.commandLine(), "invalid " + dbOption + " '"
          + Text.oneLine(db) + "': " + problem);
    }
  }
}
