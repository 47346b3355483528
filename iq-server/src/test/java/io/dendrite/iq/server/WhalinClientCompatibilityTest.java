package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.whalin.MemCached.MemCachedClient;
import com.whalin.MemCached.SockIOPool;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** A stock memcached client (Whalin, text protocol) works unchanged. */
class WhalinClientCompatibilityTest {

  /** Runs {@code test} with a Whalin client, through a pool of its own name, on a new server. */
  private static void withClient(String poolName, Consumer<MemCachedClient> test) {
    try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build())) {
      SockIOPool pool = SockIOPool.getInstance(poolName);
      pool.setServers(new String[] {"127.0.0.1:" + server.port()});
      pool.setInitConn(1);
      pool.initialize();
      try {
        test.accept(new MemCachedClient(poolName, true, false));
      } finally {
        pool.shutDown();
      }
    }
  }

  @Test
  void setGetAppendDeleteIncr() {
    withClient(
        "whalin-test",
        client -> {
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
        });
  }

  @Test
  void itsKeyListingFindsEveryKeyThroughStatsItemsAndCachedump() {
    withClient(
        "whalin-dump",
        client -> {
          assertThat(client.set("one", "1")).isTrue();
          assertThat(client.set("two", "22")).isTrue();
          // How memcached tools list keys: the slab classes stats items names, then a cachedump of
          // each.
          Set<Integer> slabClasses = new TreeSet<>();
          for (Map<String, String> items : client.statsItems().values()) {
            items.keySet().forEach(name -> slabClasses.add(Integer.parseInt(name.split(":")[1])));
          }
          assertThat(slabClasses).containsExactly(StatsCommand.ALL_ITEMS_CLASS);
          Set<String> keys = new TreeSet<>();
          for (int slabClass : slabClasses) {
            client
                .statsCacheDump(slabClass, 0)
                .values()
                .forEach(dump -> keys.addAll(dump.keySet()));
          }
          assertThat(keys).containsExactly("one", "two");
        });
  }
}
