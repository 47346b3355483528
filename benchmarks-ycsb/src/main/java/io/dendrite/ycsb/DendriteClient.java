package io.dendrite.ycsb;

/**
 * YCSB binding {@code io.dendrite.ycsb.DendriteClient}: Dendrite's range-predicate cache over MySQL or MongoDB.
 * A read is the point interval of its record number, a scan of n records from number k the range predicate
 * [k, k + n - 1] (run YCSB with {@code insertorder=ordered}); writes go through Dendrite's write path.
 * Properties: {@code dendrite.db}, {@code dendrite.policy}, {@code dendrite.beta}, {@code dendrite.servers},
 * {@code dendrite.drainthreads}, {@code dendrite.replicas} (see {@link DendriteBackend}), the database's properties
 * (see {@link RecordStore}) and those of {@link InstrumentedDB}.
 */
public final class DendriteClient extends InstrumentedDB {

  @Override
  protected String bindingName() {
    return "dendrite";
  }

  @Override
  RecordBackend openBackend(BindingProperties properties, RecordTable table) {
    return DendriteBackend.open(properties, table);
  }
}
