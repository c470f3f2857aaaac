package dev.arbor.mongo.internal.doctor;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import java.util.Random;
import org.bson.Document;

/**
 * Where {@link Doctor} works on the caller's server: its client, the caller's database, and the
 * one collection the doctor reads or writes, {@code arbor_doctor_<random>}, emptied before each
 * check and dropped at the end. Checks that need clients of their own (writers, a holder whose
 * client is closed) open them with the caller's settings and reach the same collection.
 */
public final class DoctorScratch {
  private final MongoClientSettings settings;
  private final MongoClient client;
  private final MongoDatabase database;
  private final String name;

  /** A scratch collection of a random name in {@code database}, reached through {@code client}. */
  public DoctorScratch(MongoClientSettings settings, MongoClient client, String database) {
    this.settings = settings;
    this.client = client;
    this.database = client.getDatabase(database);
    this.name = "arbor_doctor_" + Long.toHexString(new Random().nextLong() & 0xffffffffffL);
  }

  /** The doctor's client, made with the caller's settings. */
  MongoClient client() {
    return client;
  }

  /** The caller's database, which holds the scratch collection. */
  MongoDatabase database() {
    return database;
  }

  /** The scratch collection's name. */
  String name() {
    return name;
  }

  /** The scratch collection as {@code database.name}, for the report. */
  public String namespace() {
    return database.getName() + "." + name;
  }

  /** The scratch collection, dropped and empty. */
  MongoCollection<Document> fresh() {
    MongoCollection<Document> c = database.getCollection(name);
    c.drop();
    return c;
  }

  /** A new client with the caller's settings; the caller closes it. */
  MongoClient newClient() {
    return MongoClients.create(settings);
  }

  /** The scratch collection reached through {@code own}, a client of {@link #newClient()}. */
  MongoCollection<Document> collection(MongoClient own) {
    return own.getDatabase(database.getName()).getCollection(name);
  }

  /** Drops the scratch collection: nothing the doctor wrote is left. */
  public void drop() {
    database.getCollection(name).drop();
  }
}
