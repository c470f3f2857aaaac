package dev.arbor.embedded;

import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.bson.Document;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * How the collections of the embedded server choose a {@link HashIndex} for a query: the part of
 * {@code queryDocuments} they share.
 *
 * <p>The server's own choice ({@code AbstractMongoCollection.queryDocuments}) takes the first
 * index of the collection whose {@code canHandle} says yes. That choice is kept for the unique
 * indexes (the {@code _id} index first): if one of them can handle the query, it does, exactly as
 * without secondary indexes. Otherwise the hash index that gives the fewest candidates wins, in
 * whatever order the indexes were created, provided that it narrows a collection of more than
 * {@value #SMALL} documents to at most half of them ({@code {tree: "t"}} alone, on a collection of
 * one tree, is answered as fast by the scan). The collection then reads the candidates in its
 * natural order, the order of its scan, and applies the whole query to each, as to the documents of
 * the scan: an index changes which documents are read, never the result, its order included.
 *
 * <p>A string or numeric range on a key field of an index whose keys are kept in order, after a
 * prefix of fields with equalities ({@code {tree: 0, path: {$gte: ",a,", $lt: ",a-"}}} on {@code
 * {tree: 1, path: 1}}, as MongoDB's index bounds; {@code {left: {$gt: 4, $lt: 17}}} on {@code
 * {left: 1, right: 1}}; {@link Ranges}, {@link HashIndex#rangeCost}) is served the same way,
 * where it gives fewer candidates than the equalities alone.
 *
 * <p>The aggregations: the server runs a pipeline over all the documents of the collection, even
 * when its first stage is a {@code $match}. For an {@code aggregate} command whose first stage is
 * a {@code $match} (and whose stages are all of {@link #PREFILTERED_STAGES}, none of which reads
 * the collection while the pipeline is built), the adapters run the pipeline over the candidates
 * of an index instead ({@link ServerAdapter#aggregate}), in the collection's natural order, and
 * the {@code $match} stage still applies the whole filter to each, as it does to the documents of
 * a scan. The {@code $graphLookup} and {@code $lookup} stages find their documents with {@code
 * handleQuery}, which indexes serve.
 */
final class IndexedQueries {
  /**
   * The stages of a pipeline that may follow a leading {@code $match} read from an index: none
   * reads the collection while the pipeline is built.
   */
  static final Set<String> PREFILTERED_STAGES = Set.of("$match", "$group", "$project", "$sort",
      "$limit", "$skip", "$count", "$unwind", "$addFields", "$set", "$unset", "$replaceRoot",
      "$replaceWith", "$sortByCount", "$graphLookup");

  /**
   * Runs the collection's {@code removal} of the document at {@code position}, then tells the
   * hash indexes among {@code indexes} that it is gone; reads the document first (by {@code
   * read}) only if one of them drops it by its values (an index of one field).
   */
  static <P> void removing(List<Index<P>> indexes, P position,
      Function<P, @Nullable Document> read, Runnable removal) {
    Document removed = null;
    for (Index<P> index : indexes) {
      if (index instanceof HashIndex<P> h && h.forgetsByValues()) {
        removed = read.apply(position);
        break;
      }
    }
    removal.run();
    for (Index<P> index : indexes) {
      if (index instanceof HashIndex<P> h) {
        h.forget(position, removed);
      }
    }
  }

  /** Collections up to this size are always served by an index that applies. */
  static final long SMALL = 1_000;

  private IndexedQueries() {}

  /**
   * The documents an index gives for a query: their {@code positions}, in no particular order,
   * and what of the query decides which of them match ({@code rest}): the whole query, or, when
   * the positions are the {@code _id} index's for the query's own {@code _id} equality or {@code
   * $in} ({@link #byId}, alone or for each clause of an {@code $or}), the query without that
   * condition ({@link #withoutIdKeys}), which every one of them satisfies.
   */
  record Candidates<P>(List<P> positions, Document rest) {}

  /**
   * The documents to read for {@code query}, or null if no index serves it (then the collection
   * does as without secondary indexes).
   *
   * @param count the number of documents in the collection
   */
  static <P> @Nullable Candidates<P> candidates(List<Index<P>> indexes, Document query,
      long count) {
    return candidates(indexes, query, count, Long.MAX_VALUE);
  }

  /** {@code query} without its {@code _id} condition that {@link #byId} read. */
  private static Document afterId(Document query) {
    Document rest = withoutIdKeys(query);
    return rest != null ? rest : query;
  }

  /**
   * As {@link #candidates(List, Document, long)}, but null also where a hash index would give
   * more than {@code bound} candidates (the union of an {@code $or} beside a smaller one).
   */
  private static <P> @Nullable Candidates<P> candidates(List<Index<P>> indexes, Document query,
      long count, long bound) {
    if (query.isEmpty()) {
      return null;
    }
    Candidates<P> union = union(indexes, query, count, bound);
    if (union != null) {
      return union;
    }
    for (Index<P> index : indexes) {
      if (!(index instanceof HashIndex) && index.canHandle(query)) {
        return null; // as without secondary indexes
      }
    }
    List<P> byId = byId(indexes, query);
    if (byId != null) {
      return new Candidates<>(byId, afterId(query));
    }
    Map<String, Set<Object>> eq = Equalities.of(query);
    if (eq == null) {
      return null;
    }
    HashIndex<P> best = null;
    long least = Long.MAX_VALUE;
    for (Index<P> index : indexes) {
      if (index instanceof HashIndex<P> h && !eq.isEmpty()) {
        long cost = h.cost(eq);
        if (cost >= 0 && cost < least) {
          best = h;
          least = cost;
        }
      }
    }
    Map<String, Ranges.Range> ranges = Ranges.of(query);
    Map<String, Ranges.Span> spans = Ranges.numeric(query);
    HashIndex<P> ranged = null;
    long rangeLeast = Long.MAX_VALUE;
    if (!ranges.isEmpty() || !spans.isEmpty()) {
      for (Index<P> index : indexes) {
        if (index instanceof HashIndex<P> h) {
          long cost = h.rangeCost(eq, ranges, spans);
          if (cost >= 0 && cost < rangeLeast) {
            ranged = h;
            rangeLeast = cost;
          }
        }
      }
    }
    boolean byRange = ranged != null && rangeLeast < least;
    long cost = byRange ? rangeLeast : least;
    if (byRange || best != null) {
      if (count > SMALL && cost > count / 2 || cost > bound) {
        return null;
      }
      (byRange ? ranged : best).countServed();
      return new Candidates<>(byRange ? ranged.rangeCandidates(eq, ranges, spans)
          : best.candidates(eq), query);
    }
    return null;
  }

  /**
   * For a query with an {@code $or} ({@code {$or: [{_id: {$in: [k, a]}}, {parent: k}]}}, also as
   * a conjunct of a top-level {@code $and} beside equalities, as a scoped tree sends it: {@code
   * {tenant: "t", $and: [{$or: [...]}]}}, or of an {@code $and} inside one, as a fenced step
   * sends it: {@code {$and: [{$and: [{$or: [{_id: k}, {ancestors: k}]}, guard]}, deadline]}}),
   * the union of the positions each clause's index gives ({@link #byId} or a hash index) with the
   * plain fields the query requires beside it added to the clause, when every clause has one;
   * else null. Of several such {@code $or}s (a step's guard is one too), the one whose union is
   * the smallest. The server's own choice scans for an {@code $or}.
   * Every document the query matches matches each {@code $or} reached through {@code $and}s, so
   * each clause's candidates hold every document that matches it and the query's other
   * conditions, and the union holds every document the query matches; the collection applies the
   * whole query to each candidate, and a position found twice is read once.
   */
  private static <P> @Nullable Candidates<P> union(List<Index<P>> indexes, Document query,
      long count, long bound) {
    List<List<?>> ors = new java.util.ArrayList<>();
    Document common = new Document();
    if (!conjuncts(query, ors, common, 0)) {
      return null;
    }
    Candidates<P> least = null;
    for (List<?> clauses : ors) {
      Candidates<P> union = union(indexes, query, clauses, common, count,
          least == null ? bound : least.positions().size() - 1L);
      if (union != null) {
        least = union; // smaller than the one before, by its bound
      }
    }
    return least;
  }

  /**
   * Collects the {@code $or}s and the plain fields that {@code query} requires of every document
   * it matches: its own, and those of the documents of its {@code $and}s, recursively (up to a
   * depth of 4); false if an {@code $or} or {@code $and} is malformed (left to the scan, which
   * reports it).
   */
  private static boolean conjuncts(Document query, List<List<?>> ors, Document common,
      int depth) {
    for (Map.Entry<String, Object> e : query.entrySet()) {
      if (e.getKey().equals("$or")) {
        if (!(e.getValue() instanceof List<?> l)) {
          return false;
        }
        ors.add(l);
      } else if (e.getKey().equals("$and")) {
        if (!(e.getValue() instanceof List<?> all)) {
          return false;
        }
        if (depth < 4) {
          for (Object o : all) {
            if (o instanceof Document d && !conjuncts(d, ors, common, depth + 1)) {
              return false;
            }
          }
        }
      } else if (!e.getKey().startsWith("$")) {
        common.putIfAbsent(e.getKey(), e.getValue()); // one condition of a field: a superset
      }
    }
    return true;
  }

  /**
   * The union of the candidates of {@code clauses} (an {@code $or} of {@code query}), each
   * narrowed by {@code common}, or null (a clause no index serves, or more than {@code bound}
   * candidates).
   */
  private static <P> @Nullable Candidates<P> union(List<Index<P>> indexes, Document query,
      List<?> clauses, Document common, long count, long bound) {
    if (clauses.isEmpty() || clauses.size() > 8) {
      return null;
    }
    java.util.LinkedHashSet<P> union = new java.util.LinkedHashSet<>();
    boolean byQueryIds = common.containsKey("_id");
    for (Object clause : clauses) {
      if (!(clause instanceof Document d) || d.isEmpty() || d.containsKey("$or")) {
        return null;
      }
      Document narrowed = new Document(common);
      narrowed.putAll(d); // a field in both keeps the clause's condition: still a superset
      List<P> part = byId(indexes, narrowed);
      // read by the query's own _id condition (common's, not the clause's): each candidate
      // satisfies it
      byQueryIds &= part != null && !d.containsKey("_id");
      if (part == null) {
        Candidates<P> served = candidates(indexes, narrowed, count, bound - union.size());
        part = served == null ? null : served.positions();
      }
      if (part == null) {
        return null;
      }
      union.addAll(part);
      if (union.size() > bound) {
        return null;
      }
    }
    return new Candidates<>(new java.util.ArrayList<>(union),
        byQueryIds ? afterId(query) : query);
  }

  /**
   * The positions the {@code _id} index gives for an {@code _id} equality, or an {@code _id}
   * {@code $in}, that the query requires beside other conditions ({@code {_id: k, owner: t}},
   * {@code {_id: {$in: [k1, k2]}, mark: v}}, or in a top-level {@code $and}), which the server's
   * own choice leaves to the scan (a scan that, for an {@code $in}, compares every document with
   * every value); null if there is none. Each value must be a string, an ObjectId, a number or a
   * document of those (as the lock documents' keys are, and a scoped tree's node ids {@code {s:
   * 0, id: "a"}}): the index then finds what the server finds for {@code {_id: k}} alone (its
   * unique index normalizes numbers as its matcher does), and the collection applies the whole
   * query to it.
   */
  static <P> @Nullable List<P> byId(List<Index<P>> indexes, Document query) {
    List<Object> ids = idKeys(query, 0);
    if (ids == null) {
      return null;
    }
    for (Index<P> index : indexes) {
      if (!(index instanceof HashIndex) && index.getKeys().size() == 1
          && index.getKeys().get(0).getKey().equals("_id")
          && index.canHandle(new Document("_id", ids.get(0)))) {
        List<P> out = new java.util.ArrayList<>();
        for (Object id : ids) {
          index.getPositions(new Document("_id", id)).forEach(out::add);
        }
        return out;
      }
    }
    return null;
  }

  /**
   * {@code query} without the {@code _id} equality or {@code $in} that {@link #byId} read from
   * the {@code _id} index (the first {@link #idKeys} finds), or null if it has none: every
   * document the index gave for it satisfies it, so the rest of the query decides. Matched
   * against the whole query, each of n candidates of an {@code $in} of n ids was compared with
   * every id (the server's matcher normalizes each value in turn): a delete of 10 000 children
   * by their ids took 4 s.
   */
  static @Nullable Document withoutIdKeys(Document query) {
    return withoutIdKeys(query, 0);
  }

  /**
   * For a query of an {@code _id} equality or {@code $in} of plain keys alone, the positions the
   * server's own {@code _id} index gives for it, in its order (every document there matches the
   * query: the collection reads them against an empty one, not against every id of the {@code
   * $in} again); else null.
   */
  static <P> @Nullable Iterable<P> byIdAlone(List<Index<P>> indexes, Document query) {
    Document none = withoutIdKeys(query);
    if (none == null || !none.isEmpty()) {
      return null;
    }
    for (Index<P> index : indexes) {
      if (!(index instanceof HashIndex) && index.canHandle(query)) {
        return index.getPositions(query);
      }
    }
    return null;
  }

  private static @Nullable Document withoutIdKeys(Document query, int depth) {
    Document out = new Document();
    boolean removed = false;
    for (Map.Entry<String, Object> e : query.entrySet()) {
      if (!removed && e.getKey().equals("_id") && (plainKey(e.getValue(), 0)
          || e.getValue() instanceof Document op && op.size() == 1
          && op.get("$in") instanceof List<?> in && !in.isEmpty()
          && in.stream().allMatch(v -> plainKey(v, 0)))) {
        removed = true;
        continue;
      }
      if (!removed && e.getKey().equals("$and") && depth < 4
          && e.getValue() instanceof List<?> list) {
        List<Object> rest = new java.util.ArrayList<>();
        for (Object o : list) {
          Document less = !removed && o instanceof Document d ? withoutIdKeys(d, depth + 1) : null;
          if (less != null) {
            removed = true;
            if (!less.isEmpty()) {
              rest.add(less);
            }
          } else {
            rest.add(o);
          }
        }
        if (removed) {
          if (!rest.isEmpty()) {
            out.put("$and", rest);
          }
          continue;
        }
      }
      out.put(e.getKey(), e.getValue());
    }
    return removed ? out : null;
  }

  /**
   * The values of an {@code _id} equality or {@code $in} that {@code query} requires (not empty),
   * or null.
   */
  private static @Nullable List<Object> idKeys(Document query, int depth) {
    for (Map.Entry<String, Object> e : query.entrySet()) {
      if (e.getKey().equals("_id")) {
        if (plainKey(e.getValue(), 0)) {
          return List.of(e.getValue());
        }
        if (e.getValue() instanceof Document op && op.size() == 1
            && op.get("$in") instanceof List<?> in && !in.isEmpty()
            && in.stream().allMatch(v -> plainKey(v, 0))) {
          return new java.util.ArrayList<>(in);
        }
      }
      if (e.getKey().equals("$and") && depth < 4 && e.getValue() instanceof List<?> list) {
        for (Object o : list) {
          if (o instanceof Document d) {
            List<Object> ids = idKeys(d, depth + 1);
            if (ids != null) {
              return ids;
            }
          }
        }
      }
    }
    return null;
  }

  /** A string, an ObjectId, a number, or a document of those (no operator, null or array). */
  private static boolean plainKey(@Nullable Object value, int depth) {
    if (Equalities.exact(value)) {
      return true;
    }
    if (!(value instanceof Document d) || d.isEmpty() || depth > 4) {
      return false;
    }
    for (Map.Entry<String, Object> e : d.entrySet()) {
      if (e.getKey().startsWith("$") || !plainKey(e.getValue(), depth + 1)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The filter of the leading {@code $match} of an {@code aggregate} command whose stages are all
   * of {@link #PREFILTERED_STAGES}, or null.
   */
  static @Nullable Document leadingMatch(Document command) {
    if (!(command.get("pipeline") instanceof List<?> pipeline) || pipeline.isEmpty()
        || command.containsKey("explain")) {
      return null;
    }
    for (Object stage : pipeline) {
      if (!(stage instanceof Document d) || d.size() != 1
          || !PREFILTERED_STAGES.contains(d.keySet().iterator().next())) {
        return null;
      }
    }
    return ((Document) pipeline.get(0)).get("$match") instanceof Document match ? match : null;
  }
}
