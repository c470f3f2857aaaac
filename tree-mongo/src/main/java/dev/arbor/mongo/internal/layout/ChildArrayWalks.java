package dev.arbor.mongo.internal.layout;

import static dev.arbor.mongo.internal.bson.Queries.idOf;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.bson.Queries.slices;

import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.read.Row;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.Document;

/**
 * The walks of {@link ChildReferenceLayout} along the {@code children} arrays: up from a node to
 * its ancestors (the documents whose {@code children} list it, level by level) and down from a
 * node to its subtree. Each walk is one {@code $graphLookup} where the server runs it correctly,
 * or one query per level (see {@link Walker}).
 */
final class ChildArrayWalks {
  private final LayoutContext context;
  private final String childrenField;

  ChildArrayWalks(LayoutContext context) {
    this.context = context;
    this.childrenField = context.names().children;
  }

  /** The document whose {@code children} lists {@code id}, or null for a root. */
  Document parentDocument(Reads r, String id) {
    return r.find(eq(childrenField, id)).projection(fields(childrenField)).first();
  }

  /**
   * The document whose {@code children} lists {@code id}, or null for a root, for a change that
   * takes {@code id} out of it: refused when two documents list it (a collection written by
   * others; check() reports it), since taking it out of one would leave the other's reference
   * dangling. One query of at most two documents.
   */
  Document soleParentDocument(Reads r, String id) {
    List<Document> listers = r.find(eq(childrenField, id)).projection(fields(childrenField))
        .limit(2).into(new java.util.ArrayList<>());
    return soleListerOf(id, listers);
  }

  /**
   * {@link #listerOf}, for a change that takes {@code id} out of its lister: refused when two of
   * {@code docs} list it (see {@link #soleParentDocument}).
   */
  @org.jspecify.annotations.Nullable Document soleListerOf(String id, List<Document> docs) {
    Document first = null;
    for (Document d : docs) {
      if (!id.equals(d.get(ID)) && Layout.childIdList(d, childrenField).contains(id)) {
        if (first != null) {
          throw new dev.arbor.core.TreeException("Node '" + id + "' is listed in the "
              + childrenField + " of both '" + idOf(first) + "' and '" + idOf(d) + "': taking it"
              + " out of one would leave the other's reference dangling; check() lists the"
              + " problems, and repair() leaves it in both: remove it from one yourself. Nothing"
              + " was written.");
        }
        first = d;
      }
    }
    return first;
  }

  /** The document among {@code docs} (read already) whose children array lists {@code id}. */
  @org.jspecify.annotations.Nullable Document listerOf(String id, List<Document> docs) {
    for (Document d : docs) {
      if (!id.equals(d.get(ID))
          && Layout.childIdList(d, childrenField).contains(id)) {
        return d;
      }
    }
    return null;
  }

