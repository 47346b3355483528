/**
 * The MongoDB data store of write-back and TARDIS ({@code MongoStore}). Its own module so that only an application
 * on MongoDB gets the MongoDB driver.
 */
module io.dendrite.store.mongodb {
  requires transitive io.dendrite.writeback;
  requires org.mongodb.bson;
  requires org.mongodb.driver.core;
  requires org.mongodb.driver.sync.client;

  exports io.dendrite.store.mongodb;
}
