/**
 * Helpers Arbor's own modules share; not part of the API (the module exports this package to
 * {@code dev.arbor.mongo} only).
 */
@NullMarked
package dev.arbor.core.internal;

import org.jspecify.annotations.NullMarked;
