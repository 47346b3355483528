package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What one logged-in user may do to another's: tids and sids are each user's own, and with {@code --pin-users}
 * pinned items (write-back's buffered writes) can be changed only by those users.
 */
class ClientRightsTest {

  /** Every command that could change, lease or remove the pinned item {@code bw}, with what else it needs. */
  private static final List<String> CHANGES_OF_BW =
      List.of(
          "set bw 0 0 1\nx",
          "add bw 0 0 1\nx",
          "replace bw 0 0 1\nx",
          "append bw 0 0 1\nx",
          "prepend bw 0 0 1\nx",
          "cas bw 0 0 1 1\nx",
          "incr bw 1",
          "decr bw 1",
          "delete bw",
          "touch bw 100",
          "unpin bw",
          "mappend bw 0 1\nx",
          "qareg bw T",
          "qaread bw 0 T",
          "iqappend bw 1 T\nx",
          "iqincr bw 1 T",
          "oqread S bw",
          "oqwrite S bw 0 0 1\nx",
          "oqappend S bw 1\nx",
          "oqreg S bw");

  private IqServer server;

  @BeforeEach
  void start() {
    server =
        IqServer.start(
            IqServerConfig.builder()
                .port(0)
                .credentials(Credentials.of(Map.of("app", "s3cret", "ops", "0ps")))
                .pinUsers(Set.of("app"))
                .build());
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private TestConnection logIn(String user, String password) {
    return TestConnection.loggedIn(server.port(), user, password);
  }

  @Test
  void anotherUserCannotEndATransactionOrSessionByItsName() {
    try (TestConnection app = logIn("app", "s3cret");
        TestConnection ops = logIn("ops", "0ps")) {
      long token = TestConnection.token(app.call("qaread k 0 T"));
      assertThat(app.call("oqread S s")).startsWith("NOVALUE");

      assertThat(ops.call("release T")).as("ops's T is not app's").isEqualTo("NOT_FOUND\n");
      assertThat(ops.call("commit T 0")).isEqualTo("NOT_FOUND\n");
      assertThat(ops.call("dabort S")).isEqualTo("NOT_FOUND\n");
      assertThat(ops.call("dcommit S")).isEqualTo("NOT_FOUND\n");

      assertThat(app.call("swap k 0 0 1 " + token + "\nv")).isEqualTo("STORED\n");
      assertThat(app.call("commit T 0")).as("app's lease was still its own").isEqualTo("OK\n");
      assertThat(app.call("get k")).isEqualTo("VALUE k 0 1\nv\nEND\n");
      assertThat(app.call("dcommit S")).isEqualTo("OK\n");
    }
  }

  @Test
  void onlyAPinUserMayChangeOrLeaseAPinnedItem() {
    try (TestConnection app = logIn("app", "s3cret");
        TestConnection ops = logIn("ops", "0ps")) {
      assertThat(app.call("set bw 0 0 3 1\nbuf")).isEqualTo("STORED\n");
      for (String change : CHANGES_OF_BW) {
        assertThat(ops.call(change))
            .as(change)
            .isEqualTo("CLIENT_ERROR user ops may not change pinned item bw\n");
      }
      assertThat(ops.call("flush_all")).isEqualTo("OK\n");
      assertThat(ops.call("get bw"))
          .as("reading is allowed")
          .isEqualTo("VALUE bw 2147483648 3\nbuf\nEND\n");
      assertThat(ops.call("set mine 0 0 1 1\nx"))
          .isEqualTo("CLIENT_ERROR user ops may not pin items\n");
      assertThat(ops.call("set mine 0 0 1\nx"))
          .as("unpinned items are anyone's")
          .isEqualTo("STORED\n");

      assertThat(app.call("get bw")).isEqualTo("VALUE bw 2147483648 3\nbuf\nEND\n");
      assertThat(app.call("delete bw")).as("the pin user may").isEqualTo("DELETED\n");
    }
  }

  @Test
  void aPinnedItemMadeUnderAnotherUsersLeaseOutlivesThatUsersCommit() {
    try (TestConnection app = logIn("app", "s3cret");
        TestConnection ops = logIn("ops", "0ps")) {
      assertThat(ops.call("qareg k T")).isEqualTo("LEASE 1\n");
      assertThat(app.call("set k 0 0 3 1\nbuf")).isEqualTo("STORED\n");
      assertThat(ops.call("dar T")).isEqualTo("DELETED\n");
      assertThat(ops.call("qareg j U")).isEqualTo("LEASE 1\n");
      assertThat(app.call("set j 0 0 3 1\nbuf")).isEqualTo("STORED\n");
      assertThat(ops.call("commit U 0")).isEqualTo("OK\n");
      assertThat(app.call("get k")).isEqualTo("VALUE k 2147483648 3\nbuf\nEND\n");
      assertThat(app.call("get j")).isEqualTo("VALUE j 2147483648 3\nbuf\nEND\n");
    }
  }

  @Test
  void pinUsersMustBeUsersOfTheCredentials() {
    assertThatThrownBy(
            () ->
                IqServerConfig.builder()
                    .credentials(Credentials.of(Map.of("app", "s3cret")))
                    .pinUsers(Set.of("writer"))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("writer");
    assertThatThrownBy(() -> IqServerConfig.builder().pinUsers(Set.of("writer")).build())
        .isInstanceOf(IllegalArgumentException.class);
  }
}
