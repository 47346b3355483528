package io.dendrite.iq.bench;

import io.dendrite.iq.bench.ServerCpu.CpuPerRequest;
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
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Load generator: measures Dendrite's IQ server side by side with a stock memcached in one run and
 * prints markdown tables. Both servers are driven by the same {@link IqClient} code, so the comparison is
 * between the servers.
 *
 * <p>Workloads: get/set 90/10 with 100-byte values on both servers in two closed-loop shapes, <em>one request
 * in flight per connection</em> (one thread per connection making blocking calls) and <em>pipelined</em>
 * (a window of async requests on each connection); the IQ read-miss path ({@code iqget} then {@code iqset} on a
 * fresh key) and the refresh path ({@code qaread}, {@code swap}, {@code commit}) on the IQ server only.
 *
 * <p>Besides throughput it gives each server process's CPU time per request (user + system from
 * {@code /proc/<pid>/stat} over the measured phase, see {@link ServerCpu}) and, per get/set shape, the IQ
 * server's CPU per request divided by memcached's. memcached's pid comes from {@code --memcached-pid} or the
 * pid file {@code dev/services} writes; the IQ server needs a process of its own for the figure: {@code --iq
 * child} starts one, or {@code --iq host:port --iq-pid N} names one.
 *
 * <pre>
 * java -cp ... io.dendrite.iq.bench.LoadGenerator [--memcached host:port] [--memcached-pid N]
 *      [--iq host:port|child] [--iq-pid N] [--connections 4] [--window 32] [--sync-connections 16]
 *      [--seconds 10] [--warmup 3] [--iq-warmup 10] [--keys 10000] [--threads 16] [--rounds 3]
 * </pre>
 * The memcached address comes from {@code --memcached} or the {@code DENDRITE_MEMCACHED} environment
 * variable. Without {@code --iq} an IQ server is started inside this JVM (no CPU figure for it then).
 * {@code --warmup} is the unmeasured load before every measured phase; {@code --iq-warmup} the unmeasured load
 * per get/set shape on the IQ server once before the first round, for its JIT compiler.
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "LoadGenerator",
    description =
        "The IQ server side by side with a stock memcached: throughput and each server's CPU "
            + "per request.")
public final class LoadGenerator implements Callable<Integer> {

  private static final int VALUE_BYTES = 100;
  private static final String GET_SET = "get/set 90/10, 100 B";

  @Mixin private Settings settings = new Settings();

  @Spec private CommandSpec spec;

  private final byte[] value = new byte[VALUE_BYTES];

  /** Gets of preloaded keys that missed: a server that loses data must not look fast for it. */
  private final LongAdder misses = new LongAdder();

  private LoadGenerator() {
    ThreadLocalRandom.current().nextBytes(value);
  }

