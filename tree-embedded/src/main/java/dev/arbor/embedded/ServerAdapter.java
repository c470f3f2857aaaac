package dev.arbor.embedded;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * What the two backend adapters ({@link MemoryServerAdapter}, {@link H2ServerAdapter}) share about
 * mongo-java-server's internals: the version they are written against, the check that their
 * overrides still override, and the answer to an {@code aggregate} command whose leading {@code
 * $match} an index serves.
 *
 * <p>mongo-java-server has no extension API: the adapters subclass its backends, databases and
 * collections and override protected methods. A method the server renames or re-types in a later
 * version would leave an override that is never called, and the embedded server would then answer
 * wrongly (an index never told of a removal) rather than fail. So each adapter checks, before
 * each backend starts, that every method it declares overrides one of the
 * server's, with the same parameters and return type, and that the server's constants it repeats
 * are still the server's ({@link #check}); a broken assumption is an {@link
 * IllegalStateException} that names it and the version below. {@code ServerAssumptionsTest}
 * checks the same and the behaviour the adapters rely on.
 */
final class ServerAdapter {
  /**
   * The version of mongo-java-server whose internals the adapters rely on; the parent pom pins
   * exactly this one ({@code mongo-java-server.version}).
   */
  static final String PINNED_VERSION = "1.47.0";

  /**
   * The collection in which the server keeps the index descriptions of all the collections of a
   * database ({@code AbstractMongoDatabase.INDEXES_COLLECTION_NAME}). The server reads it by
   * {@code ns} (a collection's full name) to list, create, drop and rename a collection's
   * indexes, so every such command scanned the descriptions of every collection of the database
   * (the 50 collections of a test's scratch database: 700 documents on average); the in-memory
   * backend serves those queries by {@link #namespaceIndex}.
   */
  static final String INDEXES_COLLECTION = "system.indexes";

  /**
   * The name of {@link #namespaceIndex}; the collection drops it before it is dropped (with its
   * database), as the server requires a collection dropped to have no index left.
   */
  static final String NAMESPACE_INDEX = "ns_";

  private ServerAdapter() {}

  /**
   * An index of {@link #INDEXES_COLLECTION} by {@code ns}, which the server's queries of it all
   * name: an equality on {@code ns}, and for a description added if missing, the description
   * itself, which holds its {@code ns}. It is the collection's own (not described in the
   * collection, so never listed), and gives the position of a description the server updates or
   * removes (the collection has no {@code _id} index, which gives it elsewhere).
   */
  static <P> HashIndex<P> namespaceIndex(java.util.function.UnaryOperator<P> positionOf) {
    return new HashIndex<>(NAMESPACE_INDEX,
        List.of(new de.bwaldvogel.mongo.backend.IndexKey("ns", true)), positionOf, false, true);
  }

