package io.dendrite.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import com.whalin.MemCached.MemCachedClient;
import com.whalin.MemCached.SockIOPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class MemcachedFixtureIT {

  @Test
  void setGetAppendDeleteThroughTheWhalinClient(MemcachedAddress memcached) {
    String poolName = memcached.keyPrefix();
    SockIOPool pool = SockIOPool.getInstance(poolName);
    pool.setServers(new String[] {memcached.hostAndPort()});
    pool.setFailover(false);
    pool.initialize();
    try {
      MemCachedClient client = new MemCachedClient(poolName);
      String key = memcached.keyPrefix() + "greeting";

      assertThat(client.set(key, "hello")).isTrue();
      assertThat(client.get(key)).isEqualTo("hello");
      assertThat(client.append(key, ", world")).isTrue();
      assertThat(client.get(key)).isEqualTo("hello, world");
      assertThat(client.delete(key)).isTrue();
      assertThat(client.get(key)).isNull();
      assertThat(client.keyExists(key)).isFalse();
    } finally {
      pool.shutDown();
    }
  }
}