  /** Runs every workload and prints the tables. */
  public static void main(String[] args) {
    System.exit(
        new CommandLine(new LoadGenerator())
            .registerConverter(ServerAddress.class, ServerAddress::parse)
            .setOverwrittenOptionsAllowed(true)
            .execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (settings.memcached == null) {
      throw new ParameterException(
          spec.commandLine(),
          "give the memcached address with --memcached host:port or DENDRITE_MEMCACHED");
    }
    if (settings.iqPid != null && (settings.iq == null || settings.iqChild())) {
      throw new ParameterException(spec.commandLine(), "--iq-pid goes with --iq host:port");
    }
    Server memcached =
        new Server(
            "memcached",
            settings.memcached,
            ServerCpu.memcached(settings.memcachedPid, settings.memcached));
    IqServer embedded = null;
    IqServerChild child = null;
    try {
      Server iq;
      if (settings.iqChild()) {
        child = IqServerChild.start(List.of("--memory", "256m", "--lease-ms", "10000"));
        iq = new Server("IQ server", child.address(), ServerCpu.ofProcess(child.pid()));
      } else if (settings.iq != null) {
        ServerAddress address = iqAddress();
        iq =
            new Server(
                "IQ server",
                address,
                settings.iqPid != null
                    ? ServerCpu.ofProcess(settings.iqPid)
                    : ServerCpu.missing("no --iq-pid for the IQ server at " + address));
      } else {
        embedded =
            IqServer.start(
                IqServerConfig.builder()
                    .port(0)
                    .leaseLifetime(Duration.ofMillis(10_000))
                    .memoryBytes(256L << 20)
                    .build());
        iq =
            new Server(
                "IQ server",
                new ServerAddress("127.0.0.1", embedded.port()),
                ServerCpu.missing(
                    "the IQ server runs inside the generator's JVM; use --iq child or --iq host:port --iq-pid N"));
      }
      run(memcached, iq);
    } finally {
      if (embedded != null) {
        embedded.close();
      }
      if (child != null) {
        child.close();
      }
    }
    return CommandLine.ExitCode.OK;
  }

  /** {@code --iq host:port}'s address. */
  private ServerAddress iqAddress() {
    try {
      return ServerAddress.parse(settings.iq);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), "--iq: " + e.getMessage(), e);
    }
  }

  private void run(Server memcached, Server iq) throws Exception {
    List<Shape> shapes =
        List.of(
            new Shape(
                String.format(
                    Locale.ROOT, "1 in flight × %d connections", settings.syncConnections),
                this::syncGetSet),
            new Shape(
                String.format(
                    Locale.ROOT,
                    "pipelined %d × %d connections",
                    settings.window,
                    settings.connections),
                this::getSet));
    warmUp(iq, shapes);
    // The machine is shared, so get/set alternates between the servers for several rounds and
    // the median is reported: a burst of outside load then hurts both sides alike.
    Map<Shape, List<Measured>> memcachedRounds = new LinkedHashMap<>();
    Map<Shape, List<Measured>> iqRounds = new LinkedHashMap<>();
    for (int round = 0; round < settings.rounds; round++) {
      for (Shape shape : shapes) {
        String name = GET_SET + ", " + shape.name;
        memcachedRounds
            .computeIfAbsent(shape, s -> new ArrayList<>())
            .add(measure(name, memcached, shape.load));
        iqRounds.computeIfAbsent(shape, s -> new ArrayList<>()).add(measure(name, iq, shape.load));
      }
    }
    List<Row> rows = new ArrayList<>();
    for (Shape shape : shapes) {
      double baseline = median(memcachedRounds.get(shape), Measured::requestsPerSecond);
      rows.add(
          new Row(GET_SET + ", " + shape.name, memcached, memcachedRounds.get(shape), baseline));
      rows.add(new Row(GET_SET + ", " + shape.name, iq, iqRounds.get(shape), baseline));
    }
    double pipelinedBaseline =
        median(memcachedRounds.get(shapes.get(1)), Measured::requestsPerSecond);
    rows.add(
        new Row(
            "read miss: iqget + iqset",
            iq,
            List.of(measure("read miss", iq, this::readMiss)),
            pipelinedBaseline));
    rows.add(
        new Row(
            "refresh: qaread + swap + commit",
            iq,
            List.of(measure("refresh", iq, this::refresh)),
            pipelinedBaseline));

    Set<String> missing = new LinkedHashSet<>();
    System.out.printf(
        "%n| workload | server | ops/s | requests/s | requests/s vs memcached get/set "
            + "| server CPU µs/request | rounds (ops/s) |%n");
    System.out.printf("|---|---|---:|---:|---:|---:|---|%n");
    for (Row row : rows) {
      CpuPerRequest cpu = medianCpu(row.rounds);
      if (cpu.missing() != null) {
        missing.add(row.server.name + ": " + cpu.missing());
      }
      String rounds =
          row.rounds.size() < 2
              ? ""
              : row.rounds.stream()
                  .map(r -> String.format(Locale.ROOT, "%,.0f", r.opsPerSecond))
                  .reduce((a, b) -> a + " / " + b)
                  .orElse("");
      double requests = median(row.rounds, Measured::requestsPerSecond);
      System.out.printf(
          Locale.ROOT,
          "| %s | %s | %,.0f | %,.0f | %.2fx | %s | %s |%n",
          row.workload,
          row.server.label(),
          median(row.rounds, Measured::opsPerSecond),
          requests,
          requests / row.baseline,
          cpu.format(),
          rounds);
    }

    printCpuRatios(shapes, memcachedRounds, iqRounds);
    System.out.printf(
        Locale.ROOT,
        "%nget/set: %d keys, %d s measured after %d s warm-up, median of %d rounds "
            + "alternating the servers, after %d s per shape warming up the IQ server's JIT; "
            + "lease paths: %d threads, blocking calls. Ratios vs memcached: "
            + "get/set against memcached in the same shape, lease paths against memcached pipelined.%n"
            + "Server CPU: user + system time of the server process from /proc/<pid>/stat over the "
            + "measured phase ÷ the requests completed in it.%n",
        settings.keys,
        settings.seconds,
        settings.warmupSeconds,
        settings.rounds,
        settings.iqWarmupSeconds,
        settings.threads);
    for (String reason : missing) {
      System.out.printf("CPU figure missing for %s%n", reason);
    }
  }

  /**
   * A JVM's first seconds go to compiling its hot code, which is no cost of a request: the IQ server runs each
   * shape unmeasured first (memcached, a C program, needs no such warm-up).
   */
  private void warmUp(Server iq, List<Shape> shapes) throws Exception {
    for (Shape shape : settings.iqWarmupSeconds > 0 ? shapes : List.<Shape>of()) {
      System.err.printf(
          "warming up the IQ server with %s for %d s ...%n", shape.name, settings.iqWarmupSeconds);
      try (Clients clients = new Clients(iq.address)) {
        preload(clients);
        shape.load.drive(
            clients, System.nanoTime() + settings.iqWarmupSeconds * 1_000_000_000L, new Counts());
      }
    }
  }

  /** The target figure: per get/set shape, the IQ server's CPU per request ÷ memcached's, median and per round. */
  private static void printCpuRatios(
      List<Shape> shapes,
      Map<Shape, List<Measured>> memcachedRounds,
      Map<Shape, List<Measured>> iqRounds) {
    System.out.printf(
        "%n| get/set 90/10, 100 B | memcached CPU µs/request | IQ server CPU µs/request "
            + "| IQ ÷ memcached (target ≤ 1.0×) | rounds (IQ ÷ memcached) |%n");
    System.out.printf("|---|---:|---:|---:|---|%n");
    for (Shape shape : shapes) {
      List<Measured> m = memcachedRounds.get(shape);
      List<Measured> q = iqRounds.get(shape);
      List<String> perRound = new ArrayList<>();
      for (int round = 0; round < m.size(); round++) {
        perRound.add(ratio(q.get(round).cpu, m.get(round).cpu));
      }
      System.out.printf(
          Locale.ROOT,
          "| %s | %s | %s | **%s** | %s |%n",
          shape.name,
          medianCpu(m).format(),
          medianCpu(q).format(),
          ratio(medianCpu(q), medianCpu(m)),
          String.join(" / ", perRound));
    }
  }

  /** IQ ÷ memcached, or "–" when either figure is missing. */
  private static String ratio(CpuPerRequest iq, CpuPerRequest memcached) {
    return iq.missing() != null || memcached.missing() != null
        ? "–"
        : String.format(Locale.ROOT, "%.2fx", iq.micros() / memcached.micros());
  }

  /** A server under test, with where its CPU time is read. */
  private record Server(String name, ServerAddress address, ServerCpu cpu) {
    String label() {
      return name + " " + address + (cpu.pid() > 0 ? " (pid " + cpu.pid() + ")" : "");
    }
  }

  /** A get/set load shape. */
  private record Shape(String name, Workload load) {}

  /** What one measured phase gave. */
  private record Measured(double opsPerSecond, double requestsPerSecond, CpuPerRequest cpu) {}

  /** Operations and wire requests completed. */
  private record Counts(LongAdder ops, LongAdder requests) {
    Counts() {
      this(new LongAdder(), new LongAdder());
    }
  }

  private interface Workload {
    /** Drives load until {@code stopAtNanos}, counting completed operations and their requests. */
    void drive(Clients clients, long stopAtNanos, Counts counts) throws Exception;
  }

  private Measured measure(String name, Server server, Workload workload) throws Exception {
    System.err.printf("measuring %s on %s %s ...%n", name, server.name, server.address);
    misses.reset();
    Measured measured = measurePhase(server, workload);
    System.err.printf(
        Locale.ROOT,
        "  %,.0f ops/s, server CPU %s µs/request, %d get misses%n",
        measured.opsPerSecond,
        measured.cpu.format(),
        misses.sum());
    if (misses.sum() > 0) {
      throw new IllegalStateException(
          server.name + " lost preloaded keys: " + misses.sum() + " gets missed");
    }
    return measured;
  }

  private static double median(List<Measured> rounds, ToDoubleFunction<Measured> figure) {
    List<Double> sorted = rounds.stream().map(figure::applyAsDouble).sorted().toList();
    int middle = sorted.size() / 2;
    return sorted.size() % 2 == 1
        ? sorted.get(middle)
        : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
  }

  /** The median CPU per request, missing if any round's is. */
  private static CpuPerRequest medianCpu(List<Measured> rounds) {
    return rounds.stream()
        .map(Measured::cpu)
        .filter(cpu -> cpu.missing() != null)
        .findFirst()
        .orElseGet(() -> new CpuPerRequest(median(rounds, r -> r.cpu.micros()), null));
  }

  private Measured measurePhase(Server server, Workload workload) throws Exception {
    try (Clients clients = new Clients(server.address)) {
      preload(clients);
      workload.drive(
          clients, System.nanoTime() + settings.warmupSeconds * 1_000_000_000L, new Counts());
      Counts counts = new Counts();
      ServerCpu.Phase cpu = server.cpu.begin();
      long start = System.nanoTime();
      workload.drive(clients, start + settings.seconds * 1_000_000_000L, counts);
      double seconds = (System.nanoTime() - start) / 1e9;
      CpuPerRequest perRequest = cpu.end(counts.requests.sum());
      return new Measured(counts.ops.sum() / seconds, counts.requests.sum() / seconds, perRequest);
    }
  }

  private void preload(Clients clients) {
    List<CompletableFuture<Outcome>> preload = new ArrayList<>();
    for (int i = 0; i < settings.keys; i++) {
      preload.add(clients.pipelined.setAsync("k" + i, value, WriteOptions.DEFAULT));
    }
    preload.forEach(stored -> expectOk(stored.join()));
  }

  /** The clients of one phase: a pipelined one, and single-connection ones opened when a workload wants them. */
  private final class Clients implements AutoCloseable {
    final IqClient pipelined;
    private final ServerAddress server;
    private final List<IqClient> single = new ArrayList<>();

    Clients(ServerAddress server) {
      this.server = server;
      this.pipelined = client(server, settings.connections);
    }

    /** {@code count} clients of one connection each. */
    List<IqClient> oneConnectionEach(int count) {
      while (single.size() < count) {
        single.add(client(server, 1));
      }
      return single.subList(0, count);
    }

    private IqClient client(ServerAddress server, int connections) {
      return IqClient.builder()
          .servers(List.of(server))
          .connectionsPerServer(connections)
          .requestTimeout(Duration.ofSeconds(30))
          .build();
    }

    @Override
    public void close() {
      single.forEach(IqClient::close);
      pipelined.close();
    }
  }

  /** A closed loop of {@code connections x window} async operations, each issuing the next when it completes. */
  private void getSet(Clients clients, long stopAtNanos, Counts counts)
      throws InterruptedException {
    int chains = settings.connections * settings.window;
    CountDownLatch done = new CountDownLatch(chains);
    for (int i = 0; i < chains; i++) {
      nextGetSet(clients.pipelined, stopAtNanos, counts, done);
    }
    done.await();
  }

  private void nextGetSet(IqClient client, long stopAtNanos, Counts counts, CountDownLatch done) {
    if (System.nanoTime() >= stopAtNanos) {
      done.countDown();
      return;
    }
    ThreadLocalRandom random = ThreadLocalRandom.current();
    String key = "k" + random.nextInt(settings.keys);
    CompletableFuture<?> op =
        random.nextInt(10) == 0
            ? client.setAsync(key, value, WriteOptions.DEFAULT)
            : client
                .getAsync(key)
                .thenAccept(
                    found -> {
                      if (found.isEmpty()) {
                        misses.increment();
                      }
                    });
    op.whenComplete(
        (result, failure) -> {
          if (failure != null) {
            failure.printStackTrace();
            done.countDown();
            return;
          }
          counts.ops.increment();
          counts.requests.increment(); // a get or a set is one request
          nextGetSet(client, stopAtNanos, counts, done);
        });
  }

  /** One thread per connection, each making blocking get/set calls: one request in flight per connection. */
  private void syncGetSet(Clients clients, long stopAtNanos, Counts counts)
      throws InterruptedException {
    onThreads(
        clients.oneConnectionEach(settings.syncConnections),
        counts,
        (client, thread) -> {
          ThreadLocalRandom random = ThreadLocalRandom.current();
          while (System.nanoTime() < stopAtNanos) {
            String key = "k" + random.nextInt(settings.keys);
            if (random.nextInt(10) == 0) {
              expectOk(client.set(key, value, WriteOptions.DEFAULT));
            } else if (client.get(key).isEmpty()) {
              misses.increment();
            }
            counts.ops.increment();
          }
        });
  }

  /** Threads reading fresh keys: every read misses, takes the I lease and fills it. */
  private void readMiss(Clients clients, long stopAtNanos, Counts counts)
      throws InterruptedException {
    onThreads(
        Collections.nCopies(settings.threads, clients.pipelined),
        counts,
        (client, thread) -> {
          for (long i = 0; System.nanoTime() < stopAtNanos; i++) {
            String key = "miss:" + System.nanoTime() + ":" + thread + ":" + i;
            if (client.read(key) instanceof ReadResult.Leased leased) {
              try (LeaseHandle lease = leased.lease()) {
                expectOk(lease.fill(value));
              }
              counts.ops.increment();
            }
          }
        });
  }

  /** Threads refreshing their own keys (no contention): qaread, swap, commit. */
  private void refresh(Clients clients, long stopAtNanos, Counts counts)
      throws InterruptedException {
    onThreads(
        Collections.nCopies(settings.threads, clients.pipelined),
        counts,
        (client, thread) -> {
          for (int i = 0; System.nanoTime() < stopAtNanos; i++) {
            String key = "k" + ((thread + (long) i * settings.threads) % settings.keys);
            try (Transaction tx = client.beginTransaction()) {
              if (tx.readForUpdate(key) instanceof RefreshResult.Granted granted) {
                expectOk(granted.lease().swap(value));
                expectOk(tx.commit());
                counts.ops.increment();
              }
            }
          }
        });
  }

  private interface PerThread {
    void run(IqClient client, int thread);
  }

  /** One thread per client, adding the requests each sends to {@code counts}. */
  private static void onThreads(List<IqClient> clients, Counts counts, PerThread body)
      throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < clients.size(); t++) {
      int thread = t;
      IqClient client = clients.get(t);
      Thread worker =
          new Thread(
              () -> {
                long before = client.threadCounters().requests();
                body.run(client, thread);
                counts.requests.add(client.threadCounters().requests() - before);
              },
              "load-" + thread);
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

  private record Row(String workload, Server server, List<Measured> rounds, double baseline) {}

  /** The command line's options. */
  private static final class Settings {
    @Option(
        names = "--memcached",
        paramLabel = "host:port",
        defaultValue = "${env:DENDRITE_MEMCACHED}",
        description = "the memcached to compare with (default: DENDRITE_MEMCACHED)")
    ServerAddress memcached;

    @Option(
        names = "--memcached-pid",
        paramLabel = "N",
        description = "memcached's process (default: the one in the pid file dev/services writes)")
    Long memcachedPid;

    @Option(
        names = "--iq",
        paramLabel = "host:port|child",
        description =
            "an IQ server of your own, or child: one in a child JVM (default: one inside this "
                + "JVM, no CPU figure)")
    String iq;

    @Option(names = "--iq-pid", paramLabel = "N", description = "the process of --iq host:port")
    Long iqPid;

    @Option(
        names = "--connections",
        paramLabel = "N",
        defaultValue = "4",
        description = "connections, pipelined (default ${DEFAULT-VALUE})")
    int connections;

    @Option(
        names = "--window",
        paramLabel = "N",
        defaultValue = "32",
        description = "requests in flight per pipelined connection (default ${DEFAULT-VALUE})")
    int window;

    @Option(
        names = "--sync-connections",
        paramLabel = "N",
        defaultValue = "16",
        description = "connections with one request in flight each (default ${DEFAULT-VALUE})")
    int syncConnections;

    @Option(
        names = "--seconds",
        paramLabel = "N",
        defaultValue = "10",
        description = "measured seconds per phase (default ${DEFAULT-VALUE})")
    int seconds;

    @Option(
        names = "--warmup",
        paramLabel = "N",
        defaultValue = "3",
        description = "unmeasured seconds before every measured phase (default ${DEFAULT-VALUE})")
    int warmupSeconds;

    @Option(
        names = "--iq-warmup",
        paramLabel = "N",
        defaultValue = "10",
        description =
            "unmeasured seconds per get/set shape on the IQ server before the first round "
                + "(default ${DEFAULT-VALUE})")
    int iqWarmupSeconds;

    @Option(
        names = "--keys",
        paramLabel = "N",
        defaultValue = "10000",
        description = "keys preloaded (default ${DEFAULT-VALUE})")
    int keys;

    @Option(
        names = "--threads",
        paramLabel = "N",
        defaultValue = "16",
        description = "threads of the lease paths (default ${DEFAULT-VALUE})")
    int threads;

    @Option(
        names = "--rounds",
        paramLabel = "N",
        defaultValue = "3",
        description = "get/set rounds alternating the servers (default ${DEFAULT-VALUE})")
    int rounds;

    boolean iqChild() {
      return "child".equals(iq);
    }
  }
}
