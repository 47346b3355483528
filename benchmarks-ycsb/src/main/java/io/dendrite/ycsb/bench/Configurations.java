package io.dendrite.ycsb.bench;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The systems dev/bench knows by name: each database alone, Dendrite over it per policy, TARDIS over it, memcached
 * look-aside.
 */
public final class Configurations {

  /** The YCSB table (MySQL) or collection (MongoDB) every binding uses. */
  public static final String TABLE = "usertable";

  public static final String MONGO_DATABASE = "ycsb";

  private static final List<String> POLICIES =
      List.of("write-around", "write-through", "write-back");

  private Configurations() {}

  /**
   * Every configuration over MySQL (when {@code mysqlUrl} is given) and over MongoDB (when
   * {@code mongoUrl} is given); null skips that database.
   *
   * @param servicesDir where {@code dev/services} keeps the pid files of the MariaDB and FerretDB it started
   */
  public static List<Configuration> standard(String mysqlUrl, String mongoUrl, Path servicesDir) {
    List<Configuration> all = new ArrayList<>();
    if (mysqlUrl != null) {
      Database mysql =
          new Database(
              "mysql",
              () -> dropMySqlTable(mysqlUrl),
              Optional.of(servicesDir.resolve("mariadb/mariadbd.pid")),
              Optional.of(new MySqlStatusCounters(mysqlUrl)));
      Map<String, String> props = Map.of("mysql.url", mysqlUrl, "table", TABLE);
      all.add(
          new Configuration(
              "mysql",
              mysql,
              Configuration.ALONE,
              "io.dendrite.ycsb.MySqlClient",
              props,
              Configuration.Cache.NONE));
      addDendrite(all, mysql, props);
      all.add(tardis(mysql, props));
      all.add(
          new Configuration(
              "mysql-lookaside",
              mysql,
              "look-aside",
              "io.dendrite.ycsb.MemcachedLookasideClient",
              with(props, "dendrite.db", "mysql"),
              Configuration.Cache.MEMCACHED));
    }
    if (mongoUrl != null) {
      Database mongo =
          new Database(
              "mongodb",
              () -> dropMongoCollection(mongoUrl),
              Optional.of(servicesDir.resolve("ferretdb/ferretdb.pid")),
              Optional.of(new MongoStatusCounters(mongoUrl)));
      Map<String, String> props =
          Map.of("mongodb.url", mongoUrl, "mongodb.database", MONGO_DATABASE, "table", TABLE);
      all.add(
          new Configuration(
              "mongodb",
              mongo,
              Configuration.ALONE,
              "io.dendrite.ycsb.MongoDbClient",
              props,
              Configuration.Cache.NONE));
      addDendrite(all, mongo, props);
      all.add(tardis(mongo, props));
    }
    return all;
  }

  /**
   * The configurations a plain {@code dev/bench} runs: every standard one but TARDIS, which is for outages
   * ({@code --outage-at}) and runs when named.
   */
  public static List<Configuration> byDefault(List<Configuration> known) {
    return known.stream().filter(c -> !c.policy().equals(TARDIS)).toList();
  }

  /** The series name of the TARDIS configurations. */
  public static final String TARDIS = "tardis";

  /**
   * TARDIS over the database, technique TARDIS unless {@code -p tardis.technique=...}, with ω = 211 partitions as
   * the thesis' §4.6.3 (its AR workers come from {@code -p tardis.arworkers}, default 4).
   */
  private static Configuration tardis(Database db, Map<String, String> dbProps) {
    return new Configuration(
        db.name() + "-" + TARDIS,
        db,
        TARDIS,
        "io.dendrite.ycsb.TardisClient",
        with(with(dbProps, "dendrite.db", db.name()), "tardis.partitions", "211"),
        Configuration.Cache.IQ_SERVERS);
  }

  private static void addDendrite(
      List<Configuration> all, Database db, Map<String, String> dbProps) {
    for (String policy : POLICIES) {
      Map<String, String> props =
          with(with(dbProps, "dendrite.db", db.name()), "dendrite.policy", policy);
      all.add(
          new Configuration(
              db.name() + "-" + policy,
              db,
              policy,
              "io.dendrite.ycsb.DendriteClient",
              props,
              Configuration.Cache.IQ_SERVERS));
    }
  }

  private static Map<String, String> with(Map<String, String> props, String key, String value) {
    Map<String, String> copy = new LinkedHashMap<>(props);
    copy.put(key, value);
    return copy;
  }

  private static void dropMySqlTable(String url) throws Exception {
    try (Connection c = DriverManager.getConnection(url);
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + TABLE);
    }
  }

  private static void dropMongoCollection(String url) {
    try (MongoClient client = MongoClients.create(url)) {
      client.getDatabase(MONGO_DATABASE).getCollection(TABLE).drop();
    }
  }
}
