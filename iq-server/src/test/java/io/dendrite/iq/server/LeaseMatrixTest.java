package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lease compatibility matrix of the reference (§6): one parameterized test per row, one
 * invocation per column, i.e. one test per cell. Connection {@code a} is the requester; connection
 * {@code b} is "the other" holder. "Own" columns give the requester the lease's token and tid.
 */
class LeaseMatrixTest {

  /** What the key already holds before the request. */
  enum Existing {
    NONE,
    I_OTHER,
    I_OWN,
    Q_INV_OTHER,
    Q_REF_OTHER,
    Q_REF_OWN
  }

  private static IqServer server;
  private static final AtomicInteger KEYS = new AtomicInteger();

  private TestConnection a;
  private TestConnection b;
  private String key;
  private String ownTid;
  private String otherTid;
  private long ownToken;
  private long otherToken;

  @BeforeAll
  static void startServer() {
    server = IqServer.start(IqServerConfig.builder().port(0).threads(2).build());
    TestConnection.markersReady(server.port());
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @BeforeEach
  void connect() {
    a = new TestConnection(server.port());
    b = new TestConnection(server.port());
    int n = KEYS.incrementAndGet();
    key = "m" + n;
    ownTid = "TA" + n;
    otherTid = "TB" + n;
  }

  @AfterEach
  void disconnect() {
    a.close();
    b.close();
  }

  /** Puts the column's lease on the key; with {@code value}, the key also holds "v". */
  private void setUp(Existing existing, boolean value) {
    boolean inhibit = existing == Existing.I_OTHER || existing == Existing.I_OWN;
    if (value && !inhibit) {
      assertThat(a.call("set " + key + " 0 0 1\nv")).isEqualTo("STORED\n");
    }
    switch (existing) {
      case NONE -> {}
      case I_OTHER -> otherToken = TestConnection.token(b.call("iqget " + key + " 0"));
      case I_OWN -> ownToken = TestConnection.token(a.call("iqget " + key + " 0"));
      case Q_INV_OTHER ->
          assertThat(b.call("qareg " + key + " " + otherTid)).isEqualTo("LEASE 1\n");
      case Q_REF_OTHER ->
          otherToken = TestConnection.token(b.call("qaread " + key + " 0 " + otherTid));
      case Q_REF_OWN -> ownToken = TestConnection.token(a.call("qaread " + key + " 0 " + ownTid));
    }
    if (value && inhibit) {
      assertThat(a.call("set " + key + " 0 0 1\nv")).isEqualTo("STORED\n");
    }
    assertThat(ownToken).isNotEqualTo(LeaseCommands.HOT_MISS);
    assertThat(otherToken).isNotEqualTo(LeaseCommands.HOT_MISS);
  }

  private boolean own(Existing existing) {
    return existing == Existing.I_OWN || existing == Existing.Q_REF_OWN;
  }

  /** The token the requester sends: its own in "own" columns, otherwise one that matches nothing. */
  private long requesterToken(Existing existing) {
    return own(existing) ? ownToken : 0;
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void iqgetWithValuePresent(Existing existing) {
    setUp(existing, true);
    String reply = a.call("iqget " + key + " " + requesterToken(existing));
    if (existing == Existing.Q_REF_OWN) {
      assertThat(reply).isEqualTo("NOVALUE  0\nEND\n");
    } else {
      assertThat(reply).isEqualTo("VALUE " + key + " 0 0 1\nv\nEND\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void iqgetWithValueAbsent(Existing existing) {
    setUp(existing, false);
    String reply = a.call("iqget " + key + " " + requesterToken(existing));
    switch (existing) {
      case NONE -> {
        assertThat(reply).matches("LVALUE ls:" + key + " 0 0 \\d+\nEND\n");
        assertThat(TestConnection.token(reply)).isNotEqualTo(LeaseCommands.HOT_MISS);
      }
      case I_OWN, Q_REF_OWN -> assertThat(reply).isEqualTo("NOVALUE  0\nEND\n");
      default -> assertThat(reply).isEqualTo("LVALUE ls:" + key + " 0 0 3\nEND\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void iqset(Existing existing) {
    setUp(existing, false);
    long token = own(existing) ? ownToken : 12_345;
    String reply = a.call("iqset " + key + " 0 0 1 " + token + "\nw");
    if (existing == Existing.I_OWN) {
      assertThat(reply).isEqualTo("STORED\n");
      assertThat(a.call("get " + key)).isEqualTo("VALUE " + key + " 0 1\nw\nEND\n");
    } else {
      assertThat(reply).isEqualTo("NOT_STORED\n");
      assertThat(a.call("get " + key)).isEqualTo("END\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void qareg(Existing existing) {
    setUp(existing, true);
    assertThat(a.call("qareg " + key + " " + ownTid)).isEqualTo("LEASE 1\n");
    assertThat(a.call("get " + key)).as("old value still served until dar").contains("\nv\n");
    switch (existing) {
      case NONE -> assertThat(a.call("dar " + ownTid)).isEqualTo("DELETED\n");
      case I_OTHER ->
          assertThat(b.call("iqset " + key + " 0 0 1 " + otherToken + "\nw"))
              .isEqualTo("NOT_STORED\n");
      case I_OWN ->
          assertThat(a.call("iqset " + key + " 0 0 1 " + ownToken + "\nw"))
              .isEqualTo("NOT_STORED\n");
      case Q_INV_OTHER -> {
        // Shared: the other tid's dar leaves this tid's share in place.
        assertThat(b.call("dar " + otherTid)).isEqualTo("DELETED\n");
        assertThat(a.call("iqget " + key + " 0")).isEqualTo("LVALUE ls:" + key + " 0 0 3\nEND\n");
      }
      case Q_REF_OTHER -> {
        assertThat(b.call("swap " + key + " 0 0 1 " + otherToken + " 0\nz")).isEqualTo("INVALID\n");
        assertThat(b.call("commit " + otherTid + " 0")).isEqualTo("OK\n");
        assertThat(a.call("get " + key)).isEqualTo("END\n");
      }
      case Q_REF_OWN ->
          assertThat(a.call("swap " + key + " 0 0 1 " + ownToken + " 0\nz")).isEqualTo("INVALID\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void qaread(Existing existing) {
    setUp(existing, true);
    String reply = a.call("qaread " + key + " " + requesterToken(existing) + " " + ownTid);
    switch (existing) {
      case NONE, I_OWN -> assertThat(reply).matches("LEASE " + key + " 0 0 \\d+ 1\nv\nEND\n");
      case I_OTHER -> {
        assertThat(reply).matches("LEASE " + key + " 0 0 \\d+ 1\nv\nEND\n");
        assertThat(b.call("iqset " + key + " 0 0 1 " + otherToken + "\nw"))
            .isEqualTo("NOT_STORED\n");
      }
      case Q_INV_OTHER, Q_REF_OTHER ->
          assertThat(reply).isEqualTo("LVALUE " + key + " 0 0 3\n\nEND\n");
      case Q_REF_OWN ->
          assertThat(reply).isEqualTo("LEASE " + key + " 0 0 " + ownToken + " 1\nv\nEND\n");
    }
    if (existing == Existing.I_OWN) {
      assertThat(TestConnection.token(reply)).isNotEqualTo(ownToken);
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void iqappend(Existing existing) {
    setUp(existing, true);
    String reply = a.call("iqappend " + key + " 1 " + ownTid + "\nx");
    switch (existing) {
      case Q_INV_OTHER, Q_REF_OTHER -> assertThat(reply).isEqualTo("ABORT\n");
      case Q_REF_OWN -> assertThat(reply).isEqualTo("OK 0 " + ownToken + "\n");
      default -> assertThat(reply).matches("OK 0 \\d+\n");
    }
    if (existing == Existing.I_OTHER) {
      assertThat(b.call("iqset " + key + " 0 0 1 " + otherToken + "\nw")).isEqualTo("NOT_STORED\n");
    }
    if (existing != Existing.Q_INV_OTHER && existing != Existing.Q_REF_OTHER) {
      assertThat(a.call("get " + key))
          .as("readers see the old value until commit")
          .contains("\nv\n");
      assertThat(a.call("commit " + ownTid + " 0")).isEqualTo("OK\n");
      assertThat(a.call("get " + key)).isEqualTo("VALUE " + key + " 0 2\nvx\nEND\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void swap(Existing existing) {
    setUp(existing, true);
    long token = own(existing) ? ownToken : 777;
    String reply = a.call("swap " + key + " 0 0 1 " + token + " 0\nz");
    if (own(existing)) {
      assertThat(reply).isEqualTo("STORED\n");
      assertThat(a.call("get " + key))
          .as("swap keeps the lease; old value served")
          .contains("\nv\n");
    } else {
      assertThat(reply).isEqualTo("INVALID\n");
    }
    if (existing == Existing.Q_REF_OWN) {
      assertThat(a.call("commit " + ownTid + " 0")).isEqualTo("OK\n");
      assertThat(a.call("get " + key)).contains("\nz\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void sar(Existing existing) {
    setUp(existing, true);
    long token = own(existing) ? ownToken : 777;
    String reply = a.call("sar " + key + " 0 0 1 " + token + "\nz");
    if (own(existing)) {
      assertThat(reply).isEqualTo("STORED\n");
      assertThat(a.call("get " + key)).contains("\nz\n");
      assertThat(a.call("iqget " + key + " " + ownToken)).as("lease released").contains("\nz\n");
    } else {
      assertThat(reply).isEqualTo("INVALID\n");
      assertThat(a.call("get " + key)).contains("\nv\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void deleteVoidsTheLease(Existing existing) {
    setUp(existing, true);
    assertThat(a.call("delete " + key)).isEqualTo("DELETED\n");
    switch (existing) {
      case I_OTHER ->
          assertThat(b.call("iqset " + key + " 0 0 1 " + otherToken + "\nw"))
              .isEqualTo("NOT_STORED\n");
      case I_OWN ->
          assertThat(a.call("iqset " + key + " 0 0 1 " + ownToken + "\nw"))
              .isEqualTo("NOT_STORED\n");
      case Q_REF_OTHER ->
          assertThat(b.call("swap " + key + " 0 0 1 " + otherToken + " 0\nw"))
              .isEqualTo("INVALID\n");
      case Q_REF_OWN ->
          assertThat(a.call("swap " + key + " 0 0 1 " + ownToken + " 0\nw")).isEqualTo("INVALID\n");
      default -> {}
    }
    String next = b.call("iqget " + key + " 0");
    assertThat(next).matches("LVALUE ls:" + key + " 0 0 \\d+\nEND\n");
    assertThat(TestConnection.token(next))
        .as("no lease left: the next reader gets one")
        .isNotEqualTo(3);
  }

  @ParameterizedTest
  @EnumSource(Existing.class)
  void plainSetStoresAndLeavesTheLease(Existing existing) {
    setUp(existing, false);
    assertThat(a.call("set " + key + " 0 0 1\nw")).isEqualTo("STORED\n");
    assertThat(a.call("get " + key)).isEqualTo("VALUE " + key + " 0 1\nw\nEND\n");
    switch (existing) {
      case NONE -> assertThat(a.call("qaread " + key + " 0 TX" + key)).startsWith("LEASE " + key);
      case I_OTHER ->
          assertThat(b.call("iqset " + key + " 0 0 1 " + otherToken + "\ny")).isEqualTo("STORED\n");
      case I_OWN ->
          assertThat(a.call("iqset " + key + " 0 0 1 " + ownToken + "\ny")).isEqualTo("STORED\n");
      case Q_INV_OTHER, Q_REF_OTHER ->
          assertThat(a.call("qaread " + key + " 0 TX" + key))
              .isEqualTo("LVALUE " + key + " 0 0 3\n\nEND\n");
      case Q_REF_OWN ->
          assertThat(a.call("swap " + key + " 0 0 1 " + ownToken + " 0\ny")).isEqualTo("STORED\n");
    }
  }
}
