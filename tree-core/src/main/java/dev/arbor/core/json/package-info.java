/**
 * The nested-JSON tree format: a whole forest as one JSON array of nodes, each node an object with
 * its {@code id}, its {@code attributes} and its {@code children}, siblings in order.
 *
 * <p>Start with {@link dev.arbor.core.json.TreeJson}: it describes the format and reads and writes
 * whole {@link dev.arbor.core.Tree}s; {@link dev.arbor.core.json.TreeJsonReader} and {@link
 * dev.arbor.core.json.TreeJsonWriter} do the same one node at a time. Format errors are {@link
 * dev.arbor.core.json.TreeJsonException}s naming the line and column.
 *
 * <p>Nullness is stated with JSpecify annotations: the package is {@code @NullMarked}, so
 * parameters, return values and components are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.arbor.core.json;

import org.jspecify.annotations.NullMarked;
