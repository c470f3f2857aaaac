package dev.arbor.mongo.internal;

import static dev.arbor.mongo.internal.MongoTreeStore.ID;
import static dev.arbor.mongo.internal.MongoTreeStore.NODES;
import static dev.arbor.mongo.internal.bson.Queries.translate;
import static dev.arbor.mongo.internal.bson.Queries.unapplied;
import static java.util.Objects.requireNonNull;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.model.Projections;
import dev.arbor.core.DuplicateNodeException;
import dev.arbor.core.Node;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeEvent;
import dev.arbor.core.TreeException;
import dev.arbor.core.internal.TreeStores;
import dev.arbor.mongo.NodeTooLargeException;
import dev.arbor.mongo.internal.bson.Encoded;
import dev.arbor.mongo.internal.bson.Fits;
import dev.arbor.mongo.internal.bson.LoadEncoder;
import dev.arbor.mongo.internal.protocol.Outcome;
import dev.arbor.mongo.internal.protocol.Reads;
import dev.arbor.mongo.internal.protocol.SendAhead;
import dev.arbor.mongo.internal.protocol.Step;
import dev.arbor.mongo.internal.protocol.TreeLock;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * Loads into an empty store and grafts under a node: whole trees checked first, and streams of
 * entries in bounded memory, all-or-nothing under the lock with the load's undo journal ({@link
 * TreeLock#beginLoad}), or as one change in the caller's transaction.
 */
final class TreeLoads {
  private final MongoTreeStore store;

  TreeLoads(MongoTreeStore store) {
    this.store = store;
  }

  /**
   * Runs a load or a graft of {@code store}; one that met a duplicate key because the scoped
   * tree's {@code _id}s are another tree's says so ({@code LockDocument.sharedIds}).
   */
  static long reported(MongoTreeStore store, java.util.function.LongSupplier load) {
    try {
      return load.getAsLong();
    } catch (RuntimeException e) {
      TreeException shared = store.lock.lock.sharedIds(e);
      throw shared != null ? shared : e;
    }
  }

  /**
   * Loads a whole tree into the empty store: documents computed in one pass, inserted in ordered
   * batches of {@value MongoTreeStore#LOAD_BATCH}, each fenced, under the lock, with a journal
   * whose only step is the undo (delete every document the load inserted): a load interrupted
   * half-way is rolled back by the next access.
   */
  void load(Tree tree) {
    requireNonNull(tree, "tree");
    checkWhole(tree);
    store.requireLayout("load " + tree.size() + " nodes");
    if (store.inCallersTransaction()) {
      // In the caller's transaction: one change of inserts, committed or aborted by the caller.
      Outcome o = store.change("load " + tree.size() + " nodes", null, c -> {
        if (c.find(NODES).projection(Projections.include(ID)).limit(1).first() != null) {
          throw new TreeException("Cannot load into collection '" + store.collectionName
              + "': it is not empty");
        }
        for (Document d : store.layout.documentsFor(tree)) {
          c.insert(d);
        }
      });
      store.tell(new TreeEvent(TreeEvent.Kind.LOAD, null, null, null, null, tree.size(),
          o.version()));
      return;
    }
    TreeLock.Hold h;
    try {
      h = store.lock.acquire("load " + tree.size() + " nodes");
    } catch (RuntimeException e) {
      throw unapplied(translate(e, null), "load");
    }
    boolean journaled = false;
    boolean releasing = false;
    try {
      Reads r = new Reads(store.data, store.scope, store.session, h::renewIfDue, false,
          store.lock.lock.commandLimitMillis());
      if (r.find(NODES).projection(Projections.include(ID)).limit(1).first() != null) {
        throw new TreeException("Cannot load into collection '" + store.collectionName
            + "': it is not empty (" + r.count(NODES) + " nodes)");
      }
      store.lock.beginLoad(h);
      journaled = true;
      List<BsonDocument> batch = new ArrayList<>();
      long bytes = 0;
      LoadEncoder encoder = new LoadEncoder(store.collection.getCodecRegistry());
      BsonDocument mark = Step.mark(h.version, 0);
      for (Document d : store.layout.documentsFor(tree)) {
        // Marked and encoded once: the driver sends the bytes as they are.
        d.put(Step.MARK, mark);
        BsonDocument b = store.scope == null ? (store.ids.isString() ? encoder.encode(d)
            : store.ids.document(d.toBsonDocument(BsonDocument.class,
                store.collection.getCodecRegistry())))
            : store.scope.stored(d.toBsonDocument(BsonDocument.class,
                store.collection.getCodecRegistry()));
        int size = Encoded.size(b);
        if (!batch.isEmpty() && (batch.size() >= store.loadBatchSize
            || bytes + size > Encoded.MAX_BATCH)) {
          store.lock.loadBatch(h, batch);
          batch = new ArrayList<>();
          bytes = 0;
        }
        batch.add(b);
        bytes += size;
      }
      if (!batch.isEmpty()) {
        store.lock.loadBatch(h, batch);
      }
      releasing = true;
      store.lock.endLoad(h);
      store.layoutSeen();
      store.remember(new TreeLock.Quiet(h.epoch, h.version + 1));
      store.tell(new TreeEvent(TreeEvent.Kind.LOAD, null, null, null, null, tree.size(),
          h.version));
    } catch (dev.arbor.core.LockLostException e) {
      throw e;
    } catch (RuntimeException e) {
      if (releasing) {
        throw unapplied(translate(e, null), "load"); // its journal settles it, or it stands
      }
      throw unapplied(abandonLoad(h, journaled, e), "load");
    } finally {
      h.close();
    }
  }

