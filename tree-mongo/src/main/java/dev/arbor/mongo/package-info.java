/**
 * The five tree patterns of the MongoDB manual as {@link dev.arbor.core.TreeStore}s. Open one with
 * {@link dev.arbor.mongo.TreePattern#open}.
 *
 * <p>Parameters and return values are non-null unless documented otherwise.
 */
package dev.arbor.mongo;
