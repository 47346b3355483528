package io.dendrite.writeback.bench;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RangeCache;
import io.dendrite.core.RowCodec;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.document.DocumentCommand;
import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.document.RangeWriteBack;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one write-back update costs the application process, with nothing else in the way: Dendrite over range
 * write-back over an embedded IQ server on loopback, a YCSB*-shaped update (ten {@code $set}s of 100-character
 * strings on a random one of 20 000 documents), one drain thread applying to a data store that does nothing. So the
 * figures are the client's and the cache server's work per update, its drain included; run with {@code -prof gc} for
 * the bytes allocated per update, which do not depend on how busy the machine is.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx1g")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class WriteBackUpdateBenchmark {
  private static final int DOCUMENTS = 20_000;
  private static final int FIELDS = 10;

  private IqServer server;
  private IqClient cache;
  private DocumentWriteBack engine;
  private RangeWriteBack<Long> buffer;
  private RangeCache<Long, Long> dendrite;
  private final AtomicLong applied = new AtomicLong();

  /** Rows are never read here: the attribute is the row. */
  private static final RowCodec<Long, Long> ROW =
      new RowCodec<>() {
        @Override
        public Long attributeOf(Long row) {
          return row;
        }

        @Override
        public Object identityOf(Long row) {
          return row;
        }

        @Override
        public byte[] encode(Long row) {
          return Long.toString(row).getBytes(StandardCharsets.US_ASCII);
        }

        @Override
        public Long decode(byte[] bytes) {
          return Long.parseLong(new String(bytes, StandardCharsets.US_ASCII));
        }
      };

  /** A data store that counts what it is given and keeps nothing. */
  private final DataStore nowhere =
      new DataStore() {
        @Override
        public void apply(List<EntityChanges> batch) {
          applied.addAndGet(batch.size());
        }

        @Override
        public Optional<Entity> read(EntityKey key) {
          return Optional.empty();
        }

        @Override
        public List<Entity> readRange(
            String collection, String field, Object lowerBound, Object upperBound) {
          return List.of();
        }

        @Override
        public void close() {}
      };

  @Setup(Level.Trial)
  public void start() {
    server = IqServer.start(IqServerConfig.builder().port(0).memoryBytes(512L << 20).build());
    cache = IqClient.builder().servers("127.0.0.1:" + server.port()).build();
    engine =
        DocumentWriteBack.builder()
            .cache(cache)
            .store(nowhere)
            .replicas(1)
            .partitions(64)
            .drainThreads(1)
            .singleProcess(true)
            .build();
    buffer =
        RangeWriteBack.builder(DomainType.LONG)
            .writeBack(engine)
            .collection("usertable")
            .domain("ycsb_id")
            .build();
    dendrite =
        Dendrite.builder(DomainType.LONG, ROW)
            .collection("usertable")
            .domain("ycsb_id")
            .cache(cache)
            .writeBack(buffer, List.of(UPDATE))
            .buildRangeCache();
  }

  @TearDown(Level.Trial)
  public void stop() {
    System.out.printf(
        "%n%d updates drained; cache round trips per update %.2f%n",
        applied.get(), dendrite.metrics().roundTripsPerWrite());
    dendrite.close();
    buffer.close();
    engine.close();
    cache.close();
    server.close();
  }

  /** An update whose cached results stay as they are (none are cached here). */
  private static final DocumentCommand<Long, Long> UPDATE =
      DocumentCommand.updating(changes -> (interval, rows) -> rows);

  /** One YCSB*-shaped update of a random document. */
  @Benchmark
  public void update() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long number = random.nextInt(DOCUMENTS);
    List<Change> sets = new ArrayList<>(FIELDS);
    for (int field = 0; field < FIELDS; field++) {
      sets.add(Change.set("field" + field, value(random)));
    }
    EntityChanges change =
        new EntityChanges(new EntityKey("usertable", "user" + number), new ChangeSequence(sets));
    dendrite.write(number, number, change, UPDATE);
  }

  private static String value(ThreadLocalRandom random) {
    char[] chars = new char[100];
    for (int i = 0; i < chars.length; i++) {
      chars[i] = (char) ('a' + random.nextInt(26));
    }
    return new String(chars);
  }
}
