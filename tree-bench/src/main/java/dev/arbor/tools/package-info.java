/**
 * What the {@code arbor} command line ({@code dev.arbor.cli}) and its benchmarks ({@code
 * dev.arbor.bench}) share: the one way to reach a server ({@link dev.arbor.tools.ServerConnection}:
 * a URI, or an embedded server in this process), the one meter on a client's commands ({@link
 * dev.arbor.tools.CommandMeter}), and one-line messages ({@link dev.arbor.tools.Errors}).
 *
 * <p>The dependencies run one way: {@code cli} uses {@code bench} (its benchmark subcommands) and
 * this package; {@code bench} uses this package only; this package uses neither.
 *
 * <p>Parameters and return values are non-null unless documented otherwise.
 */
package dev.arbor.tools;
