package io.dendrite.ycsb;

/**
 * YCSB binding {@code io.dendrite.ycsb.TardisClient}: records as documents through TARDIS (write-through, and writes
 * keep being acknowledged while the database is down) over MySQL or MongoDB. Properties: {@code dendrite.db},
 * {@code dendrite.servers}, {@code tardis.technique}, {@code tardis.arworkers}, {@code tardis.alpha}, {@code
 * tardis.partitions}, {@code tardis.replicas} (see {@link TardisBackend}), the database's properties (see {@link
 * RecordStore}; {@code db.timeoutms} defaults to 1 000 here) and those of {@link InstrumentedDB}.
 */
public final class TardisClient extends InstrumentedDB {

  @Override
  protected String bindingName() {
    return "tardis";
  }

  @Override
  RecordBackend openBackend(BindingProperties properties, RecordTable table) {
    return TardisBackend.open(properties, table);
  }
}
