package dev.arbor.core.example;

import dev.arbor.core.Deletion;
import dev.arbor.core.InMemoryTreeStore;
import dev.arbor.core.Node;
import dev.arbor.core.Position;
import dev.arbor.core.Problem;
import dev.arbor.core.Tree;
import dev.arbor.core.TreeStore;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * "A store of your own", as docs/testing.md has a user write one: a class outside Arbor's packages
 * that implements only {@link TreeStore}'s abstract methods (here by handing them to the
 * reference) and inherits every default method. {@link MyTreeStoreTest} runs the shared suites on
 * it exactly as the page shows, so the page's example compiles, and the suites are proven usable
 * from a user's package and against the interface's default methods.
 */
final class MyTreeStore implements TreeStore {
  private final TreeStore delegate = new InMemoryTreeStore();

  @Override public void ensureIndexes() { delegate.ensureIndexes(); }

  @Override
  public void insert(String id, Position position, Map<String, @Nullable Object> attributes) {
    delegate.insert(id, position, attributes);
  }

  @Override public void update(String id, Map<String, ? extends @Nullable Object> set) {
    delegate.update(id, set);
  }

  @Override public void move(String id, Position position) { delegate.move(id, position); }

  @Override public long delete(String id) { return delegate.delete(id); }

  @Override public long delete(String id, Deletion how) { return delegate.delete(id, how); }

  @Override public Optional<Node> find(String id) { return delegate.find(id); }

  @Override public List<String> roots() { return delegate.roots(); }

  @Override public List<String> children(String id) { return delegate.children(id); }

  @Override public List<String> ancestors(String id) { return delegate.ancestors(id); }

  @Override public List<String> descendants(String id, int maxDepth) {
    return delegate.descendants(id, maxDepth);
  }

  @Override public int depth(String id) { return delegate.depth(id); }

  @Override public boolean isDescendant(String id, String ancestorId) {
    return delegate.isDescendant(id, ancestorId);
  }

  @Override public long size() { return delegate.size(); }

  @Override public List<Problem> check() { return delegate.check(); }

  @Override public List<Problem> repair() { return delegate.repair(); }

  @Override public void load(Tree tree) { delegate.load(tree); }
}
