package dev.arbor.embedded;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A non-unique secondary index of the embedded server, kept in memory: per key field, a hash map
 * from each string, ObjectId, number and UUID the documents hold there (the value itself, or the
 * elements of an array value, at any depth of nested arrays) to the positions of those documents. It answers
 * the equalities {@link Equalities} reads from a query on a leading prefix of its keys (for
 * {@code {tree: 1, parent: 1, rank: 1}}: {@code tree}, or {@code tree} and {@code parent}, ...)
 * with a superset of the documents that match; the collection ({@link IndexedQueries}) applies
 * the whole query to each, as to the documents of a scan.
 *
 * <p>No false negative: every document is indexed under every string, ObjectId, number and UUID
 * it holds in a key field (a number under its normalized value, {@link Equalities#key}), and a
 * document matches {@code {f: v}} (v of those types) in the server's matcher only if its value of
 * {@code f} equals {@code v} once both are normalized, or is an array holding such a value (or,
 * for {@code $in}, an array of arrays holding it). Values of other types are not indexed, and
 * queries on them are not served.
 *
 * <p>Positions are learned from the collection: {@link #add}, {@link #updateInPlace} (with the
 * position), and {@link #forget} from the collection's removal of a document. {@link
 * #remove(Document)}, which has no position, returns null; the index is therefore created sparse
 * (as the server's {@code EmptyIndex}), which makes the collection accept that null. A position
 * added again (the in-memory backend reuses freed positions) first drops its old entries.
 *
 * <p>Thread-safe: every method holds the index's lock, as the server's unique indexes do;
 * writes also run under the collection's lock.
 */
final class HashIndex<P> extends Index<P> {
  private final List<String> fields;
  /** Per key field: value to a position, or to a {@link Positions} of several. */
  private final List<Map<Object, Object>> maps;
  /**
   * Per position, per key field: null, one value, or an Object[] of values; kept only for an
   * index of several fields, whose candidates are narrowed by the other fields' values. An index
   * of one field (an array of ancestors': every node under each of its ancestors) learns a removed
   * document's values from the document instead.
   */
  private final @Nullable Map<P, Object[]> entries;
  /** The number of documents indexed under at least one value. */
  private long count;
  private final UnaryOperator<P> positionOf;
  private final AtomicLong served = new AtomicLong();
  /**
   * Per key field, the strings held there, in order, each with the number of documents that hold
   * it (null for a field that is no plain name), or null: an index that serves no ranges ({@link
   * #rangeCost}). Keys only, the very strings of the documents; their positions are those of
   * {@code maps}.
   */
  private final @Nullable List<java.util.@Nullable TreeMap<String, int[]>> sorted;
  /**
   * Per key field of {@link #sorted}, the numbers held there, in order as doubles (-0.0 as 0.0,
   * NaN last), each with the keys of {@code maps} it stands for (a double, or the longs a double
   * cannot hold) and the number of documents that hold each; null where {@code sorted} is.
   */
  private final @Nullable List<java.util.@Nullable TreeMap<Double, Map<Object, int[]>>> numbers;
  /**
   * Per key field, whether a document ever held a number there of a type the index does not
   * key ({@link Equalities#exact}; the server decodes ints, longs, doubles and decimals, all
   * keyed): the matcher compares it with numeric bounds, so the field's numeric ranges are no
   * longer served (sticky).
   */
  private final boolean[] unkeyedNumbers;
  /** Per key field, whether a document ever held an array there (sticky, as MongoDB's). */
  private final boolean[] multikey;
  /**
   * The documents by position, for the index of a collection without an {@code _id} index (the
   * server's index descriptions, {@link ServerAdapter#namespaceIndex}): the server then asks its
   * indexes for the position of a document it updates or removes, which no other index gives;
   * else null.
   */
  private final @Nullable Map<P, Document> held;

  /**
   * An empty index; the collection fills it from its documents when added to it.
   *
   * @param positionOf maps a position as the collection hands it to the index to the one its
   *     {@code getDocument} takes (H2: a null _id is stored under {@code Missing})
   */
  HashIndex(String name, List<IndexKey> keys, UnaryOperator<P> positionOf) {
    this(name, keys, positionOf, false);
  }

  /**
   * @param ordered whether the strings of the first key field are also kept in order, for the
   *     ranges of {@link #rangeCandidates}; only where the documents live on the heap already
   *     (the in-memory backend), since the index keeps the documents' strings themselves
   */
  HashIndex(String name, List<IndexKey> keys, UnaryOperator<P> positionOf, boolean ordered) {
    this(name, keys, positionOf, ordered, false);
  }

  /**
   * @param holdsDocuments whether the index gives the position of a document ({@link
   *     #getPosition}, {@link #remove(Document)}), for a collection without an {@code _id} index
   */
  HashIndex(String name, List<IndexKey> keys, UnaryOperator<P> positionOf, boolean ordered,
      boolean holdsDocuments) {
    super(name, keys, true); // sparse: see the class documentation
    this.held = holdsDocuments ? new HashMap<>() : null;
    this.fields = keys.stream().map(IndexKey::getKey).toList();
    this.entries = fields.size() > 1 ? new HashMap<>() : null;
    this.maps = new ArrayList<>();
    for (int i = 0; i < fields.size(); i++) {
      maps.add(new HashMap<>());
    }
    this.positionOf = positionOf;
    this.multikey = new boolean[fields.size()];
    this.unkeyedNumbers = new boolean[fields.size()];
    if (ordered) {
      this.sorted = new ArrayList<>();
      this.numbers = new ArrayList<>();
      for (String field : fields) {
        sorted.add(plain(field) ? new java.util.TreeMap<>() : null);
        numbers.add(plain(field) ? new java.util.TreeMap<>() : null);
      }
    } else {
      this.sorted = null;
      this.numbers = null;
    }
  }

  /**
   * The key field whose range this index serves for {@code eq} and {@code ranges}, as MongoDB's
   * index bounds do: the first field with a range in {@code ranges} after a prefix of fields that
   * each have an equality in {@code eq} ({@code {tree: 0, path: {$gte: ",a,", $lt: ",a-"}}} on
   * {@code {tree: 1, path: 1}}); -1 if none, or if that field held an array and the range has more
   * than one bound (two bounds may then hold for two elements).
   */
  private int rangeField(Map<String, Set<Object>> eq, Map<String, Ranges.Range> ranges,
      Map<String, Ranges.Span> spans) {
    if (sorted == null) {
      return -1;
    }
    for (int i = 0; i < fields.size() && sorted.get(i) != null; i++) {
      Ranges.Range r = ranges.get(fields.get(i));
      if (r != null) {
        return multikey[i] && r.bounds() > 1 ? -1 : i;
      }
      Ranges.Span n = unkeyedNumbers[i] ? null : spans.get(fields.get(i));
      if (n != null) {
        return multikey[i] && n.bounds() > 1 ? -1 : i;
      }
      if (!eq.containsKey(fields.get(i))) {
        return -1;
      }
    }
    return -1;
  }

  /**
   * An upper bound of the number of candidates this index gives for the string ranges {@code
   * ranges} or the numeric ones {@code spans} ({@link Ranges}) after the equalities {@code eq} of
   * the fields before it, or -1 if it cannot serve them: it keeps no order, or no field has a
   * range after a prefix of equalities ({@link #rangeField}).
   */
  synchronized long rangeCost(Map<String, Set<Object>> eq, Map<String, Ranges.Range> ranges,
      Map<String, Ranges.Span> spans) {
    int field = rangeField(eq, ranges, spans);
    if (field < 0) {
      return -1;
    }
    long[] n = new long[1];
    forEachKeyIn(field, ranges, spans, key -> n[0] += size(field, Set.of(key)));
    return n[0];
  }

  /**
   * The positions of the documents holding a string of the range of the field {@link
   * #rangeField} names and, in each field before it, one of the values of its equality.
   */
  @SuppressWarnings("unchecked")
  synchronized List<P> rangeCandidates(Map<String, Set<Object>> eq,
      Map<String, Ranges.Range> ranges, Map<String, Ranges.Span> spans) {
    int field = rangeField(eq, ranges, spans);
    if (field < 0) {
      throw new IllegalArgumentException("index " + getName() + " cannot serve " + ranges);
    }
    Map<String, Set<Object>> compacted = field == 0 ? eq : compacted(eq);
    List<P> out = new ArrayList<>();
    forEachKeyIn(field, ranges, spans, key -> {
      Object p = maps.get(field).get(key);
      if (p instanceof Positions<?> s) {
        for (P one : (Positions<P>) s) {
          if (field == 0 || holdsEach(one, field, -1, compacted)) {
            out.add(one);
          }
        }
      } else if (p != null && (field == 0 || holdsEach((P) p, field, -1, compacted))) {
        out.add((P) p);
      }
    });
    return out;
  }

  /**
   * Whether the document at {@code p} holds, in each of the first {@code n} key fields but {@code
   * skip} (-1: none), one of that field's values in {@code eq} (compacted); only for an index of
   * several fields, which keeps its entries.
   */
  private boolean holdsEach(P p, int n, int skip, Map<String, Set<Object>> eq) {
    Object[] entry = entries.get(p);
    if (entry == null) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      if (i != skip && !holdsOne(entry[i], eq.get(fields.get(i)))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Gives {@code action} each key of {@code maps} in the range of {@code field}, in order and
   * without copying them: its strings' ({@link #compact}) if {@code ranges} has one for it, else
   * its numbers' in {@code spans}, and NaN's always (the index does not assume how the matcher
   * orders it).
   */
  private void forEachKeyIn(int field, Map<String, Ranges.Range> ranges,
      Map<String, Ranges.Span> spans, java.util.function.Consumer<Object> action) {
    Ranges.Range r = ranges.get(fields.get(field));
    if (r != null) {
      for (String key : keysIn(field, r)) {
        action.accept(compact(key));
      }
      return;
    }
    Ranges.Span n = spans.get(fields.get(field));
    java.util.TreeMap<Double, Map<Object, int[]>> m = numbers.get(field);
    if (!n.empty()) {
      for (Map<Object, int[]> keys : m.subMap(n.low(), true, n.high(), true).values()) {
        keys.keySet().forEach(action);
      }
    }
    Map<Object, int[]> nan = m.get(Double.NaN); // ordered after +Infinity: never in subMap
    if (nan != null) {
      nan.keySet().forEach(action);
    }
  }

  private java.util.Set<String> keysIn(int field, Ranges.Range r) {
    if (r.empty()) {
      return Set.of();
    }
    java.util.NavigableMap<String, int[]> m = sorted.get(field);
    if (r.low() != null) {
      m = m.tailMap(r.low(), r.lowIncluded());
    }
    if (r.high() != null) {
      m = m.headMap(r.high(), r.highIncluded());
    }
    return m.keySet();
  }

  /** Counts the strings of each ordered key field of {@code document} in order. */
  private void order(Document document, int delta) {
    for (int i = 0; i < fields.size(); i++) {
      if (sorted.get(i) != null) {
        order(i, document.get(fields.get(i)), delta, 0);
      }
    }
  }

  /**
   * Counts the strings and numbers of {@code value} (itself, or the elements of an array) in
   * order.
   */
  private void order(int field, @Nullable Object value, int delta, int depth) {
    java.util.TreeMap<String, int[]> keys = sorted.get(field);
    if (value instanceof String s) {
      int[] n = keys.computeIfAbsent(s, k -> new int[1]);
      n[0] += delta;
      if (n[0] <= 0) {
        keys.remove(s);
      }
    } else if (value instanceof Number number) {
      if (!(Equalities.exact(number))) {
        unkeyedNumbers[field] = true;
        return;
      }
      double d = number.doubleValue();
      Double at = d == 0.0 ? 0.0 : d; // -0.0 is 0.0; NaN is one key
      Map<Object, int[]> held = numbers.get(field).computeIfAbsent(at, k -> new HashMap<>(2));
      Object key = compact(Equalities.key(number));
      int[] n = held.computeIfAbsent(key, k -> new int[1]);
      n[0] += delta;
      if (n[0] <= 0) {
        held.remove(key);
        if (held.isEmpty()) {
          numbers.get(field).remove(at);
        }
      }
    } else if (value instanceof Collection<?> c && depth < 200) {
      if (depth == 0 && delta > 0) {
        multikey[field] = true;
      }
      for (Object e : c) {
        order(field, e, delta, depth + 1);
      }
    }
  }

  /** The number of queries whose candidates this index gave. */
  long served() {
    return served.get();
  }

  void countServed() {
    served.incrementAndGet();
  }

  /** How many leading key fields have a condition in {@code eq}; 0: the index cannot serve. */
  private int prefix(Map<String, Set<Object>> eq) {
    int n = 0;
    while (n < fields.size() && plain(fields.get(n)) && eq.containsKey(fields.get(n))) {
      n++;
    }
    return n;
  }

  private static boolean plain(String field) {
    return field.indexOf('.') < 0 && !field.startsWith("$");
  }

  /**
   * An upper bound of the number of candidates this index gives for {@code eq}, or -1 if it
   * cannot serve it.
   */
  synchronized long cost(Map<String, Set<Object>> eq) {
    int n = prefix(eq);
    if (n == 0) {
      return -1;
    }
    eq = compacted(eq);
    long best = Long.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      best = Math.min(best, size(i, eq.get(fields.get(i))));
    }
    return best;
  }

  private long size(int field, Set<Object> values) {
    long size = 0;
    for (Object v : values) {
      Object p = maps.get(field).get(v);
      size += p == null ? 0 : p instanceof Positions<?> s ? s.size() : 1;
    }
    return size;
  }

  /**
   * The positions of the documents that hold, in each leading key field with a condition, one of
   * its values: a superset of those matching the query; in no particular order.
   *
   * @throws IllegalArgumentException if the index cannot serve {@code eq} (see {@link #cost})
   */
  @SuppressWarnings("unchecked")
  synchronized List<P> candidates(Map<String, Set<Object>> eq) {
    int n = prefix(eq);
    if (n == 0) {
      throw new IllegalArgumentException("index " + getName() + " cannot serve " + eq);
    }
    eq = compacted(eq);
    int narrowest = 0;
    long least = Long.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      long size = size(i, eq.get(fields.get(i)));
      if (size < least) {
        least = size;
        narrowest = i;
      }
    }
    Set<P> union = new LinkedHashSet<>();
    for (Object v : eq.get(fields.get(narrowest))) {
      Object p = maps.get(narrowest).get(v);
      if (p instanceof Positions<?> s) {
        union.addAll((Positions<P>) s);
      } else if (p != null) {
        union.add((P) p);
      }
    }
    if (entries == null) {
      return new ArrayList<>(union);
    }
    List<P> out = new ArrayList<>(union.size());
    for (P p : union) {
      if (holdsEach(p, n, narrowest, eq)) {
        out.add(p);
      }
    }
    return out;
  }

  private static boolean holdsOne(@Nullable Object values, Set<Object> wanted) {
    if (values instanceof Object[] a) {
      for (Object v : a) {
        if (wanted.contains(v)) {
          return true;
        }
      }
      return false;
    }
    return values != null && wanted.contains(values);
  }

  @Override
  public synchronized boolean canHandle(Document query) {
    Map<String, Set<Object>> eq = Equalities.of(query);
    return eq != null && prefix(eq) > 0;
  }

  @Override
  public synchronized Iterable<P> getPositions(Document query) {
    Map<String, Set<Object>> eq = Equalities.of(query);
    if (eq == null) {
      throw new IllegalArgumentException("index " + getName() + " cannot serve " + query);
    }
    return candidates(eq);
  }

  @Override
  public synchronized @Nullable P getPosition(Document document) {
    if (held == null) {
      return null; // the _id index gives it
    }
    Object first = document.get(fields.get(0));
    for (Map.Entry<P, Document> e : held.entrySet()) {
      if (java.util.Objects.equals(e.getValue().get(fields.get(0)), first)
          && e.getValue().equals(document)) {
        return e.getKey();
      }
    }
    return null;
  }

  @Override
  public void checkAdd(Document document, MongoCollection<P> collection) {
    // never refuses a document
  }

  @Override
  public synchronized void add(Document document, P position, MongoCollection<P> collection) {
    P p = positionOf.apply(position);
    if (held != null) {
      held.put(p, document);
    }
    if (entries != null) {
      unindex(p);
    }
    if (sorted != null) {
      order(document, 1);
    }
    Object[] entry = new Object[fields.size()];
    boolean indexed = false;
    for (int i = 0; i < fields.size(); i++) {
      String field = fields.get(i);
      if (!plain(field)) {
        continue;
      }
      Set<Object> values = new LinkedHashSet<>();
      collect(document.get(field), values, 0);
      if (values.isEmpty()) {
        continue;
      }
      Object[] held = new Object[values.size()];
      int k = 0;
      for (Object v : values) {
        Object old = maps.get(i).get(v);
        if (old == null) {
          maps.get(i).put(v, p);
        } else if (old instanceof Positions<?>) {
          @SuppressWarnings("unchecked")
          Positions<P> s = (Positions<P>) old;
          s.add(p);
          v = s.key; // one copy of the value for all the documents that hold it
        } else {
          Positions<Object> s = new Positions<>(v);
          s.add(old);
          s.add(p);
          maps.get(i).remove(v); // the map keeps this copy of the value as its key
          maps.get(i).put(v, s);
        }
        held[k++] = v;
      }
      entry[i] = held.length == 1 ? held[0] : held;
      indexed = true;
    }
    if (indexed) {
      count++;
      if (entries != null) {
        entries.put(p, entry);
      }
    }
  }

  /**
   * Collects the exact values of a field value: itself, or its elements through nested arrays;
   * and {@link Equalities#NULL} for a null or missing value or an array (which may hold a null).
   */
  private static void collect(@Nullable Object value, Set<Object> out, int depth) {
    if (depth == 0 && (value == null || value instanceof Collection<?>)) {
      out.add(Equalities.NULL);
    }
    if (Equalities.exact(value)) {
      out.add(compact(Equalities.key(value)));
    } else if (value instanceof Collection<?> c && depth < 200) {
      for (Object e : c) {
        collect(e, out, depth + 1);
      }
    }
  }

  /**
   * Whether a document whose value of a key field is {@code value} would be a candidate of that
   * field for the equality {@code wanted} (its values {@linkplain #compact compacted}): the test
   * of {@link #add} and {@link #candidates}, made on one document without an index. So a scan
   * may skip a document that fails it: a document the query matches holds one of the values
   * ({@link Equalities}).
   */
  static boolean holdsAnyOf(@Nullable Object value, Set<Object> wanted) {
    if (Equalities.exact(value)) {
      return wanted.contains(compact(Equalities.key(value)));
    }
    if (value == null) {
      return wanted.contains(Equalities.NULL);
    }
    Set<Object> values = new LinkedHashSet<>();
    collect(value, values, 0);
    for (Object v : values) {
      if (wanted.contains(v)) {
        return true;
      }
    }
    return false;
  }

  /** The values of {@code eq} for one field, {@linkplain #compact compacted}. */
  static Set<Object> compacted(Set<Object> values) {
    Set<Object> out = new HashSet<>();
    for (Object v : values) {
      out.add(compact(v));
    }
    return out;
  }

  /**
   * Strings longer than {@value #LONGEST_KEPT} characters are indexed under a 64-bit digest
   * instead of themselves: a materialized path, an id made of a file path, held once more for
   * every document, would otherwise cost the heap more than the documents do (the server shares
   * the heap with the client in-process). A digest may collide; the collection applies the whole
   * query to every candidate, so a collision costs a document examined, never a wrong answer.
   */
  static final int LONGEST_KEPT = 24;

  /** What the index holds for an exact value: itself, or the digest of a long string. */
  static Object compact(Object value) {
    if (value instanceof String s && s.length() > LONGEST_KEPT) {
      long h = 0xcbf29ce484222325L; // FNV-1a over the UTF-16 units, mixed with String.hashCode
      for (int i = 0; i < s.length(); i++) {
        h ^= s.charAt(i);
        h *= 0x100000001b3L;
      }
      return new Digest(h ^ ((long) s.hashCode() << 32), s.length());
    }
    return value;
  }

  /** The digest of a long string. */
  record Digest(long hash, int length) {}

  private static Map<String, Set<Object>> compacted(Map<String, Set<Object>> eq) {
    Map<String, Set<Object>> out = new HashMap<>();
    for (Map.Entry<String, Set<Object>> e : eq.entrySet()) {
      out.put(e.getKey(), compacted(e.getValue()));
    }
    return out;
  }

  /**
   * Drops the entries of {@code position}, if any: the collection removed {@code document}, which
   * it held there (as indexed: every change of it came through {@link #updateInPlace}); the
   * document may be null for an index that {@linkplain #forgetsByValues keeps its entries}.
   */
  synchronized void forget(P position, @Nullable Document document) {
    P p = positionOf.apply(position);
    if (held != null) {
      held.remove(p);
    }
    if (sorted != null && document != null) {
      order(document, -1);
    }
    if (entries != null) {
      unindex(p);
      return;
    }
    if (document == null) {
      return;
    }
    Set<Object> values = new LinkedHashSet<>();
    collect(document.get(fields.get(0)), values, 0);
    if (!plain(fields.get(0)) || values.isEmpty()) {
      return;
    }
    boolean held = false;
    for (Object v : values) {
      held |= unindex(0, v, p);
    }
    if (held) {
      count--;
    }
  }

  private void unindex(P p) {
    Object[] entry = entries.remove(p);
    if (entry == null) {
      return;
    }
    count--;
    for (int i = 0; i < entry.length; i++) {
      if (entry[i] instanceof Object[] values) {
        for (Object v : values) {
          unindex(i, v, p);
        }
      } else if (entry[i] != null) {
        unindex(i, entry[i], p);
      }
    }
  }

  /**
   * Whether {@link #forget} needs the removed document: it keeps no entries to read, or it keeps
   * the strings of its key fields in order.
   */
  boolean forgetsByValues() {
    return entries == null || sorted != null;
  }

  /** Drops {@code p} from the positions of {@code value}; whether it was there. */
  private boolean unindex(int field, Object value, P p) {
    Map<Object, Object> map = maps.get(field);
    Object old = map.get(value);
    if (old instanceof Positions<?> s) {
      boolean held = s.remove(p);
      if (s.size() == 1) {
        map.put(value, s.iterator().next());
      } else if (s.isEmpty()) {
        map.remove(value);
      }
      return held;
    } else if (old != null && old.equals(p)) {
      map.remove(value);
      return true;
    }
    return false;
  }

  @Override
  public synchronized @Nullable P remove(Document document) {
    if (held == null) {
      return null; // see forget: the collection hands over the position it removes
    }
    P p = getPosition(document);
    if (p != null) {
      forget(p, document);
    }
    return p;
  }

  @Override
  public synchronized long getCount() {
    return count;
  }

  @Override
  public synchronized boolean isEmpty() {
    return count == 0;
  }

  @Override
  public long getDataSize() {
    return getCount();
  }

  @Override
  public void checkUpdate(Document oldDocument, Document newDocument,
      MongoCollection<P> collection) {
    // never refuses a document
  }

  @Override
  public synchronized void updateInPlace(Document oldDocument, Document newDocument, P position,
      MongoCollection<P> collection) {
    if (held == null && sameKeys(oldDocument, newDocument)) {
      return; // most updates write fields no index holds (a lock's, a mark's, a node's data)
    }
    forget(position, oldDocument);
    add(newDocument, position, collection);
  }

  /**
   * Whether the two documents hold the same values in every field this index keys: the entries
   * of one are then those of the other ({@link #add} keys a plain field by its value alone, and
   * skips the others).
   */
  private boolean sameKeys(Document a, Document b) {
    for (String field : fields) {
      if (plain(field) && !java.util.Objects.equals(a.get(field), b.get(field))) {
        return false;
      }
    }
    return true;
  }

  @Override
  public synchronized void drop() {
    if (held != null) {
      held.clear();
    }
    if (entries != null) {
      entries.clear();
    }
    maps.forEach(Map::clear);
    if (sorted != null) {
      sorted.forEach(m -> {
        if (m != null) {
          m.clear();
        }
      });
      numbers.forEach(m -> {
        if (m != null) {
          m.clear();
        }
      });
    }
    java.util.Arrays.fill(multikey, false);
    java.util.Arrays.fill(unkeyedNumbers, false);
    count = 0;
  }

  /**
   * The positions of a value held by several documents (never a position itself), and the value
   * itself, which the entries of later documents share. An open-addressing hash set in one array:
   * about 7 bytes a position where a {@link HashSet} takes about 40 (an array of ancestors indexes
   * every document under each of its ancestors: tens of millions of positions at a few hundred
   * thousand nodes).
   */
  private static final class Positions<P> extends java.util.AbstractCollection<P> {
    private static final Object REMOVED = new Object();

    final Object key;
    private @Nullable Object[] table = new Object[8];
    private int size;
    private int used; // size plus the removed slots

    Positions(Object key) {
      this.key = key;
    }

    /** The slot of {@code o} if held, else {@code -1 - } the free slot where to put it. */
    private static int slot(Object o, @Nullable Object[] t) {
      int mask = t.length - 1;
      int i = (o.hashCode() * 0x9E3779B9) >>> 1 & mask;
      while (t[i] != null) {
        if (t[i] != REMOVED && t[i].equals(o)) {
          return i;
        }
        i = (i + 1) & mask;
      }
      return -1 - i;
    }

    @Override
    public boolean add(P p) {
      int i = slot(p, table);
      if (i >= 0) {
        return false;
      }
      table[-1 - i] = p;
      size++;
      used++;
      if (used * 3 >= table.length * 2) {
        // doubles when full of positions, else clears the removed slots
        rehash(size * 3 >= table.length ? table.length * 2 : table.length);
      }
      return true;
    }

    @Override
    public boolean remove(Object o) {
      int i = slot(o, table);
      if (i < 0) {
        return false;
      }
      table[i] = REMOVED;
      size--;
      if (size * 8 < table.length && table.length > 8) {
        rehash(table.length / 2);
      }
      return true;
    }

    private void rehash(int capacity) {
      Object[] old = table;
      table = new Object[capacity];
      used = 0;
      for (Object o : old) {
        if (o != null && o != REMOVED) {
          table[-1 - slot(o, table)] = o;
          used++;
        }
      }
    }

    @Override
    public int size() {
      return size;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Iterator<P> iterator() {
      List<P> live = new ArrayList<>(size);
      for (Object o : table) {
        if (o != null && o != REMOVED) {
          live.add((P) o);
        }
      }
      return live.iterator();
    }
  }
}
