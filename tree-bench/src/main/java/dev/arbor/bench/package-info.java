/**
 * The benchmarks of the {@code arbor} command line. {@code arbor bench} measures the five tree
 * patterns of {@link dev.arbor.mongo.TreePattern} side by side on generated trees, or on the tree
 * of a file ({@code --tree}), and recommends one per workload; {@code arbor scale} measures how
 * each scales with the tree's size; {@code arbor scope} measures writers on scoped trees of one
 * collection.
 *
 * <p>Start with the commands ({@link dev.arbor.bench.BenchCommand}, {@link
 * dev.arbor.bench.ScaleCommand}, {@link dev.arbor.bench.ScopeCommand}: the options); the runners,
 * the generated shapes, the measured operations and the reports are package-private. This package
 * uses {@code dev.arbor.tools} (the server, the meter) and never {@code dev.arbor.cli}, which
 * uses it.
 *
 * <p>Parameters and return values are non-null unless documented otherwise.
 */
package dev.arbor.bench;
