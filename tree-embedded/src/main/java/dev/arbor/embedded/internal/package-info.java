/**
 * Not API: hooks of {@link dev.arbor.embedded.EmbeddedMongo} for Arbor's own command line, which
 * may change or go in any release. A modular build does not export this package.
 *
 * <p>Parameters and return values are non-null unless documented otherwise.
 */
@NullMarked
package dev.arbor.embedded.internal;

import org.jspecify.annotations.NullMarked;
