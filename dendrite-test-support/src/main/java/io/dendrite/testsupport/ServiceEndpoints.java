package io.dendrite.testsupport;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.MongoDBContainer;
import org.testcontainers.containers.MySQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Where the real servers are, decided once per JVM: the environment first, then Testcontainers when a
 * Docker engine answers, otherwise a failure that tells the reader what to run.
 */
final class ServiceEndpoints {
  static final String MYSQL_URL = "DENDRITE_MYSQL_URL";
  static final String MONGO_URL = "DENDRITE_MONGO_URL";
  static final String MEMCACHED = "DENDRITE_MEMCACHED";
  static final String ZOOKEEPER = "DENDRITE_ZOOKEEPER";

  private static final String HOW_TO_START =
      "Start the real servers with `dev/services start` and export their addresses with "
          + "`eval \"$(dev/services env)\"` (or run everything with `dev/test`).";

  private final Map<String, String> environment;
  private final BooleanSupplier dockerAnswers;
  private final Map<String, String> resolved = new HashMap<>();

  /** Endpoints from the process environment, with Testcontainers as the fallback. */
  static ServiceEndpoints fromSystem() {
    return new ServiceEndpoints(System.getenv(), ServiceEndpoints::dockerEngineAnswers);
  }

  ServiceEndpoints(Map<String, String> environment, BooleanSupplier dockerAnswers) {
    this.environment = environment;
    this.dockerAnswers = dockerAnswers;
  }

  /** A JDBC URL (credentials in its query) of a database the user may create databases from. */
  String mysqlUrl() {
    return endpoint(
        MYSQL_URL,
        "MySQL",
        () -> {
          MySQLContainer<?> mysql =
              new MySQLContainer<>(DockerImageName.parse("mysql:8.0"))
                  .withUsername("root")
                  .withPassword("dendrite");
          mysql.start();
          return mysql.getJdbcUrl() + "?user=root&password=dendrite";
        });
  }

  /** A MongoDB connection string without a database name. */
  String mongoUrl() {
    return endpoint(
        MONGO_URL,
        "MongoDB",
        () -> {
          MongoDBContainer mongo = new MongoDBContainer(DockerImageName.parse("mongo:7.0"));
          mongo.start();
          return mongo.getConnectionString() + "/";
        });
  }

  /** {@code host:port} of a ZooKeeper server. */
  String zookeeper() {
    return endpoint(
        ZOOKEEPER,
        "ZooKeeper",
        () -> {
          GenericContainer<?> container =
              new GenericContainer<>(DockerImageName.parse("zookeeper:3.9")).withExposedPorts(2181);
          container.start();
          return container.getHost() + ":" + container.getMappedPort(2181);
        });
  }

  /** {@code host:port} of a stock memcached. */
  String memcached() {
    return endpoint(
        MEMCACHED,
        "memcached",
        () -> {
          GenericContainer<?> container =
              new GenericContainer<>(DockerImageName.parse("memcached:1.6"))
                  .withExposedPorts(11211);
          container.start();
          return container.getHost() + ":" + container.getMappedPort(11211);
        });
  }

  /** Decided once per variable: later tests of the JVM share the server (and any container). */
  private synchronized String endpoint(
      String variable, String server, Supplier<String> startContainer) {
    return resolved.computeIfAbsent(
        variable, v -> fromEnvironmentOrDocker(v, server, startContainer));
  }

  private String fromEnvironmentOrDocker(
      String variable, String server, Supplier<String> startContainer) {
    Optional<String> configured =
        Optional.ofNullable(environment.get(variable)).map(String::trim).filter(s -> !s.isEmpty());
    if (configured.isPresent()) {
      return configured.get();
    }
    if (dockerAnswers.getAsBoolean()) {
      return startContainer.get();
    }
    throw new IllegalStateException(
        "This test needs a real "
            + server
            + " server, but "
            + variable
            + " is not set and no Docker engine answers. "
            + HOW_TO_START);
  }

  private static boolean dockerEngineAnswers() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
  }
}
