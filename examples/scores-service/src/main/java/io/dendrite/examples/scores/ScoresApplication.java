package io.dendrite.examples.scores;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.RowCodec;
import io.dendrite.core.WriteCommand;
import io.dendrite.spring.boot.Dendrites;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A REST service over MariaDB ({@code GET /scores?from=&to=}, {@code PUT /scores/{id}}) whose reads and writes go
 * through a Dendrite: the starter builds it with the {@code dendrite.*} settings of {@code application.yml}, and this
 * bean binds only the table, the range, the query and the command.
 */
@SpringBootApplication
public class ScoresApplication {
  static final RowCodec<Integer, Score> ROWS = RowCodec.ofRecord(Score.class, Score::id, Score::id);

  public static void main(String[] args) {
    SpringApplication.run(ScoresApplication.class, args);
  }

  @Bean
  Dendrite<Integer, Score> scores(Dendrites dendrites, ScoresTable table) {
    return dendrites.build(
        DomainType.INTEGER,
        ROWS,
        builder ->
            builder
                .collection("scores")
                .domain("id")
                .range(1, 1_000_000)
                .query("byId", table::select) // runs on a miss
                .command("set", WriteCommand.putting(Score.class, ROWS, table::update)));
  }
}
