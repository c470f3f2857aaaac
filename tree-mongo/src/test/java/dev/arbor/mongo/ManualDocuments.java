package dev.arbor.mongo;

import java.util.Map;

/**
 * The documents of the manual's category tree (MongoDB manual, Data Models §4.2), one pattern each,
 * as the manual writes them, but for one typo: the manual gives MongoDB and dbm {@code parent:
 * "Data"} in the array-of-ancestors example, where it means "Databases".
 */
final class ManualDocuments {
  private ManualDocuments() {}

  /** One JSON document a line, in the manual's insertion order. */
  static final Map<TreePattern, String> AS_WRITTEN = Map.of(
      TreePattern.PARENT_REFERENCES, """
          { _id: "MongoDB", parent: "Databases" }
          { _id: "dbm", parent: "Databases" }
          { _id: "Databases", parent: "Programming" }
          { _id: "Languages", parent: "Programming" }
          { _id: "Programming", parent: "Books" }
          { _id: "Books", parent: null }""",
      TreePattern.CHILD_REFERENCES, """
          { _id: "MongoDB", children: [] }
          { _id: "dbm", children: [] }
          { _id: "Databases", children: [ "MongoDB", "dbm" ] }
          { _id: "Languages", children: [] }
          { _id: "Programming", children: [ "Databases", "Languages" ] }
          { _id: "Books", children: [ "Programming" ] }""",
      TreePattern.ARRAY_OF_ANCESTORS, """
          { _id: "MongoDB", ancestors: [ "Books", "Programming", "Databases" ], parent: "Databases" }
          { _id: "dbm", ancestors: [ "Books", "Programming", "Databases" ], parent: "Databases" }
          { _id: "Databases", ancestors: [ "Books", "Programming" ], parent: "Programming" }
          { _id: "Languages", ancestors: [ "Books", "Programming" ], parent: "Programming" }
          { _id: "Programming", ancestors: [ "Books" ], parent: "Books" }
          { _id: "Books", ancestors: [ ], parent: null }""",
      TreePattern.MATERIALIZED_PATHS, """
          { _id: "Books", path: null }
          { _id: "Programming", path: ",Books," }
          { _id: "Databases", path: ",Books,Programming," }
          { _id: "Languages", path: ",Books,Programming," }
          { _id: "MongoDB", path: ",Books,Programming,Databases," }
          { _id: "dbm", path: ",Books,Programming,Databases," }""",
      TreePattern.NESTED_SETS, """
          { _id: "Books", parent: 0, left: 1, right: 12 }
          { _id: "Programming", parent: "Books", left: 2, right: 11 }
          { _id: "Languages", parent: "Programming", left: 3, right: 4 }
          { _id: "Databases", parent: "Programming", left: 5, right: 10 }
          { _id: "MongoDB", parent: "Databases", left: 6, right: 7 }
          { _id: "dbm", parent: "Databases", left: 8, right: 9 }""");

}
