package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.whalin.MemCached.MemCachedClient;
import com.whalin.MemCached.SockIOPool;
import org.junit.jupiter.api.Test;

/** A stock memcached client (Whalin, text protocol) works unchanged. */
class WhalinClientCompatibilityTest {

  @Test
  void setGetAppendDeleteIncr() {
    try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build())) {
      SockIOPool pool = SockIOPool.getInstance("whalin-test");
      pool.setServers(new String[] {"127.0.0.1:" + server.port()});
      pool.setInitConn(1);
      pool.initialize();
      try {
        MemCachedClient client = new MemCachedClient("whalin-test", true, false);
        assertThat(client.set("greeting", "hello")).isTrue();
        assertThat(client.get("greeting")).isEqualTo("hello");
        assertThat(client.append("greeting", " world")).isTrue();
        assertThat(client.get("greeting")).isEqualTo("hello world");
        assertThat(client.delete("greeting")).isTrue();
        assertThat(client.get("greeting")).isNull();
        // storeCounter writes a binary long, which memcached cannot increment either: store text.
        assertThat(client.set("hits", "5")).isTrue();
        assertThat(client.incr("hits", 3)).isEqualTo(8);
        assertThat(client.decr("hits", 10)).isEqualTo(0);
        assertThat(client.add("greeting", "again")).isTrue();
        assertThat(client.add("greeting", "twice")).isFalse();
      } finally {
        pool.shutDown();
      }
    }
  }
}
