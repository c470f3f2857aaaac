/**
 * The {@code arbor} command line: {@link dev.arbor.cli.Arbor} and its subcommands {@code import},
 * {@code export}, {@code convert}, {@code check} and {@code repair}, which move trees between
 * nested-JSON files ({@link dev.arbor.core.json.TreeJson}) and MongoDB collections in any of the
 * five patterns ({@link dev.arbor.mongo.TreePattern}), and {@code doctor}, which checks Arbor
 * against a server ({@link dev.arbor.mongo.Doctor}); the benchmarks {@code bench}, {@code scale}
 * and {@code scope} come from {@code dev.arbor.bench}, the connection and the messages from
 * {@code dev.arbor.tools}.
 *
 * <p>Parameters and return values are non-null unless documented otherwise.
 */
package dev.arbor.cli;
