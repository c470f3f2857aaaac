/**
 * {@code arbor bench}: measures the five tree patterns of {@link dev.arbor.mongo.TreePattern} side
 * by side on generated trees, or on the tree of a file ({@code --tree}), and recommends one per
 * workload.
 *
 * <p>Start with {@link dev.arbor.bench.BenchCommand} (the options); the runner, the generated
 * shapes, the measured operations and the reports are package-private.
 *
 * <p>Parameters and return values are non-null unless documented otherwise.
 */
package dev.arbor.bench;
