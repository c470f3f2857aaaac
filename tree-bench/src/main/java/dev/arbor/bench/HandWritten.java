package dev.arbor.bench;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.regex;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import dev.arbor.mongo.TreePattern;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * The baseline beside every measured read: the query the MongoDB manual writes by hand for the
 * pattern (for example {@code find({ancestors: id})} for the descendants of an array of
 * ancestors), run on the same collection, projected to {@code _id}, its result read to the end and
 * not assembled into order. The store's time divided by this one is the library's overhead.
 *
 * <p>Where the manual has no query for a read (ancestors with parent or child references,
 * two-level descendants), the baseline is the shortest hand-written equivalent: {@code
 * $graphLookup} where the server runs it correctly, otherwise a walk one query per level.
 */
final class HandWritten {
  private static final String ID = "_id";
  /** Arbor's depth field of nested sets (the manual's lack it): depth-limited reads need it. */
  private static final String DEPTH = dev.arbor.mongo.TreeField.DEPTH.defaultName();
  private static final Bson ID_ONLY = Projections.include(ID);

  private final TreePattern pattern;
  private final MongoCollection<Document> collection;
  private final boolean graphLookup;

  HandWritten(TreePattern pattern, MongoCollection<Document> collection, boolean graphLookup) {
    this.pattern = pattern;
    this.collection = collection;
    this.graphLookup = graphLookup;
  }

  /**
   * Whether {@code $graphLookup} honours {@code startWith} on this server (mongo-java-server does
   * not). Probed on a non-empty collection with a start value that matches nothing.
   */
  static boolean graphLookupWorks(MongoCollection<Document> collection) {
    try {
      Document first = collection.aggregate(List.of(
          new Document("$limit", 1),
          new Document("$graphLookup", new Document("from",
              collection.getNamespace().getCollectionName())
              .append("startWith", new Document("$literal", "\u0000no node has this id"))
              .append("connectFromField", ID).append("connectToField", ID)
              .append("maxDepth", 0).append("as", "found")))).first();
      return first != null && first.getList("found", Object.class, List.of()).isEmpty();
    } catch (MongoException e) {
      return false;
    }
  }

  /** A short statement of the baseline's query for {@code read}, for the report. */
  String describe(Script.Read read) {
    boolean limited = read.maxDepth() != Integer.MAX_VALUE;
    return switch (pattern) {
      case PARENT_REFERENCES -> switch (read.kind()) {
        case CHILDREN -> "find({parent: id})";
        case ANCESTORS -> graphLookup ? "$graphLookup on parent"
            : "findOne({_id}).parent, per level";
        case DESCENDANTS -> graphLookup ? "$graphLookup on parent"
            : "find({parent: {$in: level}}), per level";
      };
      case CHILD_REFERENCES -> switch (read.kind()) {
        case CHILDREN -> "findOne({_id}).children";
        case ANCESTORS -> graphLookup ? "$graphLookup on children"
            : "findOne({children: id}), per level";
        case DESCENDANTS -> graphLookup ? "$graphLookup on children"
            : "find({_id: {$in: children}}), per level";
      };
      case ARRAY_OF_ANCESTORS -> switch (read.kind()) {
        case CHILDREN -> "find({parent: id})";
        case ANCESTORS -> "findOne({_id}).ancestors";
        case DESCENDANTS -> limited ? "findOne({_id}); find({ancestors: id, ancestors.k: absent})"
            : "find({ancestors: id})";
      };
      case MATERIALIZED_PATHS -> switch (read.kind()) {
        case CHILDREN -> "findOne({_id}).path; find({path: path + id + ','})";
        case ANCESTORS -> "findOne({_id}).path, split";
        case DESCENDANTS -> limited ? "find({path: /,id,([^,]*,){0,k-1}$/})"
            : "find({path: /,id,/})";
      };
      case NESTED_SETS -> switch (read.kind()) {
        case CHILDREN -> "find({parent: id})";
        case ANCESTORS -> "findOne({_id}); find({left: {$lt: l}, right: {$gt: r}})";
        case DESCENDANTS -> "findOne({_id}); find({left: {$gt: l}, right: {$lt: r}"
            + (limited ? ", depth: {$lte: d + k}})" : "})");
      };
    };
  }

