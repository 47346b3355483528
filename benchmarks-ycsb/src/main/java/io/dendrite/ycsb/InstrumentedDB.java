package io.dendrite.ycsb;

import io.dendrite.consistency.StaleReadChecker;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.DendriteBusyException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicInteger;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * The YCSB side every binding shares: parses keys, times each operation, counts its round trips, logs it for the
 * stale-read check, and maps failures to YCSB statuses; the {@link RecordBackend} does the work.
 *
 * <p>YCSB creates one {@code DB} per client thread. The backend (pools, the Dendrite, the cache clients), the
 * counters and the history are shared by every instance of the same binding class in the JVM, reference-counted:
 * the first {@link #init()} opens them, the last {@link #cleanup()} runs the check, writes the stats file and closes
 * them.
 *
 * <p>Properties every binding takes:
 * <ul>
 *   <li>{@value #STATS_FILE}: where the last cleanup writes the stats file (a Java properties file); none if unset;
 *   <li>{@value #CHECK_ANOMALIES}: log reads and writes and count stale reads (default true);
 *   <li>{@value #CHECKED_RECORDS}: about how many records to track for that (default 1000; every
 *       ⌈recordcount / checkedrecords⌉-th record is tracked);
 *   <li>{@value #CHECKED_EVENTS}: the most (record, field) events to log before a cutoff (default 1 000 000);
 *   <li>{@value #TABLE}: the table or collection (default YCSB's {@code table}, else usertable), together with
 *       YCSB's {@code fieldcount} and {@code fieldnameprefix};
 *   <li>{@value #VERIFY_DATABASE}: after the run, wait until the database holds every acknowledged write (at most
 *       {@value #SETTLE_SECONDS} seconds, default 120), then read every tracked record from it, past any cache, and
 *       count the fields whose value is older than their last acknowledged write ({@code verify.lostWrites} in the
 *       stats file; the stale reads of the run itself stay in {@code anomalies}). Needs the stale-read check on,
 *       and a backend that can tell when its database holds every acknowledged write (default false).
 * </ul>
 */
public abstract class InstrumentedDB extends DB {
  /** Property: the stats file's path. */
  public static final String STATS_FILE = "dendrite.statsfile";

  /** Property: whether to count stale reads. */
  public static final String CHECK_ANOMALIES = "dendrite.checkanomalies";

  /** Property: about how many records the stale-read check tracks. */
  public static final String CHECKED_RECORDS = "dendrite.checkedrecords";

  /** Property: the event budget of the stale-read check. */
  public static final String CHECKED_EVENTS = "dendrite.checkedevents";

  /** Property: the table or collection. */
  public static final String TABLE = "dendrite.table";

  /** Property: whether to check the database against the acknowledged writes after the run. */
  public static final String VERIFY_DATABASE = "dendrite.verifydatabase";

  /** Property: how long that check waits for the database to hold every acknowledged write. */
  public static final String SETTLE_SECONDS = "dendrite.settleseconds";

  /** Records the check reads from the database in one range read. */
  private static final int VERIFY_CHUNK = 500;

  private static final int ERRORS_PRINTED = 10;
  private static final Map<Class<?>, SharedRun> RUNS = new HashMap<>();

  private SharedRun run;

  /** The name the stats file gives this binding. */
  protected abstract String bindingName();

  /** Opens the backend the first instance in the JVM was configured for. */
  abstract RecordBackend openBackend(BindingProperties properties, RecordTable table);

  @Override
  public final void init() throws DBException {
    synchronized (RUNS) {
      SharedRun shared = RUNS.get(getClass());
      if (shared == null) {
        try {
          shared = start(new BindingProperties(getProperties(), System.getenv()));
        } catch (RuntimeException e) {
          throw new DBException(bindingName() + ": " + e.getMessage(), e);
        }
        RUNS.put(getClass(), shared);
      }
      shared.users++;
      run = shared;
    }
  }

  @Override
  public final void cleanup() throws DBException {
    synchronized (RUNS) {
      if (run == null) {
        return;
      }
      SharedRun finishing = run;
      run = null;
      if (--finishing.users > 0) {
        return;
      }
      RUNS.remove(getClass());
      try {
        finishing.finish();
      } catch (IOException | RuntimeException e) {
        throw new DBException(bindingName() + ": finishing the run failed: " + e.getMessage(), e);
      }
    }
  }

  @Override
  public final Status read(
      String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    return run.operate(
        Operation.READ,
        table,
        key,
        (number, trips) -> {
          long start = System.nanoTime();
          Optional<YcsbRecord> found = run.backend.read(key, number, trips);
          long end = System.nanoTime();
          run.logRead(number, fields, found.map(YcsbRecord::fields).orElse(null), start, end);
          found.ifPresent(
              record ->
                  record
                      .fields(fields)
                      .forEach((field, value) -> result.put(field, new StringByteIterator(value))));
          return found.isPresent() ? Status.OK : Status.NOT_FOUND;
        });
  }

  @Override
  public final Status scan(
      String table,
      String startkey,
      int recordcount,
      Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    return run.operate(
        Operation.SCAN,
        table,
        startkey,
        (first, trips) -> {
          long last = RecordKey.scanEnd(first, recordcount);
          long start = System.nanoTime();
          List<YcsbRecord> records = run.backend.scan(first, last, trips);
          long end = System.nanoTime();
          if (run.recorder != null) {
            run.recorder.scan(run.table, first, last, fields, records, start, end);
          }
          for (YcsbRecord record : records) {
            HashMap<String, ByteIterator> values = new HashMap<>();
            record
                .fields(fields)
                .forEach((field, value) -> values.put(field, new StringByteIterator(value)));
            result.add(values);
          }
          return Status.OK;
        });
  }

  @Override
  public final Status update(String table, String key, Map<String, ByteIterator> values) {
    Map<String, String> strings = strings(values);
    return run.operate(
        Operation.UPDATE,
        table,
        key,
        (number, trips) ->
            run.write(
                number, strings, false, () -> run.backend.update(key, number, strings, trips)));
  }

  @Override
  public final Status insert(String table, String key, Map<String, ByteIterator> values) {
    Map<String, String> strings = strings(values);
    return run.operate(
        Operation.INSERT,
        table,
        key,
        (number, trips) ->
            run.write(
                number,
                strings,
                true,
                () -> run.backend.insert(new YcsbRecord(key, number, strings), trips)));
  }

  @Override
  public final Status delete(String table, String key) {
    return run.operate(
        Operation.DELETE,
        table,
        key,
        (number, trips) ->
            run.write(number, Map.of(), true, () -> run.backend.delete(key, number, trips)));
  }

  /** A YCSB value can be read once: turn them into strings before anything reads them. */
  private static Map<String, String> strings(Map<String, ByteIterator> values) {
    Map<String, String> strings = new LinkedHashMap<>();
    values.forEach((field, value) -> strings.put(field, value.toString()));
    return strings;
  }

  private SharedRun start(BindingProperties properties) {
    RecordTable table = RecordTable.from(properties);
    properties
        .optional("table")
        .filter(ycsbTable -> !ycsbTable.equals(table.name()))
        .ifPresent(
            ycsbTable -> {
              throw new IllegalArgumentException(
                  TABLE
                      + "="
                      + table.name()
                      + " but YCSB's table="
                      + ycsbTable
                      + "; set them equal");
            });
    ConsistencyRecorder recorder = null;
    if (properties.bool(CHECK_ANOMALIES, true)) {
      long records = properties.number("recordcount", 0, 0);
      long tracked = properties.number(CHECKED_RECORDS, 1000, 1);
      long stride = Math.max(1, (records + tracked - 1) / tracked);
      recorder =
          new ConsistencyRecorder(
              table.fieldCount(), stride, properties.number(CHECKED_EVENTS, 1_000_000, 1));
    }
    Optional<Path> statsFile = properties.optional(STATS_FILE).map(Path::of);
    Optional<Verification> verification = Optional.empty();
    if (properties.bool(VERIFY_DATABASE, false)) {
      if (recorder == null) {
        throw new IllegalArgumentException(VERIFY_DATABASE + " needs " + CHECK_ANOMALIES + "=true");
      }
      verification =
          Optional.of(
              new Verification(
                  properties.number("recordcount", 0, 0),
                  Duration.ofSeconds(properties.number(SETTLE_SECONDS, 120, 0))));
    }
    return new SharedRun(
        bindingName(), table, openBackend(properties, table), recorder, statsFile, verification);
  }

  /** The check after the run: how many records there are, and how long to wait for the database to settle. */
  private record Verification(long records, Duration settle) {}

  /** The work of one operation, given the record number parsed from its key. */
  private interface Work {
    Status run(long number, TripCount trips);
  }

  /** What every instance of one binding class in the JVM shares. */
  private static final class SharedRun {
    final String binding;
    final RecordTable table;
    final RecordBackend backend;
    final ConsistencyRecorder recorder;
    final Optional<Path> statsFile;
    final Optional<Verification> verification;
    final RunStats stats = new RunStats();
    final AtomicInteger errorsPrinted = new AtomicInteger();
    int users;

    SharedRun(
        String binding,
        RecordTable table,
        RecordBackend backend,
        ConsistencyRecorder recorder,
        Optional<Path> statsFile,
        Optional<Verification> verification) {
      this.binding = binding;
      this.table = table;
      this.backend = backend;
      this.recorder = recorder;
      this.statsFile = statsFile;
      this.verification = verification;
    }

    Status operate(Operation operation, String tableName, String key, Work work) {
      TripCount trips = new TripCount();
      boolean ok = false;
      try {
        if (!table.name().equals(tableName)) {
          throw new IllegalArgumentException(
              "this binding serves table " + table.name() + ", not " + tableName);
        }
        Status status = work.run(RecordKey.number(key), trips);
        ok = true;
        return status;
      } catch (RuntimeException e) {
        if (errorsPrinted.incrementAndGet() <= ERRORS_PRINTED) {
          System.err.println("[" + binding + "] " + operation + " " + key + " failed: " + e);
        }
        return statusOf(e);
      } finally {
        stats.completed(operation, ok, trips);
      }
    }

    Status write(long number, Map<String, String> values, boolean whole, Runnable write) {
      long start = System.nanoTime();
      boolean succeeded = false;
      try {
        write.run();
        succeeded = true;
      } finally {
        if (recorder != null) {
          recorder.write(table, number, values, whole, succeeded, start, System.nanoTime());
        }
      }
      return Status.OK;
    }

    void logRead(
        long number, Set<String> fields, Map<String, String> returned, long start, long end) {
      if (recorder != null) {
        recorder.read(table, number, fields, returned, start, end);
      }
    }

    void finish() throws IOException {
      Map<String, String> extra = new LinkedHashMap<>();
      extra.put("binding", binding);
      extra.put("anomaliesChecked", Boolean.toString(recorder != null));
      long finalReadsFrom = Long.MAX_VALUE;
      try {
        if (verification.isPresent()) {
          finalReadsFrom = System.nanoTime();
          extra.putAll(readBackFromDatabase(verification.get()));
        }
        extra.putAll(backend.finalStats());
      } finally {
        backend.close();
      }
      // Written even when not checked (0 of 0), so that every stats file has the same keys.
      extra.put("anomalies", "0");
      extra.put("rowReadsChecked", "0");
      if (recorder != null) {
        StaleReadChecker.Report report = recorder.check();
        long from = finalReadsFrom;
        long lost = report.violations().stream().filter(v -> v.read().start() >= from).count();
        if (extra.containsKey("verify.recordsChecked")) {
          extra.put("verify.lostWrites", Long.toString(lost));
          System.err.println(
              "["
                  + binding
                  + "] fields older in the database than their last acknowledged write: "
                  + lost
                  + " (of "
                  + extra.get("verify.recordsChecked")
                  + " records read back)");
        }
        // The read-back is not a read of the run: what it finds stale is a lost write, counted
        // above.
        extra.put("anomalies", Long.toString(report.count() - lost));
        extra.put("rowReadsChecked", Long.toString(report.rowReadsChecked()));
        extra.put("checkedRecordStride", Long.toString(recorder.stride()));
        extra.put("historyTruncated", Boolean.toString(recorder.truncated()));
        System.err.println(
            "["
                + binding
                + "] stale reads: "
                + (report.count() - lost)
                + " of "
                + report.rowReadsChecked()
                + " checked row reads");
      }
      if (statsFile.isPresent()) {
        stats.write(statsFile.get(), extra);
      }
    }

    /**
     * Waits for the database to hold every acknowledged write, then reads every tracked record from it into the
     * history, after every write of the run ended: a field whose last acknowledged write is missing reads stale.
     * Skipped (and said so) when the backend cannot tell when the database is current, it did not get there in
     * time, or the history was cut off (writes after the cutoff are not in it, so their values would look stale).
     */
    private Map<String, String> readBackFromDatabase(Verification verification) {
      long start = System.nanoTime();
      Optional<RecordStore> database = backend.settledDatabase(verification.settle());
      Map<String, String> entries = new LinkedHashMap<>();
      entries.put("verify.settleMillis", Long.toString((System.nanoTime() - start) / 1_000_000));
      if (database.isEmpty() || recorder.truncated()) {
        String why =
            database.isEmpty()
                ? "the database did not hold every acknowledged write within "
                    + verification.settle().toSeconds()
                    + " s, or this binding cannot tell"
                : "the history was cut off (raise " + CHECKED_EVENTS + ")";
        entries.put("verify.skipped", why);
        System.err.println("[" + binding + "] database not checked: " + why);
        return entries;
      }
      long read = 0;
      for (long first = 0; first < verification.records(); first += VERIFY_CHUNK) {
        long last = Math.min(verification.records(), first + VERIFY_CHUNK) - 1;
        long readStart = System.nanoTime();
        List<YcsbRecord> records = database.get().scan(first, last);
        recorder.scan(table, first, last, null, records, readStart, System.nanoTime());
        read += records.size();
      }
      entries.put("verify.recordsChecked", Long.toString(read));
      return entries;
    }

    private static Status statusOf(RuntimeException e) {
      if (e instanceof IllegalArgumentException) {
        return Status.BAD_REQUEST;
      }
      if (e instanceof DataStoreUnavailableException || e instanceof DendriteBusyException) {
        return Status.SERVICE_UNAVAILABLE;
      }
      return Status.ERROR;
    }
  }
}
