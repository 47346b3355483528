package io.dendrite.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.zaxxer.hikari.HikariDataSource;
import io.dendrite.coordination.PartitionedDendrite;
import io.dendrite.core.Dendrite;
import io.dendrite.spring.boot.ScoresTable.Score;
import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Proxy;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The starter in an application context against MariaDB and a real IQ server (embedded): Dendrites built as beans,
 * their meters under Micrometer's cache names, health and info, and the shutdown draining write-back; many processes
 * over the real ZooKeeper, TARDIS in failed mode, and the store over MongoDB (FerretDB).
 */
@ExtendWith({RealServers.class, OutputCaptureExtension.class})
class DendriteStarterIT {

  private static ApplicationContextRunner runner(
      EmbeddedIqServers cache, DataSource db, Class<?> application) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DendriteAutoConfiguration.class,
                DendriteMetricsAutoConfiguration.class,
                DendriteActuatorAutoConfiguration.class))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withBean(DataSource.class, () -> db)
        .withUserConfiguration(application)
        .withPropertyValues("dendrite.cache.servers=" + cache.addresses());
  }

  @Configuration(proxyBeanMethods = false)
  static class WritingThrough {
    @Bean
    Dendrite<Integer, Score> scores(Dendrites dendrites, DataSource db) {
      return ScoresTable.writingThrough(dendrites, db);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WritingBack {
    @Bean
    Dendrite<Integer, Score> scores(Dendrites dendrites, DataSource db) {
      return ScoresTable.writingBack(dendrites, db);
    }
  }

  /** Its Dendrite's command is the row's change, applied by whichever data store the application has. */
  @Configuration(proxyBeanMethods = false)
  static class WritingChanges {
    @Bean
    Dendrite<Integer, Score> scores(Dendrites dendrites) {
      return ScoresTable.changingRows(dendrites, (lb, ub) -> List.of());
    }
  }

  @Test
  void gets_are_counted_as_hits_and_misses_and_health_and_info_see_the_servers(
      MySqlTestDatabase database) throws Exception {
    overTable(
        database,
        (cache, db) -> {
          runner(cache, db, WritingThrough.class)
              .withPropertyValues("dendrite.write-policy=write-through")
              .run(
                  context -> {
                    assertThat(context).hasNotFailed();
                    @SuppressWarnings("unchecked")
                    Dendrite<Integer, Score> scores = context.getBean(Dendrite.class);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    assertThat(gets(meters, "miss")).isZero();

                    assertThat(scores.get("byId", 1, 5)).hasSize(5);
                    assertThat(gets(meters, "miss")).as("the first get missed").isEqualTo(1);
                    assertThat(gets(meters, "hit")).isZero();
                    assertThat(scores.get("byId", 1, 5)).hasSize(5);
                    assertThat(gets(meters, "hit")).as("the second get hit").isEqualTo(1);
                    assertThat(gets(meters, "miss")).isEqualTo(1);
                    double putsBefore = count(meters, "cache.puts");
                    scores.write("set", 3, 3, new Score(3, 42));
                    assertThat(count(meters, "cache.puts"))
                        .as("the write refreshed the cached result")
                        .isEqualTo(putsBefore + 1);
                    assertThat(scores.get("byId", 1, 5)).contains(new Score(3, 42));
                    assertThat(meters.find("cache.size").tag("cache", "scores.id").gauges())
                        .isNotEmpty();
                    assertThat(meters.find("cache.evictions").tag("cache", "scores.id").meters())
                        .isNotEmpty();

                    Health health = context.getBean(DendriteHealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails().get("servers").toString()).contains("answers");

                    Info.Builder info = new Info.Builder();
                    context.getBean(DendriteInfoContributor.class).contribute(info);
                    assertThat(info.build().get("dendrite").toString())
                        .contains(cache.addresses())
                        .contains("scores.id")
                        .contains("one process");
                  });
        });
  }

  @Test
  void shutdown_drains_what_write_back_buffered_and_logs_the_counts(
      MySqlTestDatabase database, CapturedOutput output) throws Exception {
    overTable(
        database,
        (cache, db) -> {
          runner(cache, db, WritingBack.class)
              .withPropertyValues(
                  "dendrite.write-policy=write-back",
                  "dendrite.replicas=1",
                  // no drain before the shutdown: what it drains is all there is
                  "dendrite.write-back.drain-delay=1h",
                  "dendrite.write-back.drain-on-close=20s",
                  "dendrite.health.max-buffered-write-age=0s")
              .run(
                  context -> {
                    assertThat(context).hasNotFailed();
                    @SuppressWarnings("unchecked")
                    Dendrite<Integer, Score> scores = context.getBean(Dendrite.class);
                    for (int id = 1; id <= 3; id++) {
                      scores.write("set", id, id, new Score(id, 100 + id));
                    }
                    assertThat(ScoresTable.select(db, 1, 3))
                        .as("buffered in the cache tier, not drained yet")
                        .allMatch(score -> score.points() == 0);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    assertThat(gauge(meters, "dendrite.writeback.pending")).isEqualTo(3);
                    Health health = context.getBean(DendriteHealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails().get("warnings").toString())
                        .contains("dendrite.health.max-buffered-write-age");
                  });
          try (HikariDataSource after =
              dataSource(database)) { // the context closed its DataSource bean
            assertThat(ScoresTable.select(after, 1, 3))
                .as("drained into MariaDB when the context closed")
                .containsExactly(new Score(1, 101), new Score(2, 102), new Score(3, 103));
          }
          assertThat(output.getAll())
              .contains("Closing 1 Dendrites")
              .contains("Dendrite scores.id closed in")
              .contains("write-back had 3 buffered writes")
              .contains("drained 3, left 0");
        });
  }

  @Test
  void manyProcessesServeThroughTheirRangesAndPublishThemAndTheCacheMeters(
      MySqlTestDatabase database, ZooKeeperAddress zk) throws Exception {
    overTable(
        database,
        (cache, db) -> {
          runner(cache, db, WritingThrough.class)
              .withPropertyValues(
                  "dendrite.write-policy=write-through",
                  "dendrite.processes.zookeeper=" + zk.connectString(),
                  "dendrite.processes.service=" + zk.service(),
                  "dendrite.processes.ranges=2",
                  "dendrite.processes.forwarding-loopback-only=true")
              .run(
                  context -> {
                    assertThat(context).hasNotFailed();
                    ManagedDendrite<?, ?> built = context.getBean(Dendrites.class).built().get(0);
                    assertThat(built.dendrite()).isInstanceOf(PartitionedDendrite.class);
                    PartitionedDendrite<?, ?> partitioned =
                        (PartitionedDendrite<?, ?>) built.dendrite();
                    assertThat(partitioned.awaitSettled(1, Duration.ofSeconds(30)))
                        .as("this process alone serves both ranges")
                        .isTrue();
                    @SuppressWarnings("unchecked")
                    Dendrite<Integer, Score> scores = context.getBean(Dendrite.class);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);

                    assertThat(scores.get("byId", 1, 5)).hasSize(5);
                    assertThat(gets(meters, "miss")).as("the owner's miss").isEqualTo(1);
                    scores.write("set", 3, 3, new Score(3, 42));
                    assertThat(scores.get("byId", 1, 5)).contains(new Score(3, 42));
                    assertThat(gets(meters, "hit"))
                        .as("refreshed by the write, then hit")
                        .isEqualTo(1);
                    assertThat(ScoresTable.select(db, 3, 3)).containsExactly(new Score(3, 42));
                    assertThat(count(meters, "cache.puts")).isEqualTo(2);
                    assertThat(gauge(meters, "dendrite.ranges.owned")).isEqualTo(2);

                    Info.Builder info = new Info.Builder();
                    context.getBean(DendriteInfoContributor.class).contribute(info);
                    assertThat(info.build().get("dendrite").toString())
                        .contains("many processes")
                        .contains("scores.id.0")
                        .contains("scores.id.1");
                  });
        });
  }

  /** The database refuses every connection: TARDIS buffers the write, and the health indicator warns. */
  @Test
  void healthWarnsWhileTardisIsInFailedMode() throws Exception {
    DataSource refusing =
        (DataSource)
            Proxy.newProxyInstance(
                DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                  throw new SQLTransientConnectionException("Connection refused (the test's)");
                });
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
      runner(cache, refusing, WritingChanges.class)
          .withPropertyValues("dendrite.tardis.enabled=true", "dendrite.replicas=1")
          .run(
              context -> {
                assertThat(context).hasNotFailed().hasSingleBean(MySqlStore.class);
                @SuppressWarnings("unchecked")
                Dendrite<Integer, Score> scores = context.getBean(Dendrite.class);
                Health before = context.getBean(DendriteHealthIndicator.class).health();
                assertThat(before.getDetails()).doesNotContainKey("warnings");

                scores.write("set", 3, 3, new Score(3, 42));

                Health health = context.getBean(DendriteHealthIndicator.class).health();
                assertThat(health.getStatus())
                    .as("the cache tier still serves")
                    .isEqualTo(Status.UP);
                assertThat(health.getDetails().get("bufferedWrites").toString())
                    .contains("mode=FAILED")
                    .contains("pending=1");
                assertThat(health.getDetails().get("warnings").toString())
                    .contains("scores.id: TARDIS is in failed mode");
                MeterRegistry meters = context.getBean(MeterRegistry.class);
                assertThat(gauge(meters, "dendrite.tardis.mode")).isEqualTo(1);
              });
    }
  }

  @Test
  void theStoreOverTheApplicationsMongoClientWritesToTheDatabaseNamed(MongoTestDatabase database)
      throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        MongoClient own = MongoClients.create(database.connectionString())) {
      MongoCollection<Document> table = own.getDatabase(database.name()).getCollection("scores");
      table.insertOne(new Document("_id", 3).append("points", 0L));
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(DendriteAutoConfiguration.class))
          .withBean(MongoClient.class, () -> MongoClients.create(database.connectionString()))
          .withUserConfiguration(WritingChanges.class)
          .withPropertyValues(
              "dendrite.cache.servers=" + cache.addresses(),
              "dendrite.store.mongo-database=" + database.name(),
              "dendrite.write-policy=write-back",
              "dendrite.replicas=1",
              "dendrite.write-back.drain-delay=1h",
              "dendrite.write-back.drain-on-close=20s")
          .run(
              context -> {
                assertThat(context).hasNotFailed().hasSingleBean(MongoStore.class);
                @SuppressWarnings("unchecked")
                Dendrite<Integer, Score> scores = context.getBean(Dendrite.class);
                scores.write("set", 3, 3, new Score(3, 42));
                assertThat(table.find().first()).as("buffered").containsEntry("points", 0L);
              });
      assertThat(table.find().first())
          .as("the shutdown drained the buffered write through the store, into the database named")
          .containsEntry("_id", 3)
          .containsEntry("points", 42L);
    }
  }

  /** What a test does with the table's database and a cache server. */
  private interface OverTable {
    void run(EmbeddedIqServers cache, HikariDataSource db) throws Exception;
  }

  /** Runs {@code test} over a new IQ server and the scores table (ids 1..10) in {@code database}. */
  private static void overTable(MySqlTestDatabase database, OverTable test) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        HikariDataSource db = dataSource(database)) {
      ScoresTable.create(db, 10);
      test.run(cache, db);
    }
  }

  private static HikariDataSource dataSource(MySqlTestDatabase database) {
    HikariDataSource db = new HikariDataSource();
    db.setJdbcUrl(database.jdbcUrl());
    db.setMaximumPoolSize(4);
    return db;
  }

  private static double gets(MeterRegistry meters, String result) {
    return meters
        .find("cache.gets")
        .tag("cache", "scores.id")
        .tag("result", result)
        .functionCounters()
        .stream()
        .mapToDouble(FunctionCounter::count)
        .sum();
  }

  private static double gauge(MeterRegistry meters, String name) {
    return meters.get(name).tag("cache", "scores.id").gauge().value();
  }

  private static double count(MeterRegistry meters, String name) {
    return meters.find(name).tag("cache", "scores.id").functionCounters().stream()
        .mapToDouble(FunctionCounter::count)
        .sum();
  }
}
