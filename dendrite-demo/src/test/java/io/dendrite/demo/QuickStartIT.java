package io.dendrite.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The README's example is {@link QuickStart}, word for word, and it runs: against a real MariaDB and an IQ server it
 * prints the range before and after its write, and the write reaches the table.
 */
@ExtendWith(RealServers.class)
class QuickStartIT {

  @Test
  void theReadmeShowsQuickStartAsItIs() throws Exception {
    String source = Files.readString(Path.of("src/main/java/io/dendrite/demo/QuickStart.java"));
    String readme = Files.readString(Path.of("../README.md"));
    assertThat(readme).contains("```java\n" + source + "```\n");
  }

  @Test
  void quickStartCachesTheRangeAndWritesThrough(MySqlTestDatabase database) throws Exception {
    try (Connection db = database.connect();
        Statement statement = db.createStatement()) {
      statement.execute("CREATE TABLE scores (id INT PRIMARY KEY, points BIGINT NOT NULL)");
      statement.execute(
          "INSERT INTO scores SELECT seq, seq * 10 FROM seq_0_to_199"); // MariaDB's sequence engine
    }
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = System.out;
    try (IqServer server = IqServer.start(IqServerConfig.builder().port(0).build())) {
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      QuickStart.main(new String[] {database.jdbcUrl(), "127.0.0.1:" + server.port()});
    } finally {
      System.setOut(out);
    }
    String[] lines = printed.toString(StandardCharsets.UTF_8).split("\n");
    assertThat(lines).hasSize(2);
    assertThat(lines[0])
        .contains("Score[id=102, points=1020]")
        .contains("Score[id=104, points=1040]");
    assertThat(lines[1]).contains("Score[id=102, points=42]").doesNotContain("points=1020");
    try (Connection db = database.connect();
        Statement statement = db.createStatement();
        ResultSet row = statement.executeQuery("SELECT points FROM scores WHERE id = 102")) {
      assertThat(row.next()).isTrue();
      assertThat(row.getLong(1)).isEqualTo(42);
    }
  }
}
