package io.dendrite.iq.endtoend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.server.Credentials;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** IqClient logs every connection in first when told to; a refused login is a clear error. */
class LoginIT {

  @Test
  void aClientWithTheRightLoginIsServedOneWithoutOrWithAWrongOneIsRefused() {
    try (IqServer server =
        IqServer.start(
            IqServerConfig.builder()
                .port(0)
                .credentials(Credentials.of(Map.of("app", "s3cret")))
                .build())) {
      String address = "127.0.0.1:" + server.port();
      try (IqClient client =
          IqClient.builder()
              .servers(address)
              .connectionsPerServer(2)
              .login("app", "s3cret")
              .build()) {
        assertThat(client.set("k", bytes("v"))).isEqualTo(Outcome.OK);
        assertThat(client.get("k")).map(CacheValue::text).hasValue("v");
        assertThat(client.read("miss")).isInstanceOf(ReadResult.Leased.class);
      }
      try (IqClient anonymous = IqClient.builder().servers(address).build()) {
        assertThatThrownBy(() -> anonymous.get("k"))
            .isInstanceOf(IqException.class)
            .hasMessageContaining("unauthenticated");
      }
      try (IqClient wrong = IqClient.builder().servers(address).login("app", "guess").build()) {
        assertThatThrownBy(() -> wrong.get("k"))
            .isInstanceOf(IqException.class)
            .hasMessageContaining("login to " + address + " as app was refused")
            .hasMessageNotContaining("guess");
      }
    }
  }

  @Test
  void aLoginSentToAServerThatRequiresNoneStoresNothingReadable() {
    try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build());
        IqClient client =
            IqClient.builder()
                .servers("127.0.0.1:" + server.port())
                .login("app", "s3cret")
                .build()) {
      assertThat(client.set("k", bytes("v"))).isEqualTo(Outcome.OK);
      assertThat(client.get("dendrite-login")).isEmpty();
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
