package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.ClientTls;
import io.dendrite.iq.server.ServerTls;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * A self-signed certificate made for one test run with the JDK's {@code keytool} (as the IQ server's {@code TlsIT}
 * does), for 127.0.0.1 and localhost, with the TLS contexts the IQ server and client take: nothing is committed.
 */
record TestCertificates(SSLContext server, SSLContext trusting) {
  private static final String PASSWORD = "test-only";

  static TestCertificates make(Path dir, String name) throws Exception {
    Path keystore = dir.resolve(name + ".p12");
    Path password = dir.resolve(name + ".password");
    Files.writeString(password, PASSWORD + "\n");
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process process =
        new ProcessBuilder(
                keytool.toString(),
                "-genkeypair",
                "-alias",
                name,
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
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    return new TestCertificates(
        ServerTls.fromKeystore(keystore, password),
        ClientTls.trusting(keystore, PASSWORD.toCharArray()));
  }
}
