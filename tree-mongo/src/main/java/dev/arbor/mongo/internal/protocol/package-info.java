/**
 * The change protocols (not API): the fenced lock and journal ({@link
 * dev.arbor.mongo.internal.protocol.TreeLock} and its parts), Arbor's own transactions and the
 * caller's, the step type planners write, and the read context they read through.
 */
@NullMarked
package dev.arbor.mongo.internal.protocol;

import org.jspecify.annotations.NullMarked;
