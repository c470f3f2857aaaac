/**
 * Reads and checks shared by every layout (not API): node data reads, preorder streams over
 * cursors, client-side assembly of trees, and {@code check()} and {@code repair()}.
 */
@NullMarked
package dev.arbor.mongo.internal.read;

import org.jspecify.annotations.NullMarked;
