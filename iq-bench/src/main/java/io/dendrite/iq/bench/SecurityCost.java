package io.dendrite.iq.bench;

import io.dendrite.iq.client.ClientTls;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.server.Credentials;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import io.dendrite.iq.server.ServerTls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What a login and TLS cost the cache tier: get/set throughput against an embedded IQ server served plainly, with
 * a login, and through TLS, side by side in one run (rounds interleaved, so the shared machine's noise falls on
 * all alike, after one unmeasured warm-up round). Certificates are made with the JDK's keytool for the run.
 *
 * <pre>
 * java -cp iq-bench/target/iq-bench.jar io.dendrite.iq.bench.SecurityCost [--threads 4] [--seconds 5] [--rounds 3]
 * </pre>
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "SecurityCost",
    description =
        "Get/set throughput of an embedded IQ server: plain, with a login, through TLS, and both.")
public final class SecurityCost implements Callable<Integer> {
  private static final String PASSWORD = "bench-only";
  private static final int KEYS = 1_000;

  @Option(
      names = "--threads",
      paramLabel = "N",
      defaultValue = "4",
      description = "client threads and connections (default ${DEFAULT-VALUE})")
  private int threads;

  @Option(
      names = "--seconds",
      paramLabel = "N",
      defaultValue = "5",
      description = "measured seconds per setup and round (default ${DEFAULT-VALUE})")
  private int seconds;

  @Option(
      names = "--rounds",
      paramLabel = "N",
      defaultValue = "3",
      description = "measured rounds (default ${DEFAULT-VALUE})")
  private int rounds;

  private SecurityCost() {}

  public static void main(String[] args) {
    System.exit(
        new CommandLine(new SecurityCost()).setOverwrittenOptionsAllowed(true).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Path dir = Files.createTempDirectory("security-cost");
    Path passwordFile = dir.resolve("password");
    Files.writeString(passwordFile, PASSWORD);
    keytool(dir.resolve("server.p12"));
    SSLContext serverTls = ServerTls.fromKeystore(dir.resolve("server.p12"), passwordFile);
    SSLContext clientTls = ClientTls.trusting(dir.resolve("server.p12"), PASSWORD.toCharArray());

    Map<String, Setup> setups = new LinkedHashMap<>();
    setups.put("plain", new Setup(b -> b, c -> c));
    setups.put(
        "login",
        new Setup(
            b -> b.credentials(Credentials.of(Map.of("bench", PASSWORD))),
            c -> c.login("bench", PASSWORD)));
    setups.put("tls", new Setup(b -> b.tls(serverTls), c -> c.tls(clientTls)));
    setups.put(
        "login+tls",
        new Setup(
            b -> b.tls(serverTls).credentials(Credentials.of(Map.of("bench", PASSWORD))),
            c -> c.tls(clientTls).login("bench", PASSWORD)));

    // One unmeasured round first: the JIT warms up on the first setup's run otherwise.
    for (Setup setup : setups.values()) {
      run(setup, threads, Math.max(1, seconds / 2));
    }
    Map<String, List<Double>> results = new LinkedHashMap<>();
    for (int round = 1; round <= rounds; round++) {
      for (Map.Entry<String, Setup> setup : setups.entrySet()) {
        double opsPerSecond = run(setup.getValue(), threads, seconds);
        results.computeIfAbsent(setup.getKey(), k -> new ArrayList<>()).add(opsPerSecond);
        System.out.printf("round %d %-10s %,10.0f ops/s%n", round, setup.getKey(), opsPerSecond);
      }
    }
    List<Double> plain = results.get("plain");
    System.out.println();
    System.out.println("| setup | ops/s per round | × plain (mean of rounds) |");
    System.out.println("|---|---|---:|");
    for (Map.Entry<String, List<Double>> result : results.entrySet()) {
      double ratio = 0;
      StringBuilder perRound = new StringBuilder();
      for (int i = 0; i < result.getValue().size(); i++) {
        ratio += result.getValue().get(i) / plain.get(i);
        perRound
            .append(i == 0 ? "" : ", ")
            .append(String.format("%,.0f", result.getValue().get(i)));
      }
      System.out.printf(
          "| %s | %s | %.2f |%n", result.getKey(), perRound, ratio / result.getValue().size());
    }
    return CommandLine.ExitCode.OK;
  }

  private record Setup(
      UnaryOperator<IqServerConfig.Builder> server, UnaryOperator<IqClient.Builder> client) {}

  /** Threads alternate a get and a set of 100-byte values over {@value #KEYS} keys; returns operations/s. */
  private static double run(Setup setup, int threads, int seconds) throws Exception {
    try (IqServer server =
            IqServer.start(setup.server().apply(IqServerConfig.builder().port(0)).build());
        IqClient client =
            setup
                .client()
                .apply(
                    IqClient.builder()
                        .servers("127.0.0.1:" + server.port())
                        .connectionsPerServer(threads))
                .build()) {
      byte[] value = new byte[100];
      for (int k = 0; k < KEYS; k++) {
        client.set("k" + k, value);
      }
      LongAdder operations = new LongAdder();
      long end = System.nanoTime() + seconds * 1_000_000_000L;
      CountDownLatch done = new CountDownLatch(threads);
      for (int t = 0; t < threads; t++) {
        int seed = t;
        Thread worker =
            new Thread(
                () -> {
                  int k = seed;
                  while (System.nanoTime() < end) {
                    String key = "k" + (k = (k + 7) % KEYS);
                    client.get(key);
                    client.set(key, value);
                    operations.add(2);
                  }
                  done.countDown();
                });
        worker.start();
      }
      done.await();
      return operations.sum() / (double) seconds;
    }
  }

  private static void keytool(Path keystore) throws Exception {
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process process =
        new ProcessBuilder(
                keytool.toString(),
                "-genkeypair",
                "-alias",
                "server",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=localhost",
                "-ext",
                "san=ip:127.0.0.1,dns:localhost",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                keystore.toString(),
                "-storepass",
                PASSWORD,
                "-keypass",
                PASSWORD)
            .inheritIO()
            .start();
    if (process.waitFor() != 0) {
      throw new IllegalStateException("keytool failed");
    }
  }
}
