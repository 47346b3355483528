package io.dendrite.iq.bench;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.iq.client.Transaction;
import io.dendrite.iq.client.WriteOptions;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Load generator: measures Dendrite's IQ server side by side with a stock memcached in one run and
 * prints a markdown table. Both servers are driven by the same {@link IqClient} code over the same
 * number of pipelined connections, so the comparison is between the servers.
 *
 * <p>Workloads: get/set 90/10 with 100-byte values (both servers); the IQ read-miss path
 * ({@code iqget} then {@code iqset} on a fresh key) and the refresh path ({@code qaread}, {@code swap},
 * {@code commit}) on the IQ server only.
 *
 * <pre>
 * java -cp ... io.dendrite.iq.bench.LoadGenerator [--memcached host:port] [--iq host:port]
 *      [--connections 4] [--window 32] [--seconds 10] [--warmup 3] [--keys 10000] [--threads 16] [--rounds 3]
 * </pre>
 * The memcached address comes from {@code --memcached} or the {@code DENDRITE_MEMCACHED} environment
 * variable. Without {@code --iq} an IQ server is started inside this JVM.
 */
public final class LoadGenerator {

    private static final int VALUE_BYTES = 100;

    private final Settings settings;
    private final byte[] value = new byte[VALUE_BYTES];
    /** Gets of preloaded keys that missed: a server that loses data must not look fast for it. */
    private final LongAdder misses = new LongAdder();

    private LoadGenerator(Settings settings) {
        this.settings = settings;
        ThreadLocalRandom.current().nextBytes(value);
    }

