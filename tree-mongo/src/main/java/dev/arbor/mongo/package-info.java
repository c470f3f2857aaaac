/**
 * The five tree patterns of the MongoDB manual as {@link dev.arbor.core.TreeStore}s. Open one with
 * {@link dev.arbor.mongo.TreePattern#open}.
 *
 * <p>Nullness is stated with JSpecify annotations: the package is {@code @NullMarked}, so
 * parameters, return values and components are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.arbor.mongo;

import org.jspecify.annotations.NullMarked;
