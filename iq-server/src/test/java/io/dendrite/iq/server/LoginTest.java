package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With credentials, a connection is served only after memcached's login: a first set of "<user> <password>". */
class LoginTest {
  private static final List<String> EVERY_COMMAND_LINE =
      List.of(
          "get k",
          "gets k",
          "add k 0 0 1\nv",
          "delete k",
          "touch k 0",
          "incr k 1",
          "flush_all",
          "unpin k",
          "stats",
          "stats cachedump 1 0",
          "cache_memlimit 64",
          "version",
          "mappend k 1 1\nv",
          "iqget k 0",
          "qaread k 0 T",
          "qareg k T",
          "commit T 0",
          "release T",
          "ciget S k 0",
          "oqread S k",
          "dcommit S",
          "dabort S");

  private IqServer server;

  @BeforeEach
  void start() {
    server =
        IqServer.start(
            IqServerConfig.builder()
                .port(0)
                .credentials(Credentials.of(Map.of("app", "s3cret")))
                .build());
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void withoutALoginEveryCommandIsRefused() {
    try (TestConnection c = new TestConnection(server.port())) {
      for (String line : EVERY_COMMAND_LINE) {
        assertThat(c.call(line)).as(line).isEqualTo("CLIENT_ERROR unauthenticated\n");
      }
      // A set is the login itself: one that is not a user's is a failed login.
      assertThat(c.call("set k 0 0 1\nv")).isEqualTo("CLIENT_ERROR authentication failure\n");
    }
  }

  @Test
  void aLoginWithTheRightPasswordServesTheConnection() {
    try (TestConnection c = new TestConnection(server.port())) {
      assertThat(c.call("set anything 0 0 10\napp s3cret")).isEqualTo("STORED\n");
      assertThat(c.call("set k 0 0 1\nv")).isEqualTo("STORED\n");
      assertThat(c.call("get k")).isEqualTo("VALUE k 0 1\nv\nEND\n");
      assertThat(c.call("get anything")).as("the login stores nothing").isEqualTo("END\n");
    }
  }

  @Test
  void aWrongPasswordOrUserIsRefusedAndTheConnectionClosed() {
    for (String login : List.of("app wrong!", "bob s3cret", "app", "app s3cret "))
      try (TestConnection c = new TestConnection(server.port())) {
        assertThat(c.call("set x 0 0 " + login.length() + "\n" + login))
            .as(login)
            .isEqualTo("CLIENT_ERROR authentication failure\n");
        assertThatThrownBy(c::readLine)
            .as("closed after a failed login")
            .isInstanceOf(UncheckedIOException.class);
      }
  }

  @Test
  void anAuthFileListsUserColonPasswordPerLine(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("auth");
    Files.writeString(file, "# users\napp:s3cret\n\nops:pa:ss\n");
    Credentials read = Credentials.read(file);
    assertThat(read.required()).isTrue();
    assertThat(read.userOf("ops pa:ss".getBytes())).isEqualTo("ops");
    assertThat(read.userOf("app s3cret".getBytes())).isEqualTo("app");
    assertThat(read.toString()).doesNotContain("s3cret").contains("2 user");
    Files.writeString(file, "app\n");
    assertThatThrownBy(() -> Credentials.read(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("line 1 is not user:password");
  }
}
