package io.dendrite.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ServiceEndpointsTest {

  @Test
  void environmentWinsOverDocker() {
    ServiceEndpoints endpoints =
        new ServiceEndpoints(
            Map.of(
                ServiceEndpoints.MYSQL_URL,
                "jdbc:mysql://h:1/d?user=u",
                ServiceEndpoints.MEMCACHED,
                " h:2 "),
            () -> {
              throw new AssertionError(
                  "Docker must not be asked when the environment names a server");
            });

    assertThat(endpoints.mysqlUrl()).isEqualTo("jdbc:mysql://h:1/d?user=u");
    assertThat(endpoints.memcached()).isEqualTo("h:2");
  }

  @Test
  void withoutEnvironmentOrDockerTheTestFailsAndSaysWhatToRun() {
    ServiceEndpoints endpoints =
        new ServiceEndpoints(Map.of(ServiceEndpoints.MONGO_URL, "  "), () -> false);

    assertThatThrownBy(endpoints::mongoUrl)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("DENDRITE_MONGO_URL")
        .hasMessageContaining("dev/services start");
    assertThatThrownBy(endpoints::mysqlUrl).hasMessageContaining("MySQL");
    assertThatThrownBy(endpoints::memcached).hasMessageContaining("memcached");
  }

  @Test
  void databaseIsReplacedAndCredentialsKept() {
    assertThat(
            RealServers.withDatabase(
                "jdbc:mysql://127.0.0.1:13306/dendrite?user=a&password=b", "t_x"))
        .isEqualTo("jdbc:mysql://127.0.0.1:13306/t_x?user=a&password=b");
    assertThat(RealServers.withDatabase("jdbc:mysql://localhost:3306/test", "t_y"))
        .isEqualTo("jdbc:mysql://localhost:3306/t_y");
  }
}
