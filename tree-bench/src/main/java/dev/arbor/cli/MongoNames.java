package dev.arbor.cli;

/**
 * What MongoDB accepts as database and collection names, checked before connecting so that a bad
 * name is reported in words with exit code 2 instead of as the driver's or the server's error.
 */
final class MongoNames {
  /** Characters MongoDB does not allow in a database name. */
  private static final String DATABASE_FORBIDDEN = "/\\. \"$*<>:|?";

  private MongoNames() {}

  /** Why {@code name} cannot name a collection, or null if it can. */
  static String collectionProblem(String name) {
    if (name.isEmpty()) {
      return "a collection name cannot be empty";
    }
    if (name.indexOf('\0') >= 0) {
      return "a collection name cannot contain NUL";
    }
    if (name.contains("$")) {
      return "a collection name cannot contain '$'";
    }
    if (name.startsWith("system.")) {
      return "names starting with 'system.' belong to MongoDB";
    }
    return null;
  }

  /** Why {@code name} cannot name a database, or null if it can. */
  static String databaseProblem(String name) {
    if (name.isEmpty()) {
      return "a database name cannot be empty";
    }
    for (char c : name.toCharArray()) {
      if (DATABASE_FORBIDDEN.indexOf(c) >= 0 || c == '\0') {
        return "a database name cannot contain " + (c == '\0' ? "NUL" : c == ' ' ? "spaces"
            : "'" + c + "'") + " (nor any of " + DATABASE_FORBIDDEN + ")";
      }
    }
    if (name.length() >= 64) {
      return "a database name must be shorter than 64 characters";
    }
    return null;
  }
}
