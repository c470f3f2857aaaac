package dev.arbor.core;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The equivalence property must be able to fail: a store with a planted bug (moves to {@code
 * firstChildOf} append instead) is caught.
 */
class TreeStorePropertiesSelfTest {

  /** Delegates to the reference but puts a node moved to a first-child position last. */
  private static final class Mutant implements TreeStore {
    private final InMemoryTreeStore delegate = new InMemoryTreeStore();

    @Override public void ensureIndexes() {}
    @Override public void insert(String id, Position p, Map<String, Object> a) {
      delegate.insert(id, p, a);
    }
    @Override public void update(String id, Map<String, ?> set) { delegate.update(id, set); }
    @Override public void move(String id, Position p) {
      if (p instanceof Position.Child c && c.first()) {
        p = Position.lastChildOf(c.parentId());
      }
      delegate.move(id, p);
    }
    @Override public long delete(String id) { return delegate.delete(id); }
    @Override public long delete(String id, Deletion how) { return delegate.delete(id, how); }
    @Override public Optional<Node> find(String id) { return delegate.find(id); }
    @Override public List<String> roots() { return delegate.roots(); }
    @Override public List<String> children(String id) { return delegate.children(id); }
    @Override public List<String> ancestors(String id) { return delegate.ancestors(id); }
    @Override public List<String> descendants(String id, int d) {
      return delegate.descendants(id, d);
    }
    @Override public int depth(String id) { return delegate.depth(id); }
    @Override public boolean isDescendant(String id, String a) {
      return delegate.isDescendant(id, a);
    }
    @Override public long size() { return delegate.size(); }
    @Override public List<Problem> check() { return delegate.check(); }
    @Override public List<Problem> repair() { return delegate.repair(); }
    @Override public void load(Tree tree) { delegate.load(tree); }
  }

  @Test
  void plantedBugIsFound() {
    TreeStoreProperties property = new TreeStoreProperties() {
      @Override
      protected TreeStore newStore() {
        return new Mutant();
      }

      @Override
      protected int examples() {
        return 200;
      }
    };
    assertThrows(AssertionError.class, property::equivalentToTheReference);
  }
}
