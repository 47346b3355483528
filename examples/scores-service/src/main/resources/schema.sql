CREATE TABLE IF NOT EXISTS scores (id INT PRIMARY KEY, points BIGINT NOT NULL);
INSERT IGNORE INTO scores (id, points) VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0), (8, 0), (9, 0), (10, 0);