  /**
   * Runs a {@code dropIndexes} command as mongo-java-server {@value #PINNED_VERSION} runs it but
   * for the other collections of the database: the server's own removes the description of every
   * index of the name dropped in the whole database (its query of the descriptions has no {@code
   * ns}), and for {@code "*"} reads every collection's descriptions to drop from this one; a
   * collection whose description was removed so then listed an index it still had and could no
   * longer be dropped ("Expected [HashIndex[name=a_1]] to be empty"). Later versions of the
   * server add the {@code ns}, as here.
   *
   * @return the answer, or null where the server's own answers the same: another command, no
   *     such collection, an index of a kind the server does not take, or none of that name or key
   *     (the server reports it before it removes a description)
   */
  static @Nullable Document dropIndexes(MongoBackend backend, MongoMessage message) {
    Document command = message.getDocument();
    if (command.isEmpty() || "admin".equals(message.getDatabaseName())) {
      return null;
    }
    String name = command.keySet().iterator().next();
    Object index = command.get("index");
    if (!name.equalsIgnoreCase("dropIndexes") || !(command.get(name) instanceof String of)
        || !(index instanceof String || index instanceof Document)) {
      return null;
    }
    MongoCollection<?> collection;
    MongoCollection<?> descriptions;
    try {
      MongoDatabase database = backend.resolveDatabase(message.getDatabaseName());
      collection = database.resolveCollection(of, false);
      descriptions = database.resolveCollection(INDEXES_COLLECTION, false);
    } catch (RuntimeException e) {
      return null; // the server reports it
    }
    if (collection == null || descriptions == null) {
      return null;
    }
    Document ofCollection = new Document("ns", collection.getFullName());
    if (index instanceof Document key) {
      ofCollection.append("key", key);
    } else if (!index.equals("*")) {
      ofCollection.append("name", index);
    }
    List<Document> dropped = new ArrayList<>();
    for (Document d : descriptions.handleQuery(ofCollection)) {
      if (!new Document("_id", 1).equals(d.get("key"))) {
        dropped.add(d);
      }
    }
    if (dropped.isEmpty() && !index.equals("*")) {
      return null;
    }
    for (Document d : dropped) {
      collection.dropIndex((String) d.get("name"));
      descriptions.deleteDocuments(d, -1);
    }
    Document answer = new Document();
    Utils.markOkay(answer);
    return answer;
  }

  /**
   * Checks that the server still keeps its index descriptions in {@link #INDEXES_COLLECTION}
   * (else the index would sit on a collection the server no longer uses: slower, not wrong).
   */
  static void checkIndexesCollection() {
    Object name;
    try {
      java.lang.reflect.Field f = de.bwaldvogel.mongo.backend.AbstractMongoDatabase.class
          .getDeclaredField("INDEXES_COLLECTION_NAME");
      f.setAccessible(true);
      name = f.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      name = null;
    }
    check(INDEXES_COLLECTION.equals(name), "AbstractMongoDatabase.INDEXES_COLLECTION_NAME, the"
        + " collection of a database's index descriptions, is \"" + INDEXES_COLLECTION + "\"");
  }

  /** The version of mongo-java-server on the class path, from its jar's name, or "unknown". */
  static String foundVersion() {
    try {
      String jar = MongoServer.class.getProtectionDomain().getCodeSource().getLocation()
          .getPath();
      String prefix = "mongo-java-server-core-";
      int at = jar.lastIndexOf(prefix);
      if (at >= 0 && jar.endsWith(".jar")) {
        return jar.substring(at + prefix.length(), jar.length() - ".jar".length());
      }
    } catch (RuntimeException e) {
      // no code source: unknown
    }
    return "unknown";
  }

  /**
   * Throws an {@link IllegalStateException} naming {@code assumption} and the versions unless it
   * {@code holds}.
   */
  static void check(boolean holds, String assumption) {
    if (!holds) {
      throw new IllegalStateException("tree-embedded relies on an internal of mongo-java-server "
          + "that has changed: " + assumption + " (written against mongo-java-server "
          + PINNED_VERSION + ", running with " + foundVersion() + "; use "
          + PINNED_VERSION + " or adapt " + "dev.arbor.embedded's server adapters)");
    }
  }

