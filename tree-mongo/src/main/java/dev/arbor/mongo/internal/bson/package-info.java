/**
 * Node documents (not API): ids and their types, field and attribute names, scopes,
 * validators, query helpers, and sizes measured in encoded BSON before anything is written.
 */
@NullMarked
package dev.arbor.mongo.internal.bson;

import org.jspecify.annotations.NullMarked;
