package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The session (C/O) lease rules of the reference (§6, "Session family"), one test per rule. */
class SessionRulesTest {

  private static IqServer server;
  private static final AtomicInteger KEYS = new AtomicInteger();

  private TestConnection a;
  private TestConnection b;
  private String key;
  private String s1;
  private String s2;

  @BeforeAll
  static void startServer() {
    server = IqServer.start(IqServerConfig.builder().port(0).build());
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
    key = "s" + n;
    s1 = "S1-" + n;
    s2 = "S2-" + n;
    assertThat(a.call("set " + key + " 0 0 2\nab")).isEqualTo("STORED\n");
  }

  @AfterEach
  void disconnect() {
    a.close();
    b.close();
  }

  @Test
  void cAndCAreShared() {
    assertThat(a.call("ciget " + s1 + " " + key + " 0"))
        .isEqualTo("VALUE " + key + " 0 2\nab\nEND\n");
    assertThat(b.call("ciget " + s2 + " " + key + " 0"))
        .isEqualTo("VALUE " + key + " 0 2\nab\nEND\n");
    assertThat(a.call("validate " + s1)).isEqualTo("OK\n");
    assertThat(b.call("validate " + s2)).isEqualTo("OK\n");
  }

  @Test
  void anORequestAbortsTheCHolders() {
    assertThat(a.call("ciget " + s1 + " " + key + " 0")).startsWith("VALUE");
    assertThat(b.call("oqread " + s2 + " " + key)).isEqualTo("VALUE " + key + " 0 2\nab\nEND\n");
    assertThat(a.call("validate " + s1)).isEqualTo("ABORT\n");
    assertThat(b.call("validate " + s2)).isEqualTo("OK\n");
  }

  @Test
  void oAgainstAnotherSessionsOAbortsTheRequester() {
    assertThat(a.call("oqread " + s1 + " " + key)).startsWith("VALUE");
    assertThat(b.call("oqread " + s2 + " " + key)).isEqualTo("ABORT\n");
    assertThat(a.call("validate " + s1)).isEqualTo("OK\n");
  }

  @Test
  void cAgainstAnotherSessionsOAborts() {
    assertThat(a.call("oqread " + s1 + " " + key)).startsWith("VALUE");
    assertThat(b.call("ciget " + s2 + " " + key + " 0")).isEqualTo("ABORT\n");
  }

  @Test
  void cAgainstAQLeaseAborts() {
    assertThat(a.call("qareg " + key + " T" + key)).isEqualTo("LEASE 1\n");
    assertThat(b.call("ciget " + s2 + " " + key + " 0")).isEqualTo("ABORT\n");
  }

  @Test
  void cAgainstSomeoneElsesILeaseRetries() {
    assertThat(a.call("delete " + key)).isEqualTo("DELETED\n");
    assertThat(a.call("iqget " + key + " 0")).matches("LVALUE ls:" + key + " 0 0 \\d+\nEND\n");
    assertThat(b.call("ciget " + s2 + " " + key + " 0")).isEqualTo("RETRY\n");
  }
}
