package dev.arbor.mongo.internal;

import static dev.arbor.mongo.internal.bson.Queries.fields;
import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static java.util.Objects.requireNonNull;

import com.mongodb.client.model.Updates;
import dev.arbor.core.ChangeInterruptedException;
import dev.arbor.core.Deletion;
import dev.arbor.core.Node;
import dev.arbor.core.NodeHasChildrenException;
import dev.arbor.core.NodeNotFoundException;
import dev.arbor.core.Position;
import dev.arbor.core.TreeEvent;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.NodeTooLargeException;
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.bson.Fits;
import dev.arbor.mongo.internal.protocol.Footprint;
import dev.arbor.mongo.internal.protocol.Outcome;
import dev.arbor.mongo.internal.protocol.Reads;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The structural changes of the contract — insert, update, move, the three deletes — checked,
 * planned by the layout's planners ({@link Layout#planInsert} …), run by the store's
 * protocol, and told to the listeners with what they gathered while planning. Listeners cost
 * reads: a move with listeners counts the moved subtree ({@link
 * Layout#descendantCountOf}), an update reads the node's parent.
 */
final class TreeChanges {
  private final MongoTreeStore store;

  TreeChanges(MongoTreeStore store) {
    this.store = store;
  }

  void insert(String id, Position position,
      Map<String, @Nullable Object> attributes) {
    TreeStores.checkId(id);
    store.ids.checkNew(id);
    requireNonNull(position, "position");
    store.checkAttributes(id, requireNonNull(attributes,
        "attributes must not be null (use an empty map)")); // before a copy meets a bad key
    Map<String, Object> copy = TreeStores.copyAttributes(attributes);
    Told t = store.listening() ? new Told() : null;
    Outcome o = store.change("insert '" + id + "' at " + position, id,
        Footprint.insert(store.layout, position), c -> {
      store.layout.planInsert(c, id, position, copy);
      if (t != null) {
        t.newParent = parentAt(c, position);
      }
    });
    if (t != null && o.version() >= 0) {
      store.tell(new TreeEvent(TreeEvent.Kind.INSERT, id, null, t.newParent, position, 1,
          o.version()));
    }
  }

  /**
   * One {@code $set}/{@code $unset} of the node's document, planned after a read of its {@code
   * _id} that tells whether it exists; no journal (one single-document step).
   */
  void update(String id, Map<String, ? extends @Nullable Object> set) {
    TreeStores.checkId(id);
    requireNonNull(set, "set must not be null (use an empty map)");
    Map<String, Object> copy = new LinkedHashMap<>();
    set.forEach((name, value) -> copy.put(requireNonNull(name, "attribute names must not be null"),
        value));
    store.checkAttributeNames(id, copy);
    refuseTooLarge(id, copy); // encodes the values: names one that cannot be
    List<Bson> updates = new ArrayList<>();
    copy.forEach((name, value) -> updates.add(value == null ? Updates.unset(name)
        : Updates.set(name, value)));
    Told t = store.listening() ? new Told() : null;
    Outcome o = store.change("update '" + id + "'", id, Footprint.update(id), c -> {
      if (t != null) {
        Node n = store.layout.findNode(c, id).orElseThrow(() -> new NodeNotFoundException(id));
        t.oldParent = n.parentId();
      } else {
        c.require(id, fields(ID));
      }
      if (!updates.isEmpty()) {
        c.set(id, Updates.combine(updates));
      }
    });
    if (t != null && o.version() >= 0) {
      store.tell(new TreeEvent(TreeEvent.Kind.UPDATE, id, t.oldParent, t.oldParent, null, 1,
          o.version()));
    }
  }

  /**
   * Refuses, before anything is written, an update whose values alone would make the node's
   * document pass MongoDB's 16 MB ({@link Fits#MAX_NODE}, which leaves room for Arbor's own
   * fields): sent, it would be a command the driver or the server cannot take. (An update that
   * passes the limit only with the document's other fields is refused by MongoDB, and the change
   * is told not written.) The values are encoded once; one that cannot be is named by {@code
   * checkAttributes}, as a streamed load names it.
   */
  private void refuseTooLarge(String id, Map<String, @Nullable Object> set) {
    org.bson.Document values = new org.bson.Document(ID, id);
    set.forEach((name, value) -> {
      if (value != null) {
        values.put(name, value);
      }
    });
    int size;
    try {
      size = Encoded.size(values.toBsonDocument(org.bson.BsonDocument.class,
          store.collection.getCodecRegistry()));
    } catch (org.bson.codecs.configuration.CodecConfigurationException
        | IllegalArgumentException | org.bson.BSONException e) {
      store.checkAttributes(id, set); // throws naming the attribute
      throw e;
    }
    if (size > Fits.MAX_NODE) {
      throw new NodeTooLargeException(id, size, "Cannot update node '" + id + "': the values"
          + " set would make its document at least " + size + " bytes of BSON, past MongoDB's"
          + " 16 MB limit (" + Fits.MAX_NODE + " bytes, which leaves room for Arbor's own"
          + " fields). Nothing was written.");
    }
  }

  void move(String id, Position position) {
    TreeStores.checkId(id);
    requireNonNull(position, "position");
    Told t = store.listening() ? new Told() : null;
    Outcome o = store.change("move '" + id + "' to " + position, id,
        Footprint.move(store.layout, id, position), c -> {
      store.layout.planMove(c, id, position);
      if (t != null && !c.steps().isEmpty()) {
        t.oldParent = store.layout.findNode(c, id).map(Node::parentId).orElse(null);
        t.newParent = parentAt(c, position);
        t.nodes = store.layout.descendantCountOf(c, id) + 1L;
      }
    });
    if (t != null && o.version() >= 0) {
      store.tell(new TreeEvent(TreeEvent.Kind.MOVE, id, t.oldParent, t.newParent, position, t.nodes,
          o.version()));
    }
  }

  long delete(String id) {
    TreeStores.checkId(id);
    return deleteSubtree(id, "delete '" + id + "'", false);
  }

  /**
   * {@link Deletion#SUBTREE} and {@link Deletion#LEAF_ONLY} plan the pattern's delete (the latter
   * after reading the children, in the same change); {@link Deletion#LIFT_CHILDREN} plans the
   * pattern's {@link Layout#planLift}.
   */
  long delete(String id, Deletion how) {
    TreeStores.checkId(id);
    requireNonNull(how, "how");
    switch (how) {
      case SUBTREE:
        return delete(id);
      case LEAF_ONLY:
        return deleteSubtree(id, "delete leaf '" + id + "'", true);
      default:
        Told t = store.listening() ? new Told() : null;
        Outcome o = store.change("delete '" + id + "' lifting its children", id,
            Footprint.delete(store.layout, id), c -> {
          if (t != null) {
            t.oldParent = store.layout.findNode(c, id).map(Node::parentId).orElse(null);
          }
          store.layout.planLift(c, id);
        });
        if (t != null && o.version() >= 0) {
          store.tell(new TreeEvent(TreeEvent.Kind.DELETE, id, t.oldParent, null, null, 1,
              o.version()));
        }
        return 1;
    }
  }

  private long deleteSubtree(String id, String what, boolean leafOnly) {
    long[] planned = new long[1];
    Told t = store.listening() ? new Told() : null;
    Outcome o = store.change(what, id, Footprint.delete(store.layout, id), c -> {
      if (leafOnly && !store.layout.childIds(c, id).isEmpty()) {
        throw new NodeHasChildrenException(id);
      }
      if (t != null) {
        t.oldParent = store.layout.findNode(c, id).map(Node::parentId).orElse(null);
      }
      planned[0] = store.layout.planDelete(c, id);
    });
    long deleted;
    if (planned[0] >= 0) {
      deleted = planned[0];
    } else if (o.deleted() < 0) {
      throw new ChangeInterruptedException("'" + id + "' was deleted with its subtree by another"
          + " caller that completed this change; how many nodes it removed is not known here",
          ChangeInterruptedException.Outcome.COMMITTED, null);
    } else if (o.deleted() == 0) {
      throw new NodeNotFoundException(id);
    } else {
      deleted = o.deleted();
    }
    if (t != null && o.version() >= 0) {
      store.tell(new TreeEvent(TreeEvent.Kind.DELETE, id, t.oldParent, null, null, deleted,
          o.version()));
    }
    return deleted;
  }

  /** What listeners are told of a change, gathered while it is planned. */
  private static final class Told {
    @Nullable String oldParent;
    @Nullable String newParent;
    long nodes = 1;
  }

  /** The parent a node at {@code position} has. */
  private @Nullable String parentAt(Reads r, Position position) {
    if (position instanceof Position.Child child) {
      return child.parentId();
    }
    if (position instanceof Position.Sibling sibling) {
      return store.layout.findNode(r, sibling.siblingId()).map(Node::parentId).orElse(null);
    }
    return null;
  }
}
