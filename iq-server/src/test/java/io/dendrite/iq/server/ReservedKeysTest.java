package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With {@code --pin-users}, the keys under write-back's prefixes ({@code --reserved-prefixes}) are the pin users'
 * whether an item is there or not, pinned or not: a stranger's {@code set BW:...} would be drained into the
 * database as a buffered write (issue 37, case 3). Fences are the fence users', and no fence rises past the
 * largest epoch an owner can have.
 */
class ReservedKeysTest {

  private static final String REFUSED =
      "CLIENT_ERROR user ops may not change reserved key BW:users:i1 (prefix BW: is reserved for the pin users)\n";

  /** Every command that could create, change, lease or remove {@code BW:users:i1}, with what else it needs. */
  private static final List<String> CHANGES =
      List.of(
          "set BW:users:i1 0 0 1\nx",
          "add BW:users:i1 0 0 1\nx",
          "replace BW:users:i1 0 0 1\nx",
          "append BW:users:i1 0 0 1\nx",
          "prepend BW:users:i1 0 0 1\nx",
          "cas BW:users:i1 0 0 1 1\nx",
          "incr BW:users:i1 1",
          "decr BW:users:i1 1",
          "delete BW:users:i1",
          "touch BW:users:i1 100",
          "unpin BW:users:i1",
          "mappend BW:users:i1 0 1\nx",
          "qareg BW:users:i1 T",
          "qaread BW:users:i1 0 T",
          "iqappend BW:users:i1 1 T\nx",
          "iqincr BW:users:i1 1 T",
          "oqread S BW:users:i1",
          "oqwrite S BW:users:i1 0 0 1\nx",
          "oqadd S BW:users:i1 0 0 1\nx",
          "oqappend S BW:users:i1 1\nx",
          "oqincr S BW:users:i1 1",
          "oqreg S BW:users:i1");

  private IqServer server;

  @BeforeEach
  void start() {
    server = start(IqServerConfig.builder().pinUsers(Set.of("app")));
  }