  /**
   * Checks a whole tree before a load or graft writes any of it: its ids in the tree's id type,
   * its attributes, the pattern's own bounds ({@link Layout#checkLoad}) and every document's size
   * (before a document is built: their total grows with depth squared).
   */
  private void checkWhole(Tree tree) {
    for (Node e : tree.entries()) {
      store.ids.checkNew(e.id());
      store.checkAttributes(e.id(), e.attributes());
    }
    store.layout.checkLoad(tree);
    NodeTooLargeException tooLarge = Fits.check(store.pattern(), tree,
        store.collection.getCodecRegistry());
    if (tooLarge != null) {
      throw tooLarge;
    }
  }

  /** Undoes a load that failed before its commit (or frees the lock it took), for rethrowing. */
  private RuntimeException abandonLoad(TreeLock.Hold h, boolean journaled, RuntimeException e) {
    if (journaled) {
      store.lock.abortLoad(h);
    } else {
      store.lock.release(h);
    }
    return translate(e, null);
  }

  /**
   * Loads entries in preorder into the empty store as they come, in bounded client memory: the
   * documents of one batch of {@code loadBatchSize} and the path from a root to the current entry
   * (with, for child references, the children of the open nodes), never the whole tree. Under the
   * lock with the undo journal of {@link #load(Tree)}: each batch is one fenced insert command
   * (an id that exists is refused by the server's unique {@code _id} index), sent while the next
   * batch is built (see {@link SendAhead}), and the fields known only when a subtree is complete
   * (a nested set's {@code right}, a {@code children} array) go into documents still in hand or,
   * for those already sent, into idempotent updates sent with a later batch. A refusal met
   * midway (an entry out of preorder, a repeated id, a document too large) undoes what was
   * written: the store is empty again. In the caller's transaction, the entries are collected
   * and loaded as a {@link Tree}.
   */
  long load(java.util.Iterator<? extends Node> entries) {
    requireNonNull(entries, "entries");
    if (store.inCallersTransaction()) {
      Tree tree = TreeStores.collect(entries);
      load(tree);
      return tree.size();
    }
    return write(null, false, entries);
  }

  /**
   * Grafts a tree as {@link #graft(String, java.util.Iterator)} does, after checking the whole
   * tree first (attributes, {@code TreeOptions.withMaxChildren}, document sizes), so that a tree
   * that cannot be stored is refused before anything is written. In the caller's transaction,
   * the nodes are inserted one by one in it (all-or-nothing by the transaction).
   */
  long graft(@Nullable String parentId, Tree tree) {
    requireNonNull(tree, "tree");
    if (parentId != null) {
      TreeStores.checkId(parentId);
    }
    checkWhole(tree);
    if (store.inCallersTransaction()) {
      return store.graftOneByOne(parentId, tree);
    }
    return write(parentId, true, tree.entries().iterator());
  }

  /**
   * Grafts entries in preorder under {@code parentId} (or as new roots) in bounded client memory
   * and O(n / batch) round trips, all-or-nothing under the lock: the new documents go in as a
   * streamed {@link #load(java.util.Iterator)} writes them (marked, under the load's undo
   * journal), their derived fields computed from the graft point (ranks after the existing
   * siblings, ancestors and paths from the parent's, nested-set numbers from the parent's {@code
   * right}); then the writes of existing documents that make them part of the tree (the parent's
   * {@code children} array; one shift of the nested-set numbers right of the graft point) replace
   * the undo as the journal, the commit point, and run. Parent references, the array of
   * ancestors and materialized paths write no existing document: the load's end is the commit.
   * An id that exists is refused by the unique {@code _id} index when its batch is inserted, and
   * the graft undone. In the caller's transaction, the entries are collected and grafted as a
   * {@link Tree}.
   */
  long graft(@Nullable String parentId,
      java.util.Iterator<? extends Node> entries) {
    requireNonNull(entries, "entries");
    if (parentId != null) {
      TreeStores.checkId(parentId);
    }
    if (store.inCallersTransaction()) {
      return graft(parentId, TreeStores.collect(entries));
    }
    return write(parentId, true, entries);
  }

