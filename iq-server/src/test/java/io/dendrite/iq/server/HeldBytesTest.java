package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HeldBytesTest {

  @Test
  void aChargeRefusedByTheParentTakesNothingFromTheChild() {
    HeldBytes user = new HeldBytes("user u", 100, null);
    HeldBytes connection = new HeldBytes("this connection", 80, user);
    HeldBytes other = new HeldBytes("this connection", 80, user);
    other.charge(50);
    assertThatThrownBy(() -> connection.charge(60))
        .isInstanceOf(HeldBytes.LimitException.class)
        .hasMessage("user u holds too much: 50 bytes of leases and staged values, limit 100");
    assertThat(connection.held()).isZero();
    assertThat(user.held()).isEqualTo(50);
  }

  @Test
  void aChargeCreditsBackWhatItTookOnceAndNothingAfterItsRecordIsGone() {
    HeldBytes user = new HeldBytes("user u", 1_000, null);
    HeldBytes connection = new HeldBytes("this connection", 1_000, user);
    HeldBytes.Charge charge = new HeldBytes.Charge(connection);
    charge.add(300);
    charge.subtract(100);
    assertThat(user.held()).isEqualTo(200);
    charge.releaseAll();
    charge.releaseAll();
    // A command that still held the record after another connection ended it.
    charge.add(50);
    charge.addAlways(50);
    assertThat(connection.held()).isZero();
    assertThat(user.held()).isZero();
  }
}
