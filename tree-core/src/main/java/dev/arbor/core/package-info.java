/**
 * The Arbor contract: an ordered forest stored somewhere, read and changed through {@link
 * dev.arbor.core.TreeStore}.
 *
 * <p>Start with {@link dev.arbor.core.TreeStore} for the operations and their shared semantics,
 * {@link dev.arbor.core.Position} for where an insert or a move puts a node, and {@link
 * dev.arbor.core.InMemoryTreeStore} for the reference implementation every other store is compared
 * with. {@link dev.arbor.core.Tree} is an immutable snapshot of a whole forest, used for bulk
 * loads, exports and comparisons.
 *
 * <p>Nullness is stated with JSpecify annotations: the package is {@code @NullMarked}, so
 * parameters, return values and components are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.arbor.core;

import org.jspecify.annotations.NullMarked;