  /**
   * The ancestors of {@code id}, root first: one {@code $graphLookup} up the {@code children}
   * links (its depth field orders them), or one query per level (see {@link Walker}).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  List<String> ancestorsOf(Reads r, String id) {
    TreeStores.checkId(id);
    return context.walker().run(r, new Walker.Walk<>() {
      @Override
      public List<String> byGraphLookup(Reads r) {
        return ancestorsByGraphLookup(r, id);
      }

      @Override
      public List<String> byLevels(Reads r) {
        return ancestorsByWalk(r, id);
      }
    });
  }

  private List<String> ancestorsByWalk(Reads r, String id) {
    List<String> chain = new ArrayList<>();
    r.require(id, fields(ID));
    Set<String> seen = new HashSet<>();
    seen.add(id);
    for (Document p = parentDocument(r, id); p != null && seen.add(idOf(p));
        p = parentDocument(r, idOf(p))) {
      chain.add(0, idOf(p));
    }
    return chain;
  }

  private List<String> ancestorsByGraphLookup(Reads r, String id) {
    List<String> chain = new ArrayList<>();
    // Level 0 is the parent (the document whose children list the node), then upwards.
    List<Document> up = new ArrayList<>();
    for (Document d : r.aggregate(List.of(
        new Document("$match", new Document(ID, id)),
        new Document("$project", new Document(ID, 1)),
        new Document("$graphLookup", new Document("from", context.collectionName())
            .append("startWith", "$" + ID)
            .append("connectFromField", ID)
            .append("connectToField", childrenField)
            .append("depthField", "level")
            .append("as", "up")),
        new Document("$unwind", "$up"),
        new Document("$project", new Document("up." + ID, 1).append("up.level", 1))))) {
      up.add(d.get("up", Document.class));
    }
    if (up.isEmpty() && r.document(id, fields(ID)) == null) {
      throw new NodeNotFoundException(id);
    }
    up.sort(Comparator.comparingLong((Document u) -> ((Number) u.get("level")).longValue())
        .reversed());
    for (Document u : up) {
      chain.add(idOf(u));
    }
    return chain;
  }

  /**
   * The rows of {@code id} (parent null) and its descendants down to {@code maxDepth} levels:
   * one {@code $graphLookup} from the node down the {@code children} links, or one {@code $in}
   * query per level (see {@link Walker}).
   *
   * @throws NodeNotFoundException if {@code id} does not exist
   */
  List<Row> subtree(Reads r, String id, int maxDepth) {
    TreeStores.checkId(id);
    List<Document> docs = context.walker().run(r, new Walker.Walk<>() {
      @Override
      public List<Document> byGraphLookup(Reads r) {
        return subtreeByGraphLookup(r, id, maxDepth);
      }

      @Override
      public List<Document> byLevels(Reads r) {
        return subtreeByWalk(r, id, maxDepth);
      }
    });
    return rowsOf(docs, id);
  }

  private List<Document> subtreeByWalk(Reads r, String id, int maxDepth) {
    List<Document> docs = new ArrayList<>();
    List<String> level = List.of(id);
    Set<String> seen = new HashSet<>(level);
    for (int depth = 0; depth <= maxDepth && !level.isEmpty(); depth++) {
      List<String> next = new ArrayList<>();
      for (List<String> slice : slices(level)) {
        for (Document d : r.find(in(ID, slice)).projection(fields(childrenField))) {
          docs.add(d);
          if (depth < maxDepth) {
            for (String c : childrenOf(d)) {
              if (seen.add(c)) {
                next.add(c);
              }
            }
          }
        }
      }
      if (depth == 0 && docs.isEmpty()) {
        throw new NodeNotFoundException(id);
      }
      level = next;
    }
    return docs;
  }

  private List<Document> subtreeByGraphLookup(Reads r, String id, int maxDepth) {
    List<Document> docs = new ArrayList<>();
    Document lookup = new Document("from", context.collectionName())
        .append("startWith", "$" + childrenField)
        .append("connectFromField", childrenField)
        .append("connectToField", ID)
        .append("as", "down");
    if (maxDepth != Integer.MAX_VALUE) {
      lookup.append("maxDepth", maxDepth - 1);
    }
    Document self = r.require(id, fields(childrenField));
    docs.add(self);
    if (!childrenOf(self).isEmpty()) {
      for (Document d : r.aggregate(List.of(
              new Document("$match", new Document(ID, id)),
              new Document("$project", new Document(childrenField, 1)),
              new Document("$graphLookup", lookup),
              new Document("$unwind", "$down"),
              new Document("$project", new Document("down." + ID, 1)
                  .append("down." + childrenField, 1))))
          .allowDiskUse(true)) {
        docs.add(d.get("down", Document.class));
      }
    }
    return docs;
  }

  /** Rows of the fetched documents: parent and order from the children arrays that list them. */
  private List<Row> rowsOf(List<Document> docs, String top) {
    Map<String, String> parent = new HashMap<>();
    Map<String, Integer> index = new HashMap<>();
    for (Document d : docs) {
      List<String> children = childrenOf(d);
      for (int i = 0; i < children.size(); i++) {
        parent.putIfAbsent(children.get(i), idOf(d));
        index.putIfAbsent(children.get(i), i);
      }
    }
    List<Row> rows = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (Document d : docs) {
      String id = idOf(d);
      if (seen.add(id)) {
        rows.add(new Row(id, id.equals(top) ? null : parent.get(id), index.getOrDefault(id, 0),
            Map.of()));
      }
    }
    return rows;
  }

  private List<String> childrenOf(Document d) {
    return Layout.childIdList(d, childrenField);
  }
}
