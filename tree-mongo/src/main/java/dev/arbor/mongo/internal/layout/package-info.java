/**
 * The five patterns as layouts (not API): each pattern's fields, documents, plans, reads,
 * check and repair, the sibling ranks, and the walkers of reference patterns.
 */
@NullMarked
package dev.arbor.mongo.internal.layout;

import org.jspecify.annotations.NullMarked;
