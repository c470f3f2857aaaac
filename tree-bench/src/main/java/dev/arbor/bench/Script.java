package dev.arbor.bench;

import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What one measured invocation does to a store, and how to put the store back afterwards (the
 * JMH "fresh state per invocation" discipline): a fixed list of actions, then either their inverses
 * in reverse order or, where re-creating the state by inverse operations would cost more than
 * loading the tree again, a reload.
 *
 * <p>Scripts are computed once per tree from a model (the tree itself or an {@link
 * InMemoryTreeStore}), so building one costs nothing at measurement time.
 */
final class Script {
  /** A deleted subtree up to this size is restored by re-inserting it; a larger one by reload. */
  static final int REINSERT_LIMIT = 16;

  /** One call on a store. */
  interface Action {
    /**
     * Performs the call.
     *
     * @return the size of its answer: ids returned by a read, nodes removed by a delete, else 0
     */
    long run(TreeStore store);
  }

  /**
   * What a single read asks, so that the hand-written baseline can ask the same.
   *
   * @param kind which read
   * @param id the node read from
   * @param maxDepth levels of descendants ({@link Integer#MAX_VALUE}: all); unused otherwise
   */
  record Read(Kind kind, String id, int maxDepth) {
    /** The reads that have a baseline. */
    enum Kind {
      CHILDREN,
      ANCESTORS,
      DESCENDANTS
    }
  }

  private final String subject;
  private final long subjectSize;
  private final Read read;
  private final List<Action> actions;
  private final List<Action> undo;
  private final boolean reload;
  private final int reads;

  /** {@code undo} is in the order it runs: the inverse of the last action first. */
  private Script(String subject, long subjectSize, List<Action> actions, List<Action> undo,
      boolean reload) {
    this(subject, subjectSize, null, actions, undo, reload, 0);
  }

  private Script(String subject, long subjectSize, Read read, List<Action> actions,
      List<Action> undo, boolean reload, int reads) {
    this.subject = subject;
    this.read = read;
    this.subjectSize = subjectSize;
    this.actions = List.copyOf(actions);
    this.undo = List.copyOf(undo);
    this.reload = reload;
    this.reads = reads;
  }

  /** What the script works on, for the report ("n12 (subtree of 11)"). */
  String subject() {
    return subject;
  }

  /** The size of the subject: the subtree read, moved or deleted; 1 for a leaf. */
  long subjectSize() {
    return subjectSize;
  }

  /** The read a single-read script performs, or null for writes and workloads. */
  Read read() {
    return read;
  }

  /** The number of operations in one invocation. */
  int length() {
    return actions.size();
  }

  /** How many of them only read. */
  int reads() {
    return reads;
  }

  /** Whether the store changes (and so must be restored after each invocation). */
  boolean mutates() {
    return reload || !undo.isEmpty();
  }

  /** Whether restoring the store needs a reload of the whole tree. */
  boolean needsReload() {
    return reload;
  }

  /**
   * Runs the actions.
   *
   * @return the summed answer sizes of the actions
   */
  long run(TreeStore store) {
    long result = 0;
    for (Action a : actions) {
      result += a.run(store);
    }
    return result;
  }

  /** Undoes {@link #run} by inverse actions; the caller reloads instead if {@link #needsReload}. */
  void undo(TreeStore store) {
    for (Action a : undo) {
      a.run(store);
    }
  }

  // ------------------------------------------------------------------------- single operations