  private static IqServer start(IqServerConfig.Builder settings) {
    return IqServer.start(
        settings
            .port(0)
            .credentials(Credentials.of(Map.of("app", "s3cret", "ops", "0ps", "owner", "0wn")))
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
  void anotherUserCannotCreateAnItemUnderAReservedPrefix() {
    try (TestConnection ops = logIn("ops", "0ps");
        TestConnection app = logIn("app", "s3cret")) {
      assertThat(ops.call("set BW:users:i1 0 0 5\nforge")).isEqualTo(REFUSED);
      assertThat(ops.call("get BW:users:i1")).as("nothing was stored").isEqualTo("END\n");
      assertThat(ops.call("set bw-not-reserved 0 0 1\nx"))
          .as("the negative control: other keys are anyone's")
          .isEqualTo("STORED\n");
      for (String prefix : IqServerConfig.WRITE_BACK_PREFIXES) {
        assertThat(ops.call("set " + prefix + "x 0 0 1\nx"))
            .as(prefix)
            .startsWith(
                "CLIENT_ERROR user ops may not change reserved key " + prefix + "x (prefix ");
      }
      assertThat(app.call("set BW:users:i1 0 0 3 1\nbuf"))
          .as("the pin user may")
          .isEqualTo("STORED\n");
    }
  }

  @Test
  void everyCommandThatWouldChangeAReservedKeyIsRefusedPresentOrNot() {
    try (TestConnection ops = logIn("ops", "0ps");
        TestConnection app = logIn("app", "s3cret")) {
      for (String change : CHANGES) {
        if (change.startsWith("incr")
            || change.startsWith("decr")
            || change.startsWith("touch")
            || change.startsWith("unpin")
            || change.startsWith("append")
            || change.startsWith("prepend")
            || change.startsWith("cas")
            || change.startsWith("replace")) {
          continue; // these need an item first: below
        }
        assertThat(ops.call(change)).as("absent: " + change).isEqualTo(REFUSED);
        assertThat(ops.call("get BW:users:i1")).as(change).isEqualTo("END\n");
      }
      // An unpinned item under the prefix (the pin user may make one): still the pin users'.
      assertThat(app.call("set BW:users:i1 0 0 1\n7")).isEqualTo("STORED\n");
      for (String change : CHANGES) {
        assertThat(ops.call(change)).as("present: " + change).isEqualTo(REFUSED);
      }
      assertThat(app.call("get BW:users:i1")).isEqualTo("VALUE BW:users:i1 0 1\n7\nEND\n");
    }
  }

  @Test
  void anotherUsersFillAndFlushLeaveReservedKeys() {
    try (TestConnection ops = logIn("ops", "0ps");
        TestConnection app = logIn("app", "s3cret")) {
      long token = TestConnection.token(ops.call("iqget BW:users:i2 0"));
      assertThat(ops.call("iqset BW:users:i2 0 0 5 " + token + "\nforge"))
          .as("a read's I lease is granted, its fill is refused")
          .isEqualTo(REFUSED.replace("i1", "i2"));
      assertThat(app.call("set Lock:BW:users:i1 0 0 1\nL")).isEqualTo("STORED\n");
      assertThat(app.call("set cached 0 0 1\nc")).isEqualTo("STORED\n");
      assertThat(ops.call("flush_all")).isEqualTo("OK\n");
      assertThat(app.call("get Lock:BW:users:i1"))
          .as("write-back's unpinned lock outlives a stranger's flush")
          .isEqualTo("VALUE Lock:BW:users:i1 0 1\nL\nEND\n");
      assertThat(app.call("get cached")).as("other unpinned items go").isEqualTo("END\n");
      assertThat(app.call("flush_all")).isEqualTo("OK\n");
      assertThat(app.call("get Lock:BW:users:i1"))
          .as("a pin user's flush drops it")
          .isEqualTo("END\n");
    }
  }

  @Test
  void theServerSaysWhetherAnItemIsPinnedAndNoClientCanClaimIt() {
    try (TestConnection ops = logIn("ops", "0ps");
        TestConnection app = logIn("app", "s3cret")) {
      assertThat(ops.call("set mine 2147483653 0 1\nx")).isEqualTo("STORED\n");
      assertThat(ops.call("get mine"))
          .as("bit 31 is the server's")
          .isEqualTo("VALUE mine 5 1\nx\nEND\n");
      assertThat(app.call("set pinned 5 0 1 1\np")).isEqualTo("STORED\n");
      assertThat(app.call("get pinned")).isEqualTo("VALUE pinned 2147483653 1\np\nEND\n");
      assertThat(app.call("unpin pinned")).isEqualTo("OK\n");
      assertThat(app.call("get pinned")).isEqualTo("VALUE pinned 5 1\np\nEND\n");
    }
  }

  @Test
  void withoutPinUsersEveryUserMayAsBefore() {
    server.close();
    server = start(IqServerConfig.builder());
    try (TestConnection ops = logIn("ops", "0ps")) {
      assertThat(ops.call("set BW:users:i1 0 0 1 1\nx")).isEqualTo("STORED\n");
      assertThat(ops.call("delete BW:users:i1")).isEqualTo("DELETED\n");
      assertThat(ops.call("fence Fence:r 1")).isEqualTo("FENCED 1\n");
    }
  }

  @Test
  void fencesHaveTheirOwnUsers() {
    server.close();
    server = start(IqServerConfig.builder().pinUsers(Set.of("app")).fenceUsers(Set.of("owner")));
    try (TestConnection app = logIn("app", "s3cret");
        TestConnection owner = logIn("owner", "0wn")) {
      assertThat(app.call("fence Fence:r 1"))
          .as("a pin user that is not a fence user")
          .isEqualTo("CLIENT_ERROR user app may not raise fences\n");
      assertThat(owner.call("fence Fence:r 1")).isEqualTo("FENCED 1\n");
      assertThat(owner.call("set Fence:r 0 0 1\nx"))
          .as("a fence user is not a pin user")
          .startsWith("CLIENT_ERROR user owner may not change reserved key Fence:r");
    }
  }

  @Test
  void noFenceRisesPastTheLargestEpochAnOwnerCanHave() {
    try (TestConnection app = logIn("app", "s3cret")) {
      assertThat(app.call("fence Fence:r 3")).isEqualTo("FENCED 3\n");
      assertThat(app.call("fence Fence:r 9223372036854775807"))
          .isEqualTo(
              "CLIENT_ERROR fence epoch 9223372036854775807 is beyond 2147483648, the largest an owner can"
                  + " have; fence Fence:r is unchanged\n");
      assertThat(app.call("fence Fence:r 18446744073709551615"))
          .as("an unsigned 64-bit epoch too")
          .startsWith("CLIENT_ERROR fence epoch 18446744073709551615 is beyond");
      assertThat(app.call("fence Fence:r 2147483648"))
          .as("the bound itself")
          .isEqualTo("FENCED 2147483648\n");
      assertThat(app.call("fence Fence:s 4")).isEqualTo("FENCED 4\n");
      assertThat(app.call("fenced Fence:s 4\nset k 0 0 1\nv")).isEqualTo("STORED\n");
    }
  }
}