  /** Runs the baseline of {@code read}; returns the ids it found, in no particular order. */
  List<String> run(Script.Read read) {
    String id = read.id();
    return switch (pattern) {
      case PARENT_REFERENCES -> switch (read.kind()) {
        case CHILDREN -> ids(collection.find(eq("parent", id)).projection(ID_ONLY));
        case ANCESTORS -> graphLookup ? graph(id, "$parent", "parent", ID, Integer.MAX_VALUE)
            : walkUp(id, d -> d.getString("parent"), "parent");
        case DESCENDANTS -> graphLookup ? graph(id, "$_id", ID, "parent", read.maxDepth())
            : walkDown(List.of(id), "parent", read.maxDepth());
      };
      case CHILD_REFERENCES -> switch (read.kind()) {
        case CHILDREN -> children(id);
        case ANCESTORS -> graphLookup ? graph(id, "$_id", ID, "children", Integer.MAX_VALUE)
            : walkUpByChildren(id);
        case DESCENDANTS -> graphLookup ? graph(id, "$children", "children", ID, read.maxDepth())
            : walkDownByChildren(id, read.maxDepth());
      };
      case ARRAY_OF_ANCESTORS -> switch (read.kind()) {
        case CHILDREN -> ids(collection.find(eq("parent", id)).projection(ID_ONLY));
        case ANCESTORS -> one(id, "ancestors").getList("ancestors", String.class);
        case DESCENDANTS -> {
          if (read.maxDepth() == Integer.MAX_VALUE) {
            yield ids(collection.find(eq("ancestors", id)).projection(ID_ONLY));
          }
          int depth = one(id, "ancestors").getList("ancestors", String.class).size();
          yield ids(collection.find(and(eq("ancestors", id),
              exists("ancestors." + (depth + read.maxDepth()), false))).projection(ID_ONLY));
        }
      };
      case MATERIALIZED_PATHS -> switch (read.kind()) {
        case CHILDREN -> {
          String path = one(id, "path").getString("path");
          yield ids(collection.find(eq("path", (path == null ? "," : path) + id + ","))
              .projection(ID_ONLY));
        }
        case ANCESTORS -> {
          String path = one(id, "path").getString("path");
          List<String> out = new ArrayList<>();
          if (path != null) {
            for (String part : path.split(",")) {
              if (!part.isEmpty()) {
                out.add(part);
              }
            }
          }
          yield out;
        }
        case DESCENDANTS -> {
          String below = "," + Pattern.quote(id) + ",";
          String levels = read.maxDepth() == Integer.MAX_VALUE ? ""
              : "([^,]*,){0," + (read.maxDepth() - 1) + "}$";
          yield ids(collection.find(regex("path", below + levels)).projection(ID_ONLY));
        }
      };
      case NESTED_SETS -> switch (read.kind()) {
        case CHILDREN -> ids(collection.find(eq("parent", id)).projection(ID_ONLY));
        case ANCESTORS -> {
          Document d = one(id, "left", "right");
          yield ids(collection.find(and(lt("left", d.get("left")), gt("right", d.get("right"))))
              .projection(ID_ONLY));
        }
        case DESCENDANTS -> {
          Document d = one(id, "left", "right", DEPTH);
          Bson below = and(gt("left", d.get("left")), lt("right", d.get("right")));
          if (read.maxDepth() != Integer.MAX_VALUE) {
            long depth = d.get(DEPTH) instanceof Number n ? n.longValue() : 0;
            below = and(below, lte(DEPTH, depth + read.maxDepth()));
          }
          yield ids(collection.find(below).projection(ID_ONLY));
        }
      };
    };
  }

  private Document one(String id, String... fields) {
    Document d = collection.find(eq(ID, id)).projection(Projections.include(fields)).first();
    if (d == null) {
      throw new IllegalStateException("baseline: node '" + id + "' is not in "
          + collection.getNamespace());
    }
    return d;
  }

  private List<String> children(String id) {
    return one(id, "children").getList("children", String.class, List.of());
  }

  private List<String> graph(String id, String startWith, String from, String to, int maxDepth) {
    Document search = new Document("from", collection.getNamespace().getCollectionName())
        .append("startWith", startWith).append("connectFromField", from)
        .append("connectToField", to).append("as", "found");
    if (maxDepth != Integer.MAX_VALUE) {
      search.append("maxDepth", maxDepth - 1);
    }
    Document d = collection.aggregate(List.of(new Document("$match", new Document(ID, id)),
        new Document("$graphLookup", search),
        new Document("$project", new Document("found._id", 1)))).first();
    List<String> out = new ArrayList<>();
    if (d != null) {
      for (Document f : d.getList("found", Document.class, List.of())) {
        out.add(f.getString(ID));
      }
    }
    return out;
  }

  private List<String> walkUp(String id, java.util.function.Function<Document, String> up,
      String field) {
    List<String> out = new ArrayList<>();
    String parent = up.apply(one(id, field));
    while (parent != null) {
      out.add(parent);
      parent = up.apply(one(parent, field));
    }
    Collections.reverse(out);
    return out;
  }

  private List<String> walkUpByChildren(String id) {
    List<String> out = new ArrayList<>();
    Document parent = collection.find(eq("children", id)).projection(ID_ONLY).first();
    while (parent != null) {
      out.add(parent.getString(ID));
      parent = collection.find(eq("children", parent.getString(ID))).projection(ID_ONLY).first();
    }
    Collections.reverse(out);
    return out;
  }

  private List<String> walkDown(List<String> start, String parentField, int maxDepth) {
    List<String> out = new ArrayList<>();
    List<String> frontier = start;
    for (int level = 0; level < maxDepth && !frontier.isEmpty(); level++) {
      frontier = ids(collection.find(in(parentField, frontier)).projection(ID_ONLY));
      out.addAll(frontier);
    }
    return out;
  }

  private List<String> walkDownByChildren(String id, int maxDepth) {
    List<String> out = new ArrayList<>();
    List<String> frontier = children(id);
    for (int level = 0; level < maxDepth && !frontier.isEmpty(); level++) {
      out.addAll(frontier);
      if (level + 1 == maxDepth) {
        break;
      }
      List<String> next = new ArrayList<>();
      for (Document d : collection.find(in(ID, frontier))
          .projection(Projections.include("children"))) {
        next.addAll(d.getList("children", String.class, List.of()));
      }
      frontier = next;
    }
    return out;
  }

  private static List<String> ids(Iterable<Document> docs) {
    List<String> out = new ArrayList<>();
    for (Document d : docs) {
      out.add(d.getString(ID));
    }
    return out;
  }
}
