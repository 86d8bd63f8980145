-- How many chunks hold each full-text lexeme, for IDF weighting of full-text search.
-- ts_rank_cd knows nothing of how rare a word is: "amount" weighed as much as
-- "expenditure". finrag.retrieve.hybrid ranks with BM25-style weights from these counts
-- and leaves out terms that occur in most chunks (they match everything and cost time).
-- The row with lexeme '' holds the number of chunks. Statement-level triggers keep the
-- counts exact through COPY, DELETE and ON DELETE CASCADE, in the writer's transaction.

CREATE TABLE lexeme_stats (
    lexeme  text PRIMARY KEY,
    chunks  bigint NOT NULL CHECK (chunks >= 0)
);

CREATE FUNCTION finrag.count_added_lexemes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO finrag.lexeme_stats AS s (lexeme, chunks)
    SELECT u.lexeme, count(*) FROM added, unnest(added.tsv) AS u GROUP BY u.lexeme
    UNION ALL
    SELECT '', count(*) FROM added
    ORDER BY 1  -- a fixed order: concurrent writers take row locks alike, no deadlock
    ON CONFLICT (lexeme) DO UPDATE SET chunks = s.chunks + excluded.chunks;
    RETURN NULL;
END
$$;

CREATE FUNCTION finrag.count_removed_lexemes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE finrag.lexeme_stats AS s SET chunks = s.chunks - gone.chunks
    FROM (
        SELECT u.lexeme, count(*) AS chunks FROM removed, unnest(removed.tsv) AS u
        GROUP BY u.lexeme
        UNION ALL
        SELECT '', count(*) FROM removed
    ) AS gone
    WHERE s.lexeme = gone.lexeme;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_count_added AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION finrag.count_added_lexemes();
CREATE TRIGGER chunks_count_removed AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
    EXECUTE FUNCTION finrag.count_removed_lexemes();

-- Chunks stored before this migration.
INSERT INTO lexeme_stats (lexeme, chunks)
SELECT u.lexeme, count(*) FROM chunks, unnest(chunks.tsv) AS u GROUP BY u.lexeme
UNION ALL
SELECT '', count(*) FROM chunks;
