package io.dendrite.testsupport;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension that hands tests real servers: declare a parameter of type {@link MySqlTestDatabase},
 * {@link MongoTestDatabase} or {@link MemcachedAddress}. Each test gets a database (or key prefix) of its
 * own, removed after the test. When no server can be had, resolution fails with a message that says how
 * to start one — a test that needs a server never skips.
 */
public final class RealServers implements ParameterResolver {
  private static final ServiceEndpoints ENDPOINTS = ServiceEndpoints.fromSystem();
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(RealServers.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == MySqlTestDatabase.class
        || type == MongoTestDatabase.class
        || type == MemcachedAddress.class
        || type == ZooKeeperAddress.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    try {
      if (type == MySqlTestDatabase.class) {
        return createMySqlDatabase(context);
      }
      if (type == MongoTestDatabase.class) {
        return reserveMongoDatabase(context);
      }
      if (type == ZooKeeperAddress.class) {
        return new ZooKeeperAddress(ENDPOINTS.zookeeper(), UniqueName.of(context, 80));
      }
      return memcachedAddress(context);
    } catch (IllegalStateException e) {
      throw new ParameterResolutionException(e.getMessage(), e);
    } catch (SQLException e) {
      throw new ParameterResolutionException(
          "Could not create a test database on "
              + redact(ENDPOINTS.mysqlUrl())
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private static MySqlTestDatabase createMySqlDatabase(ExtensionContext context)
      throws SQLException {
    String serverUrl = ENDPOINTS.mysqlUrl();
    String name = UniqueName.of(context, 64);
    try (Connection connection = DriverManager.getConnection(serverUrl);
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE DATABASE `" + name + "`");
    }
    context
        .getStore(NAMESPACE)
        .put(
            name,
            (ExtensionContext.Store.CloseableResource)
                () -> {
                  try (Connection connection = DriverManager.getConnection(serverUrl);
                      Statement statement = connection.createStatement()) {
                    statement.execute("DROP DATABASE IF EXISTS `" + name + "`");
                  }
                });
    return new MySqlTestDatabase(withDatabase(serverUrl, name), name);
  }

  private static MongoTestDatabase reserveMongoDatabase(ExtensionContext context) {
    String connectionString = ENDPOINTS.mongoUrl();
    String name = UniqueName.of(context, 60);
    context
        .getStore(NAMESPACE)
        .put(
            name,
            (ExtensionContext.Store.CloseableResource)
                () -> {
                  try (MongoClient client = MongoClients.create(connectionString)) {
                    client.getDatabase(name).drop();
                  }
                });
    return new MongoTestDatabase(connectionString, name);
  }

  private static MemcachedAddress memcachedAddress(ExtensionContext context) {
    String hostAndPort = ENDPOINTS.memcached();
    int colon = hostAndPort.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalStateException(
          ServiceEndpoints.MEMCACHED + " must be host:port, got " + hostAndPort);
    }
    return new MemcachedAddress(
        hostAndPort.substring(0, colon),
        Integer.parseInt(hostAndPort.substring(colon + 1)),
        UniqueName.of(context, 80) + ":");
  }

  /** Replaces the database path of a JDBC URL, keeping its query (credentials, options). */
  static String withDatabase(String jdbcUrl, String database) {
    URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
    String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
    return "jdbc:" + uri.getScheme() + "://" + uri.getRawAuthority() + "/" + database + query;
  }

  private static String redact(String jdbcUrl) {
    return jdbcUrl.replaceAll("password=[^&]*", "password=***");
  }
}
