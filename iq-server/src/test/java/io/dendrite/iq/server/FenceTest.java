package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Fences: a guarded command runs only at the fence's epoch, so an old owner changes nothing once a new one fenced. */
class FenceTest {
  private IqServer server;

  @BeforeEach
  void start() {
    server = IqServer.start(IqServerConfig.builder().port(0).build());
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void aGuardedCommandRunsOnlyAtTheFencesEpoch() {
    try (TestConnection owner = new TestConnection(server.port());
        TestConnection old = new TestConnection(server.port())) {
      assertThat(old.call("fenced Fence:r 3\nset k 0 0 1\nv"))
          .as("no fence here yet: refused")
          .isEqualTo("FENCED_OUT 0\n");
      assertThat(owner.call("fence Fence:r 3")).isEqualTo("FENCED 3\n");
      assertThat(old.call("fenced Fence:r 3\nset k 0 0 3\nold")).isEqualTo("STORED\n");

      assertThat(owner.call("fence Fence:r 4")).isEqualTo("FENCED 4\n");
      assertThat(old.call("fenced Fence:r 3\nset k 0 0 5\nstale")).isEqualTo("FENCED_OUT 4\n");
      assertThat(old.call("fenced Fence:r 3\ndelete k noreply"))
          .as("refused even with noreply")
          .isEqualTo("FENCED_OUT 4\n");
      assertThat(owner.call("fenced Fence:r 4\nget k")).isEqualTo("VALUE k 0 3\nold\nEND\n");

      assertThat(owner.call("fence Fence:r 2"))
          .as("a fence never goes down")
          .isEqualTo("FENCED 4\n");
      assertThat(owner.call("set unguarded 0 0 1\nx"))
          .as("unguarded commands are as before")
          .isEqualTo("STORED\n");
    }
  }

  /**
   * An owner killed while it held Q leases kept the keys quarantined for the lease lifetime after another process
   * took its range over, so the new owner's writes waited or gave up: raising the fence now voids what was leased
   * under older epochs, and only that.
   */
  @Test
  void raisingAFenceVoidsTheLeasesGrantedUnderOlderEpochs() {
    try (TestConnection old = new TestConnection(server.port());
        TestConnection owner = new TestConnection(server.port())) {
      old.call("fence Fence:r 1");
      old.call("fence Fence:s 1");
      for (String key : new String[] {"refreshed", "invalidated", "unguarded", "elsewhere"}) {
        old.call("set " + key + " 0 0 3\nold");
      }
      assertThat(old.call("fenced Fence:r 1\nqaread refreshed 0 T1"))
          .startsWith("LEASE refreshed ");
      assertThat(old.call("fenced Fence:r 1\nqareg invalidated T1")).isEqualTo("LEASE 1\n");
      assertThat(old.call("qaread unguarded 0 T2")).startsWith("LEASE unguarded ");
      assertThat(old.call("fenced Fence:s 1\nqaread elsewhere 0 T3"))
          .startsWith("LEASE elsewhere ");
      assertThat(owner.call("qaread refreshed 0 U1"))
          .as("held by the old owner")
          .isEqualTo("LVALUE refreshed 0 0 3\n\nEND\n");

      assertThat(owner.call("fence Fence:r 2")).isEqualTo("FENCED 2\n");

      assertThat(owner.call("get refreshed"))
          .as(
              "its value goes, as when the lease lapses: the old owner may have written the data store"
                  + " without committing")
          .isEqualTo("END\n");
      assertThat(owner.call("fenced Fence:r 2\nqaread refreshed 0 U1"))
          .as("the old owner's Q-ref lease went with its epoch: granted, on no value")
          .matches("LVALUE refreshed 0 [01] [1-9][0-9]{4,}\n\nEND\n");
      assertThat(owner.call("get invalidated"))
          .as("a Q-inv lease takes the value it was about to invalidate, as when it lapses")
          .isEqualTo("END\n");
      assertThat(owner.call("qaread unguarded 0 U2"))
          .as("an unguarded lease stays")
          .isEqualTo("LVALUE unguarded 0 0 3\n\nEND\n");
      assertThat(owner.call("qaread elsewhere 0 U3"))
          .as("a lease under another fence stays")
          .isEqualTo("LVALUE elsewhere 0 0 3\n\nEND\n");
      assertThat(owner.call("stats")).contains("STAT leases_voided 2\n");
    }
  }

  @Test
  void aMalformedGuardRefusesTheCommandItGuards() {
    try (TestConnection c = new TestConnection(server.port())) {
      c.call("fence Fence:r 1");
      assertThat(c.call("fenced Fence:r notanumber\nset k 0 0 1\nv"))
          .startsWith("CLIENT_ERROR bad fence guard");
      assertThat(c.call("fenced Fence:r\nset k 0 0 1\nv"))
          .startsWith("CLIENT_ERROR bad fence guard");
      assertThat(c.call("get k")).as("neither set ran").isEqualTo("END\n");
      assertThat(c.call("fenced Fence:r 1\nset k 0 0 1\nv")).isEqualTo("STORED\n");
      assertThat(c.call("stats")).contains("STAT curr_fences 1\n");
    }
  }

  @Test
  void onlyAPinUserMayRaiseAFence() {
    server.close();
    server =
        IqServer.start(
            IqServerConfig.builder()
                .port(0)
                .credentials(Credentials.of(Map.of("app", "s3cret", "ops", "0ps")))
                .pinUsers(Set.of("app"))
                .build());
    try (TestConnection ops = TestConnection.loggedIn(server.port(), "ops", "0ps");
        TestConnection app = TestConnection.loggedIn(server.port(), "app", "s3cret")) {
      assertThat(ops.call("fence Fence:r 99"))
          .isEqualTo("CLIENT_ERROR user ops may not raise fences\n");
      assertThat(app.call("fence Fence:r 1")).isEqualTo("FENCED 1\n");
    }
  }
}
