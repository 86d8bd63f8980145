-- Schema v1: filings, their chunks, companies, the embedding model, conversations, eval runs.
-- The vector column has no dimension here: finrag.db.embedding_space fixes it (and builds
-- the HNSW index) from the configured embedder the first time the store is opened.
-- Everything lives in the schema "finrag" (first on the search_path), so a shared external
-- database keeps its other tables and `finrag db reset` can drop ours alone.

CREATE TABLE companies (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL UNIQUE,               -- canonical: "3M Company"
    ticker      text UNIQUE,                        -- "MMM"
    cik         text UNIQUE,                        -- SEC Central Index Key, when known
    aliases     text[] NOT NULL DEFAULT '{}',       -- lower-cased: {"3m", "3m co", "mmm"}
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX companies_aliases_idx ON companies USING gin (aliases);

CREATE TABLE documents (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    path            text NOT NULL UNIQUE,           -- absolute path at ingest time
    sha256          text NOT NULL,                  -- of the file's bytes
    pipeline_hash   text NOT NULL,                  -- of parser/chunker/embedder settings
    parser          text NOT NULL,
    company_id      bigint REFERENCES companies (id) ON DELETE SET NULL,
    form_type       text,                           -- "10-K", "10-Q", "8-K", "EARNINGS", ...
    fiscal_year     smallint CHECK (fiscal_year BETWEEN 1900 AND 2200),
    fiscal_quarter  smallint CHECK (fiscal_quarter BETWEEN 1 AND 4),
    period_end      date,
    metadata_source jsonb NOT NULL DEFAULT '{}',    -- field -> "path" | "content" | "override"
    pages           integer CHECK (pages >= 0),
    ingested_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_filter_idx ON documents (company_id, fiscal_year, fiscal_quarter, form_type);
CREATE INDEX documents_sha256_idx ON documents (sha256);

CREATE TABLE chunks (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id   bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    ordinal       integer NOT NULL,                 -- position in the document
    kind          text NOT NULL CHECK (kind IN ('text', 'table')),
    page_start    integer,                          -- 1-based, as printed by our parsers
    page_end      integer,
    section_path  text[] NOT NULL DEFAULT '{}',     -- {"Part II", "Item 7. MD&A", ...}
    content       text NOT NULL,                    -- what the LLM reads
    embed_text    text NOT NULL,                    -- what is embedded and full-text indexed
    tokens        integer NOT NULL CHECK (tokens >= 0),
    embedding     vector,
    tsv           tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, embed_text)) STORED,
    UNIQUE (document_id, ordinal),
    CHECK (page_end IS NULL OR page_start IS NULL OR page_end >= page_start)
);
CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv);

-- One row: the model whose vectors the store holds. Mixing models is never allowed.
CREATE TABLE embedding_model (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    model_id    text NOT NULL,
    dimension   integer NOT NULL CHECK (dimension > 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE conversations (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE messages (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id  bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    turn             integer NOT NULL,
    role             text NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content          text NOT NULL,
    citations        jsonb NOT NULL DEFAULT '[]',
    trace            jsonb,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation_idx ON messages (conversation_id, turn);

CREATE TABLE eval_runs (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('retrieval', 'answers')),
    dataset      text NOT NULL,
    settings     jsonb NOT NULL,
    git_commit   text,
    metrics      jsonb,
    started_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
