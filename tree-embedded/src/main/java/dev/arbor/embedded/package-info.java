/**
 * A MongoDB server inside the JVM for tests, demos and the command line: {@link
 * dev.arbor.embedded.EmbeddedMongo}, in memory or in a data directory.
 *
 * <p>Parameters and return values are non-null unless documented otherwise.
 */
@NullMarked
package dev.arbor.embedded;

import org.jspecify.annotations.NullMarked;