  /** The script of a single operation (not {@link Operation#LOAD}, which the runner times). */
  static Script of(Operation op, TreeFacts f, Subjects s) {
    return switch (op) {
      case LOAD -> throw new IllegalArgumentException("LOAD is measured by the runner");
      case INSERT_LEAF -> {
        String parent = f.id(s.insertParent());
        String id = f.newIdPrefix() + "new";
        yield new Script("under " + parent + " (" + f.childCount[s.insertParent()]
            + " children)", 1,
            List.of(insert(id, Position.lastChildOf(parent), Map.of("name", "New"))),
            List.of(delete(id)), false);
      }
      case CHILDREN -> read(f.id(s.widest()) + " (" + f.childCount[s.widest()] + " children)",
          f.childCount[s.widest()],
          new Read(Read.Kind.CHILDREN, f.id(s.widest()), 1), children(f.id(s.widest())));
      case ANCESTORS -> read(f.id(s.deepLeaf()) + " (depth " + f.depth[s.deepLeaf()] + ")",
          f.depth[s.deepLeaf()], new Read(Read.Kind.ANCESTORS, f.id(s.deepLeaf()), 0),
          ancestors(f.id(s.deepLeaf())));
      case DESCENDANTS_SMALL -> subtreeRead(f, s.small(), Integer.MAX_VALUE);
      case DESCENDANTS_MEDIUM -> subtreeRead(f, s.medium(), Integer.MAX_VALUE);
      case DESCENDANTS_LARGE -> subtreeRead(f, s.large(), Integer.MAX_VALUE);
      case DESCENDANTS_LIMITED -> subtreeRead(f, s.large(), Operation.LIMITED_DEPTH);
      case CHILD_NODES -> {
        String id = f.id(s.widest());
        yield read(id + " (" + f.childCount[s.widest()] + " children)",
            Math.min(Operation.PAGE, f.childCount[s.widest()]), null,
            named("childNodes(" + id + ", null, " + Operation.PAGE + ")",
                store -> store.childNodes(id, null, Operation.PAGE).size()));
      }
      case ANCESTOR_NODES -> {
        String id = f.id(s.deepLeaf());
        yield read(id + " (depth " + f.depth[s.deepLeaf()] + ")", f.depth[s.deepLeaf()], null,
            named("ancestorNodes(" + id + ")", store -> store.ancestorNodes(id).size()));
      }
      case SUBTREE -> {
        String id = f.id(s.large());
        yield read(id + " (subtree of " + f.subtreeSize[s.large()] + ", "
            + Operation.LIMITED_DEPTH + " levels)", f.subtreeSize[s.large()], null,
            named("subtree(" + id + ", " + Operation.LIMITED_DEPTH + ")",
                store -> store.subtree(id, Operation.LIMITED_DEPTH).size()));
      }
      case MOVE_LEAF -> {
        int leaf = s.movedLeaf();
        yield new Script(f.id(leaf) + " -> " + s.leafTarget(), 1,
            List.of(move(f.id(leaf), s.leafTarget())),
            List.of(move(f.id(leaf), f.positionOf(leaf))), false);
      }
      case MOVE_SUBTREE -> {
        int root = s.large();
        yield new Script(f.id(root) + " (subtree of " + f.subtreeSize[root] + ") -> "
            + s.subtreeTarget(), f.subtreeSize[root],
            List.of(move(f.id(root), s.subtreeTarget())),
            List.of(move(f.id(root), f.positionOf(root))), false);
      }
      case DELETE_SUBTREE -> {
        int root = s.small();
        int size = f.subtreeSize[root];
        List<Action> restore = new ArrayList<>();
        if (size <= REINSERT_LIMIT) {
          // Re-insert in preorder: the root where it was, then each node as its parent's last
          // child.
          restore.add(insert(f.id(root), f.positionOf(root), f.entries.get(root).attributes()));
          for (int i = root + 1; i < root + size; i++) {
            Node e = f.entries.get(i);
            restore.add(insert(e.id(), Position.lastChildOf(e.parentId()), e.attributes()));
          }
        }
        yield new Script(f.id(root) + " (subtree of " + size + ")", size,
            List.of(delete(f.id(root))), restore, size > REINSERT_LIMIT);
      }
    };
  }

  /** A read; {@code read} says what the hand-written baseline asks, null for none. */
  private static Script read(String subject, long size, Read read, Action action) {
    return new Script(subject, size, read, List.of(action), List.of(), false, 1);
  }

  private static Script subtreeRead(TreeFacts f, int root, int maxDepth) {
    String limit = maxDepth == Integer.MAX_VALUE ? "" : ", " + maxDepth + " levels";
    return read(f.id(root) + " (subtree of " + f.subtreeSize[root] + limit + ")",
        f.subtreeSize[root], new Read(Read.Kind.DESCENDANTS, f.id(root), maxDepth),
        descendants(f.id(root), maxDepth));
  }

  // ------------------------------------------------------------------------------- workloads

