package io.dendrite.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dendrite.core.Dendrite;
import io.dendrite.spring.boot.ScoresTable.Score;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import javax.sql.DataSource;
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
 * their meters under Micrometer's cache names, health and info, and the shutdown draining write-back.
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

  @Test
  void gets_are_counted_as_hits_and_misses_and_health_and_info_see_the_servers(
      MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        HikariDataSource db = dataSource(database)) {
      ScoresTable.create(db, 10);
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
    }
  }

  @Test
  void shutdown_drains_what_write_back_buffered_and_logs_the_counts(
      MySqlTestDatabase database, CapturedOutput output) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1);
        HikariDataSource db = dataSource(database)) {
      ScoresTable.create(db, 10);
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
                assertThat(
                        meters
                            .get("dendrite.writeback.pending")
                            .tag("cache", "scores.id")
                            .gauge()
                            .value())
                    .isEqualTo(3);
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

  private static double count(MeterRegistry meters, String name) {
    return meters.find(name).tag("cache", "scores.id").functionCounters().stream()
        .mapToDouble(FunctionCounter::count)
        .sum();
  }
}