    /** Runs every workload and prints the table. */
    public static void main(String[] args) throws Exception {
        Settings settings = Settings.parse(args);
        IqServer embedded = settings.iq == null
                ? IqServer.start(IqServerConfig.builder().port(0).leaseMillis(10_000).memoryBytes(256L << 20).build())
                : null;
        ServerAddress iq = settings.iq != null ? settings.iq : new ServerAddress("127.0.0.1", embedded.port());
        try {
            new LoadGenerator(settings).run(iq);
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    private void run(ServerAddress iq) throws Exception {
        // The machine is shared, so get/set alternates between the servers for several rounds and
        // the median is reported: a burst of outside load then hurts both sides alike.
        List<Double> memcachedRounds = new ArrayList<>();
        List<Double> iqRounds = new ArrayList<>();
        for (int round = 0; round < settings.rounds; round++) {
            memcachedRounds.add(measure("get/set 90/10, 100 B", "memcached", settings.memcached, this::getSet));
            iqRounds.add(measure("get/set 90/10, 100 B", "IQ server", iq, this::getSet));
        }
        double memcachedGetSet = median(memcachedRounds);
        List<Row> rows = new ArrayList<>();
        rows.add(new Row("get/set 90/10, 100 B", "memcached " + settings.memcached, memcachedGetSet, 1, memcachedRounds));
        rows.add(new Row("get/set 90/10, 100 B", "IQ server " + iq, median(iqRounds), 1, iqRounds));
        rows.add(new Row("read miss: iqget + iqset", "IQ server " + iq,
                measure("read miss", "IQ server", iq, this::readMiss), 2, List.of()));
        rows.add(new Row("refresh: qaread + swap + commit", "IQ server " + iq,
                measure("refresh", "IQ server", iq, this::refresh), 3, List.of()));

        System.out.printf("%n| workload | server | ops/s | requests/s | requests/s vs memcached get/set | rounds (ops/s) |%n");
        System.out.printf("|---|---|---:|---:|---:|---|%n");
        for (Row row : rows) {
            double requests = row.opsPerSecond * row.requestsPerOp;
            String rounds = row.rounds.stream().map(r -> String.format(Locale.ROOT, "%,.0f", r))
                    .reduce((a, b) -> a + " / " + b).orElse("");
            System.out.printf(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | %.2fx | %s |%n", row.workload, row.server,
                    row.opsPerSecond, requests, requests / memcachedGetSet, rounds);
        }
        System.out.printf(Locale.ROOT, "%n%d connections, %d requests in flight per connection (get/set), "
                        + "%d threads (lease paths), %d keys, %d s measured after %d s warm-up, "
                        + "get/set median of %d alternating rounds.%n",
                settings.connections, settings.window, settings.threads, settings.keys, settings.seconds,
                settings.warmupSeconds, settings.rounds);
    }

    private interface Workload {
        /** Drives load until {@code stopAtNanos}, adding one to {@code ops} per completed operation. */
        void drive(IqClient client, long stopAtNanos, LongAdder ops) throws Exception;
    }

    private double measure(String name, String kind, ServerAddress server, Workload workload) throws Exception {
        System.err.printf("measuring %s on %s %s ...%n", name, kind, server);
        misses.reset();
        double opsPerSecond = opsPerSecond(server, workload);
        System.err.printf(Locale.ROOT, "  %,.0f ops/s, %d get misses%n", opsPerSecond, misses.sum());
        if (misses.sum() > 0) {
            throw new IllegalStateException(kind + " lost preloaded keys: " + misses.sum() + " gets missed");
        }
        return opsPerSecond;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }

    private double opsPerSecond(ServerAddress server, Workload workload) throws Exception {
        try (IqClient client = IqClient.builder().servers(List.of(server))
                .connectionsPerServer(settings.connections)
                .requestTimeout(Duration.ofSeconds(30)).build()) {
            List<CompletableFuture<Outcome>> preload = new ArrayList<>();
            for (int i = 0; i < settings.keys; i++) {
                preload.add(client.setAsync("k" + i, value, WriteOptions.DEFAULT));
            }
            preload.forEach(stored -> expectOk(stored.join()));
            workload.drive(client, System.nanoTime() + settings.warmupSeconds * 1_000_000_000L, new LongAdder());
            LongAdder ops = new LongAdder();
            long start = System.nanoTime();
            workload.drive(client, start + settings.seconds * 1_000_000_000L, ops);
            return ops.sum() / ((System.nanoTime() - start) / 1e9);
        }
    }

    /** A closed loop of {@code connections x window} async operations, each issuing the next when it completes. */
    private void getSet(IqClient client, long stopAtNanos, LongAdder ops) throws InterruptedException {
        int chains = settings.connections * settings.window;
        CountDownLatch done = new CountDownLatch(chains);
        for (int i = 0; i < chains; i++) {
            nextGetSet(client, stopAtNanos, ops, done);
        }
        done.await();
    }

    private void nextGetSet(IqClient client, long stopAtNanos, LongAdder ops, CountDownLatch done) {
        if (System.nanoTime() >= stopAtNanos) {
            done.countDown();
            return;
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String key = "k" + random.nextInt(settings.keys);
        CompletableFuture<?> op = random.nextInt(10) == 0
                ? client.setAsync(key, value, WriteOptions.DEFAULT)
                : client.getAsync(key).thenAccept(found -> {
                    if (found.isEmpty()) {
                        misses.increment();
                    }
                });
        op.whenComplete((result, failure) -> {
            if (failure != null) {
                failure.printStackTrace();
                done.countDown();
                return;
            }
            ops.increment();
            nextGetSet(client, stopAtNanos, ops, done);
        });
    }

    /** Threads reading fresh keys: every read misses, takes the I lease and fills it. */
    private void readMiss(IqClient client, long stopAtNanos, LongAdder ops) throws InterruptedException {
        onThreads(thread -> {
            for (long i = 0; System.nanoTime() < stopAtNanos; i++) {
                String key = "miss:" + System.nanoTime() + ":" + thread + ":" + i;
                if (client.read(key) instanceof ReadResult.Leased leased) {
                    try (LeaseHandle lease = leased.lease()) {
                        expectOk(lease.fill(value));
                    }
                    ops.increment();
                }
            }
        });
    }

    /** Threads refreshing their own keys (no contention): qaread, swap, commit. */
    private void refresh(IqClient client, long stopAtNanos, LongAdder ops) throws InterruptedException {
        onThreads(thread -> {
            for (int i = 0; System.nanoTime() < stopAtNanos; i++) {
                String key = "k" + ((thread + (long) i * settings.threads) % settings.keys);
                try (Transaction tx = client.beginTransaction()) {
                    if (tx.readForUpdate(key) instanceof RefreshResult.Granted granted) {
                        expectOk(granted.lease().swap(value));
                        expectOk(tx.commit());
                        ops.increment();
                    }
                }
            }
        });
    }

    private interface PerThread {
        void run(int thread);
    }

    private void onThreads(PerThread body) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < settings.threads; t++) {
            int thread = t;
            Thread worker = new Thread(() -> body.run(thread), "load-" + thread);
            worker.start();
            threads.add(worker);
        }
        for (Thread thread : threads) {
            thread.join();
        }
    }

    private static void expectOk(Outcome outcome) {
        if (!outcome.isOk()) {
            throw new IllegalStateException("benchmark operation failed: " + outcome);
        }
    }

    private record Row(String workload, String server, double opsPerSecond, int requestsPerOp, List<Double> rounds) {
    }

    private record Settings(ServerAddress memcached, ServerAddress iq, int connections, int window, int seconds,
                            int warmupSeconds, int keys, int threads, int rounds) {

        static Settings parse(String[] args) {
            String memcached = System.getenv("DENDRITE_MEMCACHED");
            String iq = null;
            int connections = 4;
            int window = 32;
            int seconds = 10;
            int warmup = 3;
            int keys = 10_000;
            int threads = 16;
            int rounds = 3;
            for (int i = 0; i + 1 < args.length; i += 2) {
                String v = args[i + 1];
                switch (args[i]) {
                    case "--memcached" -> memcached = v;
                    case "--iq" -> iq = v;
                    case "--connections" -> connections = Integer.parseInt(v);
                    case "--window" -> window = Integer.parseInt(v);
                    case "--seconds" -> seconds = Integer.parseInt(v);
                    case "--warmup" -> warmup = Integer.parseInt(v);
                    case "--keys" -> keys = Integer.parseInt(v);
                    case "--threads" -> threads = Integer.parseInt(v);
                    case "--rounds" -> rounds = Integer.parseInt(v);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (memcached == null) {
                throw new IllegalArgumentException("give the memcached address with --memcached host:port or DENDRITE_MEMCACHED");
            }
            return new Settings(ServerAddress.parse(memcached), iq == null ? null : ServerAddress.parse(iq),
                    connections, window, seconds, warmup, keys, threads, rounds);
        }
    }
}
