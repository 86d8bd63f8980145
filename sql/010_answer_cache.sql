-- The semantic answer cache (finrag.answer.cache): an answered question, its embedding,
-- and the key it was answered under, so a paraphrase asked again is answered at once.
-- A cached answer stands only for the store it was written from: store_version counts
-- every change to the documents (ingest, replace, rm), bumped by a trigger, and an entry
-- of another version is never returned. The vector column stays untyped and unindexed,
-- like the summaries': a store caches a few hundred answers, an exact scan costs little.

CREATE TABLE store_version (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version    bigint NOT NULL DEFAULT 0
);
INSERT INTO store_version DEFAULT VALUES;

-- SET search_path FROM CURRENT: the trigger finds the table from any session (psql too).
CREATE FUNCTION bump_store_version() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE store_version SET version = version + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER documents_change_store_version
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON documents
    FOR EACH STATEMENT EXECUTE FUNCTION bump_store_version();

CREATE TABLE answer_cache (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    question       text NOT NULL,
    embedding      vector NOT NULL,
    key            text NOT NULL,     -- resolved filters, question plan and settings, hashed
    key_words      jsonb NOT NULL,    -- the same, readable (`finrag cache list`)
    store_version  bigint NOT NULL,
    answer         jsonb NOT NULL,    -- Answer.as_dict()
    created_at     timestamptz NOT NULL DEFAULT now(),
    hits           integer NOT NULL DEFAULT 0,
    last_hit_at    timestamptz
);
CREATE INDEX answer_cache_key_idx ON answer_cache (key, store_version);