  /**
   * The script of a workload: {@link Workload#steps()} operations, exactly {@link
   * Workload#readSteps()} of them reads at positions drawn from the seed, each read or edit of a
   * kind drawn from the workload's weights, subjects drawn from the tree as the earlier operations
   * left it, computed on an in-memory model. An edit that cannot be made (a move with nowhere to
   * go, a delete that would remove a whole tree) becomes an insert, so the ratio holds on every
   * tree.
   */
  static Script of(Workload workload, TreeFacts f, long seed) {
    SplittableRandom random = new SplittableRandom(seed ^ (workload.name().hashCode() + 1L)
        * 0xBF58476D1CE4E5B9L);
    InMemoryTreeStore model = new InMemoryTreeStore();
    model.load(f.tree);
    Live live = new Live(f);
    List<Action> actions = new ArrayList<>();
    List<Action> undo = new ArrayList<>();
    Map<Workload.Step, Integer> counts = new java.util.EnumMap<>(Workload.Step.class);
    int inserted = 0;
    String prefix = f.newIdPrefix();
    for (boolean read : readPositions(workload, random)) {
      Workload.Step step = draw(read ? workload.reads() : workload.writes(), random);
      if (step == null) {
        step = read ? Workload.Step.ANCESTORS : Workload.Step.INSERT; // no kind given: a default
      }
      if (!read) {
        step = feasible(step, model, live, random);
      }
      counts.merge(step, 1, Integer::sum);
      switch (step) {
        case CHILDREN -> actions.add(children(live.pickInner(model, random)));
        case ANCESTORS -> actions.add(ancestors(live.pick(random)));
        case DESCENDANTS -> {
          String root = live.pickSubtree(model, random, 2, 50);
          actions.add(descendants(root != null ? root : live.pickInner(model, random),
              Integer.MAX_VALUE));
        }
        case DESCENDANTS_LIMITED -> actions.add(descendants(live.pickInner(model, random),
            Operation.LIMITED_DEPTH));
        case INSERT -> {
          String id = prefix + "w" + (++inserted);
          String anchor = live.pick(random);
          Position position = random.nextBoolean() ? Position.lastChildOf(anchor)
              : Position.after(anchor);
          Map<String, Object> attributes = Map.of("name", "New " + inserted);
          model.insert(id, position, attributes);
          live.add(id);
          actions.add(insert(id, position, attributes));
          undo.add(0, delete(id));
        }
        case MOVE_LEAF, MOVE_SUBTREE -> {
          Move m = live.pendingMove;
          Position back = positionIn(model, m.root);
          model.move(m.root, Position.lastChildOf(m.target));
          actions.add(move(m.root, Position.lastChildOf(m.target)));
          undo.add(0, move(m.root, back));
        }
        case DELETE -> {
          String root = live.pendingDelete;
          List<Action> restore = new ArrayList<>();
          Node node = model.find(root).orElseThrow();
          restore.add(insert(root, positionIn(model, root), node.attributes()));
          for (String d : model.descendants(root)) {
            Node dn = model.find(d).orElseThrow();
            restore.add(insert(d, Position.lastChildOf(dn.parentId()), dn.attributes()));
          }
          for (String gone : model.descendants(root)) {
            live.remove(gone);
          }
          live.remove(root);
          model.delete(root);
          actions.add(delete(root));
          undo.addAll(0, restore);
        }
        default -> throw new AssertionError(step);
      }
    }
    int reads = 0;
    StringBuilder kinds = new StringBuilder();
    for (Map.Entry<Workload.Step, Integer> e : counts.entrySet()) {
      reads += e.getKey().read() ? e.getValue() : 0;
      kinds.append(' ').append(e.getValue()).append(' ').append(Names.of(e.getKey()));
    }
    String subject = actions.size() + " ops, " + reads + " reads and " + (actions.size() - reads)
        + " edits:" + kinds;
    return new Script(subject, actions.size(), null, actions, undo, false, reads);
  }

  /** For each operation of the workload's sequence, whether it is a read: a seeded shuffle. */
  private static boolean[] readPositions(Workload workload, SplittableRandom random) {
    boolean[] read = new boolean[workload.steps()];
    for (int i = 0; i < workload.readSteps(); i++) {
      read[i] = true;
    }
    for (int i = read.length - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      boolean t = read[i];
      read[i] = read[j];
      read[j] = t;
    }
    return read;
  }

  private static Workload.Step draw(List<Workload.Weighted> kinds, SplittableRandom random) {
    int total = 0;
    for (Workload.Weighted w : kinds) {
      total += w.weight();
    }
    if (total == 0) {
      return null;
    }
    int r = random.nextInt(total);
    for (Workload.Weighted w : kinds) {
      r -= w.weight();
      if (r < 0) {
        return w.step();
      }
    }
    throw new AssertionError(kinds);
  }

  /**
   * The edit {@code step} if it can be made on the model, its subject chosen and kept in {@code
   * live}; else an insert, which always can.
   */
  private static Workload.Step feasible(Workload.Step step, InMemoryTreeStore model, Live live,
      SplittableRandom random) {
    switch (step) {
      case MOVE_LEAF, MOVE_SUBTREE -> {
        String root;
        if (step == Workload.Step.MOVE_LEAF) {
          root = live.pickLeaf(model, random);
        } else {
          int limit = Math.max(4, (int) (4 * Math.sqrt(model.size())));
          String found = live.pickSubtree(model, random, 2, limit);
          root = found != null ? found : live.pickLeaf(model, random);
        }
        String target = live.pickOutside(model, random, root);
        if (target == null) {
          return Workload.Step.INSERT; // nowhere to go
        }
        live.pendingMove = new Move(root, target);
        return step;
      }
      case DELETE -> {
        String found = live.pickSubtree(model, random, 1, 5);
        String root = found != null ? found : live.pickLeaf(model, random);
        if (model.find(root).orElseThrow().parentId() == null) {
          return Workload.Step.INSERT; // never delete a whole tree
        }
        live.pendingDelete = root;
        return step;
      }
      default -> {
        return step;
      }
    }
  }

