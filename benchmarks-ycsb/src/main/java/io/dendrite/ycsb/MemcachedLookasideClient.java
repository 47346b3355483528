package io.dendrite.ycsb;

/**
 * YCSB binding {@code io.dendrite.ycsb.MemcachedLookasideClient}: the classic look-aside pattern without leases
 * over memcached, MySQL behind it (see {@link LookasideBackend}); the baseline that shows the stale reads leases
 * prevent. Properties: {@code memcached.servers}, {@code memcached.keyprefix}, {@code memcached.connections}, the
 * MySQL properties of {@link RecordStore} and those of {@link InstrumentedDB}.
 */
public final class MemcachedLookasideClient extends InstrumentedDB {

  @Override
  protected String bindingName() {
    return "memcached-lookaside";
  }

  @Override
  RecordBackend openBackend(BindingProperties properties, RecordTable table) {
    return LookasideBackend.open(properties, table);
  }
}
