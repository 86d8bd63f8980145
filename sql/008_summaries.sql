-- Summary nodes (the RAPTOR idea without an LLM): one short extractive summary per section
-- of a document and one for the whole document, searched beside the chunks. A summary is
-- never evidence itself: a hit on it stands for its section, whose best-matching chunks
-- join the ranking (finrag.retrieve.summaries). finrag.ingest.summaries writes them from
-- the stored chunks; they go with their document (ON DELETE CASCADE), so a re-ingest,
-- which replaces the document, rebuilds them.
-- The vector column stays untyped and unindexed: a store holds a few summaries per hundred
-- chunks, and an exact scan of them costs less than the chunk search's HNSW walk.

CREATE TABLE summaries (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id  bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    level        text NOT NULL CHECK (level IN ('section', 'document')),
    section_path text[] NOT NULL DEFAULT '{}',  -- the section's heading path; {} for a document
    chunk_ids    bigint[],                      -- the chunks it stands for; NULL: all of them
    page_start   integer,
    page_end     integer,
    text         text NOT NULL,
    embedding    vector,
    tsv          tsvector GENERATED ALWAYS AS (
        to_tsvector('english'::regconfig, text)
        || to_tsvector('simple'::regconfig, finrag.exact_terms(text))
    ) STORED,
    CHECK (page_end IS NULL OR page_start IS NULL OR page_end >= page_start)
);
CREATE INDEX summaries_document_idx ON summaries (document_id);
CREATE INDEX summaries_tsv_idx ON summaries USING gin (tsv);
