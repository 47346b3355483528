package io.dendrite.examples.scores;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

/**
 * The service end to end, as its README's session runs it: HTTP range reads and an update through the Dendrite, the
 * update in MariaDB (dev/services'), the cache's meters and health on the actuator endpoints. The cache server is a
 * real IQ server, embedded in the test's JVM.
 */
@ExtendWith(RealServers.class)
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    // The test fixtures bring MongoDB's driver onto the test class path; the service has none.
    properties =
        "spring.autoconfigure.exclude=org.springframework.boot.autoconfigure.mongo.MongoAutoConfiguration")
class ScoresServiceIT {
  private static MySqlTestDatabase database;
  private static EmbeddedIqServers cache;

  @BeforeAll
  static void servers(MySqlTestDatabase testDatabase) {
    database = testDatabase;
    cache = EmbeddedIqServers.start(1);
  }

  @AfterAll
  static void stopCache() {
    cache.close();
  }

  @DynamicPropertySource
  static void serverAddresses(DynamicPropertyRegistry properties) {
    properties.add("spring.datasource.url", () -> database.jdbcUrl());
    properties.add("dendrite.cache.servers", () -> cache.addresses());
  }

  @Value("${local.server.port}")
  int port;

  @Test
  void aRangeReadAndAnUpdateThroughDendriteReachMariaDb() throws SQLException {
    RestClient http = RestClient.create("http://127.0.0.1:" + port);
    ParameterizedTypeReference<java.util.List<Score>> scores =
        new ParameterizedTypeReference<>() {};

    assertThat(http.get().uri("/scores?from=2&to=4").retrieve().body(scores))
        .as("a miss: queried from MariaDB, seeded by schema.sql")
        .containsExactly(new Score(2, 0), new Score(3, 0), new Score(4, 0));

    assertThat(
            http.put()
                .uri("/scores/3")
                .contentType(MediaType.APPLICATION_JSON)
                .body(Map.of("points", 42))
                .retrieve()
                .toBodilessEntity()
                .getStatusCode())
        .isEqualTo(HttpStatus.NO_CONTENT);
    assertThat(pointsInMariaDb(3)).as("written through to MariaDB").isEqualTo(42);

    assertThat(http.get().uri("/scores?from=2&to=4").retrieve().body(scores))
        .as("a hit, with the update")
        .containsExactly(new Score(2, 0), new Score(3, 42), new Score(4, 0));

    String hits =
        http.get()
            .uri("/actuator/metrics/cache.gets?tag=result:hit&tag=cache:scores.id")
            .retrieve()
            .body(String.class);
    assertThat(hits).contains("\"value\":1.0");
    String health = http.get().uri("/actuator/health").retrieve().body(String.class);
    assertThat(health).contains("\"dendrite\":{\"status\":\"UP\"");
  }

  private static long pointsInMariaDb(int id) throws SQLException {
    try (Connection connection = database.connect();
        ResultSet row =
            connection
                .createStatement()
                .executeQuery("SELECT points FROM scores WHERE id = " + id)) {
      assertThat(row.next()).isTrue();
      return row.getLong(1);
    }
  }
}