  /**
   * Checks that every public or protected instance method {@code adapter} declares (besides
   * those of {@code own}, interfaces of this module) overrides a method of one of its server
   * superclasses: same name, parameter types and return type, neither private nor final. (An
   * override of a server method is public or protected; the adapters' own helpers are private or
   * package-private.)
   */
  static void checkOverrides(Class<?> adapter, Class<?>... own) {
    for (Method m : adapter.getDeclaredMethods()) {
      int mod = m.getModifiers();
      if (!(Modifier.isPublic(mod) || Modifier.isProtected(mod)) || Modifier.isStatic(mod)
          || m.isSynthetic() || m.isBridge() || declaredBy(m, own)) {
        continue;
      }
      check(overridden(adapter.getSuperclass(), m) != null, adapter.getSuperclass().getName()
          + " declares " + m.getReturnType().getSimpleName() + " " + m.getName()
          + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName).toList()
          + ", which " + adapter.getSimpleName() + " overrides");
    }
  }

  private static boolean declaredBy(Method m, Class<?>[] interfaces) {
    for (Class<?> i : interfaces) {
      try {
        i.getMethod(m.getName(), m.getParameterTypes());
        return true;
      } catch (NoSuchMethodException e) {
        // not this one
      }
    }
    return false;
  }

  /** The method of {@code type} or its supertypes that {@code m} overrides, or null. */
  static @Nullable Method overridden(@Nullable Class<?> type, Method m) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Method s : c.getDeclaredMethods()) {
        int mod = s.getModifiers();
        if (s.getName().equals(m.getName())
            && Arrays.equals(s.getParameterTypes(), m.getParameterTypes())
            && !Modifier.isPrivate(mod) && !Modifier.isStatic(mod) && !Modifier.isFinal(mod)
            && s.getReturnType().isAssignableFrom(m.getReturnType())) {
          return s;
        }
      }
      for (Class<?> i : c.getInterfaces()) {
        Method s = overridden(i, m);
        if (s != null) {
          return s;
        }
      }
    }
    return null;
  }

  /**
   * Whether {@link #sortByKeys} sorts by {@code orderBy}: a sort on fields (not {@code $natural},
   * which the collections serve by the order they read in), each with a number for its direction.
   */
  static boolean sortsByKeys(@Nullable Document orderBy) {
    if (orderBy == null || orderBy.isEmpty() || orderBy.containsKey("$natural")) {
      return false;
    }
    for (Object direction : orderBy.values()) {
      if (!(direction instanceof Number)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Sorts {@code documents} in place in the order the server's {@code DocumentComparator} gives
   * for {@code orderBy} (a sort {@link #sortsByKeys} accepts), reading each document's value of
   * each sort field once ({@link SortKeys}) instead of at every comparison. Same order, ties
   * included: the server's sorted stream is stable, and so is {@link List#sort}. The server's
   * comparator splits each field's path and reads both documents' values again for every
   * comparison, which made its sort of a tree's documents (a whole tree's read, a subtree's)
   * about a tenth of the CPU of the store tests.
   */
  static void sortByKeys(List<Document> documents, Document orderBy) {
    SortKeys keys = new SortKeys(orderBy);
    record Keyed(Object[] values, Document document) {}
    List<Keyed> keyed = new ArrayList<>(documents.size());
    for (Document d : documents) {
      keyed.add(new Keyed(keys.of(d), d));
    }
    keyed.sort((a, b) -> keys.compare(a.values(), b.values()));
    for (int i = 0; i < keyed.size(); i++) {
      documents.set(i, keyed.get(i).document());
    }
  }

  /**
   * A sort on fields ({@link #sortsByKeys}) as values read once: a document's sort values
   * ({@link #of}) and their order ({@link #compare}), which is the order the server's {@code
   * DocumentComparator} gives the documents (the same value of each field, by {@code
   * Utils.getSubdocumentValueCollectionAware}, compared by the same {@code ValueComparator}).
   */
  static final class SortKeys {
    private final List<String> fields;
    private final ValueComparator[] order;

    SortKeys(Document orderBy) {
      this.fields = new ArrayList<>(orderBy.keySet());
      this.order = new ValueComparator[fields.size()];
      for (int i = 0; i < order.length; i++) {
        order[i] = ((Number) orderBy.get(fields.get(i))).intValue() > 0 ? ValueComparator.asc()
            : ValueComparator.desc();
      }
    }

    /** The values {@code d} is sorted by, one for each sort field. */
    Object[] of(Document d) {
      Object[] values = new Object[order.length];
      for (int i = 0; i < values.length; i++) {
        values[i] = Utils.getSubdocumentValueCollectionAware(d, fields.get(i));
      }
      return values;
    }

    /** Compares the sort values of two documents, as the server compares the documents. */
    int compare(Object[] a, Object[] b) {
      for (int i = 0; i < order.length; i++) {
        int cmp = order[i].compare(a[i], b[i]);
        if (cmp != 0) {
          return cmp;
        }
      }
      return 0;
    }
  }

  /** A collection that can leave out, for a pipeline it feeds, what a filter drops. */
  interface Prefiltered {
    /**
     * The documents of a pipeline whose leading {@code $match} is {@code match}: the candidates
     * an index gives for it, in the collection's natural order, or else every document. The
     * {@code $match} stage still applies the whole filter to each.
     */
    Stream<Document> prefiltered(Document match);
  }

  /**
   * The answer to {@code message} if it is an {@code aggregate} command of a database other than
   * {@code admin} whose leading {@code $match} a {@link Prefiltered} collection may prefilter
   * ({@link IndexedQueries#leadingMatch}); else null, and the server answers it as usual.
   *
   * <p>The server runs a pipeline over all the documents of its collection, even when the first
   * stage is a {@code $match}: {@code AbstractMongoDatabase.commandAggregate} builds it ({@code
   * Aggregation.fromPipeline}), validates it and computes it, and {@code computeResult} reads the
   * collection's {@code queryAllAsStream()}. This does the same, with a view of the collection
   * whose {@code queryAllAsStream()} is {@link Prefiltered#prefiltered}: the pipeline gets what it
   * needs as a parameter, no thread-local side channel. Its {@code $unwind} stages of a top-level
   * field are {@link SlimUnwind}'s, which give the server's documents without copying the
   * unwound array once per element. The server's answer is a single first
   * batch with cursor id 0; so is this one. (The server also clears the connection's last
   * write status for {@code getLastError}, a command the driver no longer sends; this does not.)
   */
  static @Nullable Document aggregate(MongoBackend backend, MongoMessage message, Oplog oplog) {
    Document command = message.getDocument();
    if (command.isEmpty() || "admin".equals(message.getDatabaseName())) {
      return null;
    }
    String name = command.keySet().iterator().next();
    if (!name.equalsIgnoreCase("aggregate")
        || !(command.get(name) instanceof String collectionName)) {
      return null;
    }
    Document match = IndexedQueries.leadingMatch(command);
    if (match == null) {
      return null;
    }
    MongoDatabase database;
    MongoCollection<?> collection;
    try {
      database = backend.resolveDatabase(message.getDatabaseName());
      collection = database.resolveCollection(collectionName, false);
    } catch (RuntimeException e) {
      return null; // the server reports it
    }
    if (!(collection instanceof Prefiltered p)) {
      return null;
    }
    List<Document> pipeline = Aggregation.parse(command.get("pipeline"));
    Aggregation aggregation = Aggregation.fromPipeline(pipeline, backend::resolveDatabase,
        database, view(collection, () -> p.prefiltered(match)), oplog);
    SlimUnwind.replaceIn(aggregation, pipeline);
    aggregation.validate(command);
    List<Document> result = aggregation.computeResult();
    Document cursor = new Document("id", 0L);
    cursor.put("ns", collection.getFullName());
    cursor.put("firstBatch", result);
    Document response = new Document("cursor", cursor);
    Utils.markOkay(response);
    return response;
  }

  /** {@code collection}, except that its {@code queryAllAsStream()} is {@code documents}. */
  static MongoCollection<?> view(MongoCollection<?> collection,
      java.util.function.Supplier<Stream<Document>> documents) {
    return (MongoCollection<?>) Proxy.newProxyInstance(MongoCollection.class.getClassLoader(),
        new Class<?>[] {MongoCollection.class}, (proxy, method, args) -> {
          if (method.getName().equals("queryAllAsStream") && method.getParameterCount() == 0) {
            return documents.get();
          }
          try {
            return method.invoke(collection, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }
}
