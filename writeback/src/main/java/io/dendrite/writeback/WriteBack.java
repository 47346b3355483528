package io.dendrite.writeback;

import io.dendrite.core.Coordinator;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import io.dendrite.core.OwnedRange;
import io.dendrite.core.WriteBuffer;
import io.dendrite.core.WriteBuffers;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.document.RangeWriteBack;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.dendrite.writeback.store.DataStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Write-back for a {@link Dendrite}: its writes are buffered in the cache tier (pinned, on R servers) and drained to
 * {@code store} by background threads; a miss first applies the buffered writes its interval overlaps. Given to
 * {@link Dendrite.Builder#writeBack(WriteBuffers)}, it serves one process and {@code ManyProcesses} alike:
 *
 * <pre>{@code
 * Dendrite<Integer, Score> scores = Dendrite.builder(DomainType.INTEGER, rows)
 *     .collection("scores").domain("id").cache(cache)
 *     .writeBack(WriteBack.to(MySqlStore.open(jdbcUrl, 8, Duration.ofSeconds(10))))
 *     .query("byId", (lb, ub) -> select(lb, ub))
 *     .command("set", DocumentCommand.updating(changes -> ...)) // writes are document changes
 *     .build();
 * }</pre>
 *
 * <p>Every write command of a write-back Dendrite is a {@link io.dendrite.writeback.document.DocumentCommand}: its
 * argument is the {@link DocumentChanges} the store later applies. Each range the Dendrite owns gets a range
 * write-back ({@link RangeWriteBack}) over a per-document engine of its own, which the Dendrite closes with the range:
 * in one process, an engine that locks documents through the cache tier; in a range one of many processes owns, an
 * engine owned by the range, which locks the range's documents in this process under the range's lease and fences
 * every request and statement with it.
 */
public final class WriteBack implements WriteBuffers<DocumentChanges> {
  private final DataStore store;
  private UnaryOperator<DocumentWriteBack.Builder> engine = UnaryOperator.identity();

  /** The range attribute of a document; null: its id, as the domain's type ({@link #idAs}). */
  private Function<EntityKey, ?> documentAttribute;

  /** The engines of the buffers open now (one per range this process owns), for {@link #metrics}. */
  private final Set<DocumentWriteBack> engines = ConcurrentHashMap.newKeySet();

  /** The metrics of each engine as it closed, after its close drain ({@link #closedMetrics}). */
  private final List<WriteBackMetrics> closed = new CopyOnWriteArrayList<>();

  private WriteBack(DataStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /** Write-back into {@code store}, the database the buffered writes are drained to. */
  public static WriteBack to(DataStore store) {
    return new WriteBack(store);
  }

  /**
   * Settings of each range's engine (R, drain threads and batches, pinned budget, retry deadlines, ...; defaults
   * suit most services): applied to a builder whose cache and store are the Dendrite's, and whose range, for a range
   * owned by one of many processes, is set after them.
   */
  public WriteBack engine(UnaryOperator<DocumentWriteBack.Builder> settings) {
    this.engine = Objects.requireNonNull(settings, "settings");
    return this;
  }

  /**
   * The value of the Dendrite's range attribute in the document {@code key} names (default: its id, an Integer or
   * Long taken as the domain's type, for a Dendrite whose domain is the primary key). Needed over many processes only, where each range's engine locks the range's
   * documents in its process: every buffered write is checked to stay in its range.
   */
  public WriteBack documentAttribute(Function<EntityKey, ?> attribute) {
    this.documentAttribute = Objects.requireNonNull(attribute, "attribute");
    return this;
  }

  /**
   * What the engines of the ranges this process owns now have done, one entry per engine (one per range): the
   * writes they hold buffered and have drained. An engine's counts leave with its range.
   */
  public List<WriteBackMetrics> metrics() {
    return engines.stream().map(DocumentWriteBack::metrics).toList();
  }

  /**
   * What each engine closed so far did, read just after its close drain ({@link DocumentWriteBack#close}): what it
   * drained since it started, and in {@link WriteBackMetrics#pendingWrites()} what it left buffered for another
   * engine. An engine whose metrics could not be read then (a cache server down) is missing.
   */
  public List<WriteBackMetrics> closedMetrics() {
    return List.copyOf(closed);
  }

  private void recordClosed(DocumentWriteBack engine) {
    try {
      closed.add(engine.metrics());
    } catch (RuntimeException unread) {
      // The engine logged what it drained and left; closedMetrics() lacks it, which says so.
    }
  }

  @Override
  public Class<DocumentChanges> changeType() {
    return DocumentChanges.class;
  }

  /**
   * A range write-back of {@code collection}.{@code domain} over an engine of its own, which it claims the range
   * with (refusing a second owner, here or in another process) and closes with it.
   */
  @Override
  public <K extends Comparable<? super K>> WriteBuffer<K, DocumentChanges> open(
      DomainType<K> type, String collection, String domain, IqClient cache) {
    DocumentWriteBack documents =
        engine.apply(DocumentWriteBack.builder().cache(cache).store(store)).build();
    return over(
        documents,
        () ->
            RangeWriteBack.builder(type)
                .writeBack(documents)
                .collection(collection)
                .domain(domain)
                .build());
  }

  /**
   * A range write-back of {@code range} over an engine owned by the range, with one drain thread unless {@link
   * #engine} says otherwise (one range's share of a process's writes), and no drain on close (the range's next owner
   * drains what is left). Closing it closes the engine. Every owner of the range must list its buffered writes in as
   * many pending-writes partitions (the engine's default, unless {@link #engine} sets the same count everywhere).
   */
  @Override
  public <K extends Comparable<? super K>> WriteBuffer<K, DocumentChanges> open(
      DomainType<K> type, OwnedRange range, IqClient cache) {
    DocumentWriteBack.Builder settings =
        engine.apply(
            DocumentWriteBack.builder()
                .cache(cache)
                .store(store)
                .drainThreads(1)
                .drainOnClose(Duration.ZERO));
    Function<EntityKey, K> attribute =
        documentAttribute == null
            ? key -> idAs(type, key)
            : key -> type.cast("the range attribute of " + key, documentAttribute.apply(key));
    DocumentWriteBack documents = settings.ownedRange(range).build();
    return over(
        documents,
        () ->
            RangeWriteBack.builder(type)
                .writeBack(documents)
                .documentAttribute(attribute)
                .collection(range.collection())
                .domain(range.domain())
                .build());
  }

  /**
   * The document's id as a value of {@code type}: an Integer or Long id fits an INTEGER or LONG domain alike (a row's
   * key may reach a change as either) when its value does.
   */
  private static <K extends Comparable<? super K>> K idAs(DomainType<K> type, EntityKey key) {
    Object id = key.id();
    if (id instanceof Integer || id instanceof Long) {
      long value = ((Number) id).longValue();
      if (type.javaType() == Long.class) {
        id = value;
      } else if (type.javaType() == Integer.class && value == (int) value) {
        id = (int) value;
      }
    }
    return type.cast("the range attribute (the id) of " + key, id);
  }

  /**
   * The range write-back {@code range} builds over {@code engine}, closing the engine after itself; the engine is
   * closed at once if the range write-back cannot be built.
   */
  private <K extends Comparable<? super K>> WriteBuffer<K, DocumentChanges> over(
      DocumentWriteBack engine, Supplier<RangeWriteBack<K>> range) {
    RangeWriteBack<K> built;
    try {
      built = range.get();
    } catch (RuntimeException failed) {
      engine.close();
      throw failed;
    }
    engines.add(engine);
    return new ClosingItsEngine<>(built, engine);
  }

  /** A range write-back that closes the engine it was built over after itself (closing twice does nothing). */
  private final class ClosingItsEngine<K extends Comparable<? super K>>
      implements WriteBuffer<K, DocumentChanges> {
    private final RangeWriteBack<K> range;
    private final DocumentWriteBack engine;

    ClosingItsEngine(RangeWriteBack<K> range, DocumentWriteBack engine) {
      this.range = range;
      this.engine = engine;
    }

    @Override
    public void check(Interval<K> interval, DocumentChanges change) {
      range.check(interval, change);
    }

    @Override
    public void buffer(Interval<K> interval, DocumentChanges change) {
      range.buffer(interval, change);
    }

    @Override
    public Started start(Interval<K> interval, DocumentChanges change) {
      return range.start(interval, change);
    }

    @Override
    public void applyOverlapping(Interval<K> interval) {
      range.applyOverlapping(interval);
    }

    @Override
    public Optional<Coordinator.RangeClaim> rangeClaim(String collection, String domain) {
      return range.rangeClaim(collection, domain);
    }

    @Override
    public void close() {
      try {
        range.close();
      } finally {
        try {
          engine.close();
          recordClosed(engine);
        } finally {
          engines.remove(engine);
        }
      }
    }
  }
}
