package dev.arbor.mongo.internal.read;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The structure of one stored node as a store decodes it: its id, its parent (null for a root),
 * its order among its siblings, and its attributes (empty where the caller did not read them).
 */
public record Row(String id, @Nullable String parent, long order,
    Map<String, @Nullable Object> attributes) {}
