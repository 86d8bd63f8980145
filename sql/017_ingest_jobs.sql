-- Ingest as jobs in the database (finrag.ingest.jobs): `finrag ingest --workers N` puts one
-- row per file here, and worker processes, on this machine or on any other sharing the
-- database, take them with FOR UPDATE SKIP LOCKED. A job taken is leased: its worker
-- renews lease_until while it works; once a dead worker's lease has run out another
-- worker takes the job over (attempts counts the takes), and the new token makes the old
-- worker's late write fail. A job becomes done in the transaction that writes its
-- document, so a document is stored whole and once, or not at all.
CREATE TABLE ingest_jobs (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    path         text NOT NULL,
    sha256       text NOT NULL,
    spec         jsonb NOT NULL DEFAULT '{}',   -- kind, root, overrides, rebuild
    state        text NOT NULL DEFAULT 'queued'
                 CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts     integer NOT NULL DEFAULT 0,
    worker       text,                           -- host:pid that holds or held it
    token        uuid,                           -- this take of the job
    lease_until  timestamptz,
    result       jsonb,                          -- the file's report, once finished
    enqueued_at  timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    UNIQUE (path, sha256)
);
-- What a worker scans for work: the open jobs only, however many are done.
CREATE INDEX ingest_jobs_open_idx ON ingest_jobs (id) WHERE state IN ('queued', 'running');
