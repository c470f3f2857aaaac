/**
 * The machinery behind {@link dev.arbor.mongo.TreePattern}'s stores, not part of Arbor's API (the
 * module does not export it; what is public in it is public only because another of its packages or
 * the tests use it): the one store class, its changes, loads and streams, and the server's
 * capabilities. Its subpackages hold the protocols ({@code protocol}), the pattern layouts ({@code
 * layout}), reads and checks ({@code read}), node documents and their sizes ({@code bson}) and the
 * doctor's checks ({@code doctor}); docs/architecture.md shows how a change flows through them.
 */
@NullMarked
package dev.arbor.mongo.internal;

import org.jspecify.annotations.NullMarked;
