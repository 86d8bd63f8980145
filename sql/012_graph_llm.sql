-- The LLM's share of the knowledge graph (`ingest --graph llm`, finrag.graph.llm_pass).
-- A relation says which extractor wrote it, so `finrag graph` can show a model's reading
-- apart from the rules' and a re-run can replace it. graph_runs records, per document,
-- the model and prompt that read it and how far it got within its time budget: an
-- unchanged file ingested again with the same model is not read again.

ALTER TABLE relations
    ADD COLUMN extractor text NOT NULL DEFAULT 'rules' CHECK (extractor IN ('rules', 'llm'));

CREATE TABLE graph_runs (
    document_id  bigint PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    model        text NOT NULL,         -- "ollama:qwen2.5:7b-instruct"
    prompt       text NOT NULL,         -- the graph prompt's digest
    candidates   integer NOT NULL,      -- passages chosen to be read
    chunks_read  integer NOT NULL,      -- read within the budget
    relations    integer NOT NULL,      -- kept (grounded in the passage)
    dropped      integer NOT NULL,      -- proposed but not in the passage's words
    failed       integer NOT NULL,      -- calls that timed out or returned no valid JSON
    seconds      double precision NOT NULL,
    complete     boolean NOT NULL,      -- every candidate read before the budget ran out
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- A new reading changes what the +graph variant retrieves: cached answers are stale.
CREATE TRIGGER graph_runs_change_store_version
    AFTER INSERT OR UPDATE OR DELETE ON graph_runs
    FOR EACH STATEMENT EXECUTE FUNCTION bump_store_version();
