/**
 * The checks of {@link dev.arbor.mongo.Doctor} (not API): each capability Arbor uses,
 * run against a scratch collection of the user's server.
 */
@NullMarked
package dev.arbor.mongo.internal.doctor;

import org.jspecify.annotations.NullMarked;
