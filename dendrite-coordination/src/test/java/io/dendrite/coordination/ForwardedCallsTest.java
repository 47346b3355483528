package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.DataStoreException;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.DendriteBusyException;
import io.dendrite.iq.client.IqException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ForwardedCallsTest {

  @Test
  void aCallAndItsRowsComeBackAsSent() {
    byte[] command = {1, 2, 3};
    ForwardedCalls.Call call =
        ForwardedCalls.readCall(
            ForwardedCalls.call(new ForwardedCalls.Call("set", "-5", "7", command)));
    assertThat(call.name()).isEqualTo("set");
    assertThat(call.lower()).isEqualTo("-5");
    assertThat(call.upper()).isEqualTo("7");
    assertThat(call.command()).containsExactly(1, 2, 3);

    List<byte[]> rows =
        ForwardedCalls.readRows(ForwardedCalls.rows(List.of(text("a"), text(""))), "p");
    assertThat(rows).hasSize(2);
    assertThat(new String(rows.get(0), StandardCharsets.UTF_8)).isEqualTo("a");
    ForwardedCalls.readDone(ForwardedCalls.done(), "p");
  }

  @Test
  void theOwnersFailureIsThrownAgainAsTheSameKind() {
    assertThatThrownBy(() -> readFailure(new DataStoreUnavailableException("down", null)))
        .isInstanceOf(DataStoreUnavailableException.class)
        .hasMessageContaining("owner p1")
        .hasMessageContaining("down");
    assertThatThrownBy(() -> readFailure(new DataStoreException("refused", null)))
        .isExactlyInstanceOf(DataStoreException.class);
    assertThatThrownBy(() -> readFailure(new DendriteBusyException("leases", null)))
        .isInstanceOf(DendriteBusyException.class);
    assertThatThrownBy(() -> readFailure(new IllegalArgumentException("bad")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> readFailure(new IqException("could not lock k within PT10S")))
        .isExactlyInstanceOf(IqException.class)
        .hasMessageContaining("could not lock k");
    assertThatThrownBy(() -> readFailure(new UnsupportedOperationException("odd")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("odd");
  }

  @Test
  void malformedMessagesAreRefusedWithAClearError() {
    assertThatThrownBy(() -> ForwardedCalls.readCall(new byte[] {0, 5, 'a'}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed forwarded message");
    byte[] lying = ForwardedCalls.rows(List.of(text("abc")));
    lying[lying.length - 4] = 99; // the row's length now passes the end
    assertThatThrownBy(() -> ForwardedCalls.readRows(lying, "p"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static void readFailure(RuntimeException failure) {
    ForwardedCalls.readDone(ForwardedCalls.failure(failure), "p1");
  }

  private static byte[] text(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
