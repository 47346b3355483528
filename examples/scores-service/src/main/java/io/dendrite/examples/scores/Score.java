package io.dendrite.examples.scores;

/** A row of {@code scores (id INT PRIMARY KEY, points BIGINT NOT NULL)}, and the JSON the service speaks. */
public record Score(int id, long points) {}
