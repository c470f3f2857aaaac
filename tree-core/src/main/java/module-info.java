/**
 * Arbor's contract for ordered trees: {@link dev.arbor.core.TreeStore}, its in-memory reference
 * {@link dev.arbor.core.InMemoryTreeStore}, {@link dev.arbor.core.Tree} snapshots, and the
 * nested-JSON format ({@code dev.arbor.core.json}). {@code dev.arbor.core.internal} holds helpers
 * Arbor's stores share and is exported to them only.
 */
@SuppressWarnings("module") // dev.arbor.mongo is built after this module
module dev.arbor.core {
  requires static transitive org.jspecify;
  requires com.fasterxml.jackson.core;

  exports dev.arbor.core;
  exports dev.arbor.core.json;
  exports dev.arbor.core.internal to dev.arbor.mongo;
}
