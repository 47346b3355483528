package io.dendrite.examples.scores;

import io.dendrite.core.Dendrite;
import java.util.List;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The service's two calls, each one Dendrite call. */
@RestController
public class ScoresController {
  private final Dendrite<Integer, Score> scores;

  public ScoresController(Dendrite<Integer, Score> scores) {
    this.scores = scores;
  }

  /** The scores with ids in [{@code from}, {@code to}]: from the cache, or from MariaDB on a miss. */
  @GetMapping("/scores")
  public List<Score> range(@RequestParam int from, @RequestParam int to) {
    return scores.get("byId", from, to);
  }

  /** Sets one score's points: MariaDB first, then every cached range that holds the row. */
  @PutMapping("/scores/{id}")
  public ResponseEntity<Void> update(@PathVariable int id, @RequestBody Points points) {
    scores.write("set", id, id, new Score(id, points.points()));
    return ResponseEntity.noContent().build();
  }

  /** The body of an update. */
  public record Points(long points) {}
}