  /** A move chosen by {@link #feasible}. */
  private record Move(String root, String target) {}

  /** The position that puts {@code id} back where it is now in {@code model}. */
  private static Position positionIn(InMemoryTreeStore model, String id) {
    String parent = model.find(id).orElseThrow().parentId();
    List<String> siblings = parent == null ? model.roots() : model.children(parent);
    int at = siblings.indexOf(id);
    if (at > 0) {
      return Position.after(siblings.get(at - 1));
    }
    return parent == null ? Position.firstRoot() : Position.firstChildOf(parent);
  }

  /** The ids alive in a workload's model, for uniform random picks. */
  private static final class Live {
    private final List<String> ids = new ArrayList<>();
    private final Map<String, Integer> index = new HashMap<>();
    /** The subject of the edit {@link #feasible} just accepted. */
    Move pendingMove;
    String pendingDelete;

    Live(TreeFacts f) {
      for (Node e : f.entries) {
        add(e.id());
      }
    }

    void add(String id) {
      index.put(id, ids.size());
      ids.add(id);
    }

    void remove(String id) {
      int at = index.remove(id);
      String last = ids.remove(ids.size() - 1);
      if (at < ids.size()) {
        ids.set(at, last);
        index.put(last, at);
      }
    }

    String pick(SplittableRandom random) {
      return ids.get(random.nextInt(ids.size()));
    }

    /** A random node with children (any node after a few failed draws). */
    String pickInner(InMemoryTreeStore model, SplittableRandom random) {
      String id = pick(random);
      for (int tries = 0; tries < 50 && model.children(id).isEmpty(); tries++) {
        id = pick(random);
      }
      return id;
    }

    /** A random leaf (any node after a few failed draws). */
    String pickLeaf(InMemoryTreeStore model, SplittableRandom random) {
      String id = pick(random);
      for (int tries = 0; tries < 50 && !model.children(id).isEmpty(); tries++) {
        id = pick(random);
      }
      return id;
    }

    /**
     * A random non-root node whose subtree has {@code min} to {@code max} nodes, or null if a few
     * hundred draws find none.
     */
    String pickSubtree(InMemoryTreeStore model, SplittableRandom random, int min, int max) {
      for (int tries = 0; tries < 200; tries++) {
        String id = pick(random);
        if (model.find(id).orElseThrow().parentId() == null) {
          continue;
        }
        int size = subtreeSize(model, id, max);
        if (size >= min && size <= max) {
          return id;
        }
      }
      return null;
    }

    /** A random node outside the subtree of {@code id} other than its parent, or null. */
    String pickOutside(InMemoryTreeStore model, SplittableRandom random, String id) {
      String parent = model.find(id).orElseThrow().parentId();
      for (int tries = 0; tries < 50; tries++) {
        String target = pick(random);
        if (!target.equals(id) && !target.equals(parent) && !model.isDescendant(target, id)) {
          return target;
        }
      }
      return null;
    }

    /** The size of the subtree of {@code id}, counting no further than {@code cap + 1}. */
    private static int subtreeSize(InMemoryTreeStore model, String id, int cap) {
      int size = 1;
      List<String> frontier = List.of(id);
      while (!frontier.isEmpty() && size <= cap) {
        List<String> next = new ArrayList<>();
        for (String p : frontier) {
          next.addAll(model.children(p));
        }
        size += next.size();
        frontier = next;
      }
      return size;
    }
  }

  // ------------------------------------------------------------------------------- actions

  static Action children(String id) {
    return named("children(" + id + ")", s -> s.children(id).size());
  }

  static Action ancestors(String id) {
    return named("ancestors(" + id + ")", s -> s.ancestors(id).size());
  }

  static Action descendants(String id, int maxDepth) {
    return named("descendants(" + id + ", " + maxDepth + ")",
        s -> s.descendants(id, maxDepth).size());
  }

  static Action insert(String id, Position position, Map<String, Object> attributes) {
    return named("insert(" + id + ", " + position + ")", s -> {
      s.insert(id, position, attributes);
      return 0;
    });
  }

  static Action move(String id, Position position) {
    return named("move(" + id + ", " + position + ")", s -> {
      s.move(id, position);
      return 0;
    });
  }

  static Action delete(String id) {
    return named("delete(" + id + ")", s -> s.delete(id));
  }

  private static Action named(String name, Action action) {
    return new Action() {
      @Override
      public long run(TreeStore store) {
        return action.run(store);
      }

      @Override
      public String toString() {
        return name;
      }
    };
  }
}