  /**
   * Writes a streamed load ({@code graft} false: the store must be empty) or a graft under the
   * store.lock, with the load's undo journal.
   */
  private long write(@Nullable String parentId, boolean graft,
      java.util.Iterator<? extends Node> entries) {
    String what = (graft ? "graft" : "load") + " a stream of nodes" + (!graft ? ""
        : parentId == null ? " as roots" : " under '" + parentId + "'");
    store.requireLayout(what);
    TreeLock.Hold h;
    try {
      h = store.lock.acquire(what);
    } catch (RuntimeException e) {
      throw unapplied(translate(e, null), what);
    }
    boolean journaled = false;
    boolean committing = false;
    try {
      Reads r = new Reads(store.data, store.scope, store.session, h::renewIfDue, false,
          store.lock.lock.commandLimitMillis());
      Document parent = null;
      boolean empty = r.find(NODES).projection(Projections.include(ID)).limit(1).first() == null;
      if (!graft && !empty) {
        throw new TreeException("Cannot load into collection '" + store.collectionName
            + "': it is not empty (" + r.count(NODES) + " nodes)");
      }
      if (parentId != null) {
        parent = r.require(parentId, null);
        String problem = store.layout.layoutProblem(parent);
        if (problem != null) {
          throw new TreeException("Cannot graft under node '" + parentId + "': it is not in the "
              + store.pattern() + " layout: " + problem + " (run check() to see all problems,"
              + " repair() to complete derivable fields)");
        }
      }
      store.lock.beginLoad(h);
      journaled = true;
      StreamLoad load;
      try (SendAhead ahead = new SendAhead("arbor-load-" + store.collectionName)) {
        load = new StreamLoad(store, r, parent, empty, h.version, store.loadBatchSize,
            new StreamLoad.Sink() {
                          public void insert(List<BsonDocument> documents, List<String> ids) {
                ahead.send(() -> insertBatch(h, documents, ids, empty));
              }

                          public void update(
                  List<com.mongodb.client.model.WriteModel<BsonDocument>> updates) {
                ahead.send(() -> store.lock.loadUpdates(h, updates));
              }
            });
        while (entries.hasNext()) {
          load.add(requireNonNull(entries.next(), "entry"));
        }
        ahead.inline();
        load.finish();
        ahead.await();
      }
      List<Step> fixes = load.fixes();
      committing = true;
      long version;
      if (fixes.isEmpty()) {
        store.lock.endLoad(h);
        version = h.version;
      } else {
        version = store.lock.commitLoad(h, fixes).version();
      }
      store.layoutSeen();
      store.remember(new TreeLock.Quiet(h.epoch, version + 1));
      long n = load.count();
      store.tell(new TreeEvent(graft ? TreeEvent.Kind.GRAFT : TreeEvent.Kind.LOAD, null, null,
          parentId, null, n, version));
      return n;
    } catch (dev.arbor.core.LockLostException e) {
      throw e;
    } catch (RuntimeException e) {
      if (committing) {
        // the journal, undo or redo, settles it at the next access
        throw unapplied(translate(e, null), what);
      }
      throw unapplied(abandonLoad(h, journaled, e), what);
    } finally {
      h.close();
    }
  }

  /**
   * Inserts one batch of a streamed load or graft, fenced; a node whose id exists already (the
   * server's unique {@code _id} index refuses it) is a {@link DuplicateNodeException} naming it.
   */
  private void insertBatch(TreeLock.Hold h, List<BsonDocument> documents, List<String> ids,
      boolean intoEmpty) {
    try {
      store.lock.loadBatch(h, documents);
    } catch (MongoBulkWriteException e) {
      com.mongodb.bulk.BulkWriteError error = e.getWriteErrors().get(0);
      int at = error.getIndex() - 1; // led by its insert fence
      if (TreeLock.duplicateId(error) && at >= 0 && at < ids.size()) {
        String id = ids.get(at);
        // into an empty tree: the stream gave the id before
        throw intoEmpty ? TreeStores.givenTwice(id) : new DuplicateNodeException(id);
      }
      throw e;
    }
  }
}
