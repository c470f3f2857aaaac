/**
 * The five tree patterns of MongoDB's data-modeling manual as {@link dev.arbor.core.TreeStore}s:
 * open one with {@link dev.arbor.mongo.TreePattern}, configure it with {@link
 * dev.arbor.mongo.TreeOptions}. Only {@code dev.arbor.mongo}, the API, is exported; the stores,
 * their layouts and their protocols are in {@code dev.arbor.mongo.internal} and its subpackages,
 * which are not.
 */
module dev.arbor.mongo {
  requires transitive dev.arbor.core;
  requires transitive org.mongodb.driver.sync.client;
  requires transitive org.mongodb.driver.core;
  requires transitive org.mongodb.bson;
  requires static transitive org.jspecify;
  requires org.slf4j;

  exports dev.arbor.mongo;
}
