-- The knowledge graph (HybridRAG): who and what a filing names, and how they relate, each
-- relation tied to the chunk that states it, so the graph retriever (finrag.graph.retrieve)
-- can answer "who audits X", "which segments does X report" with that chunk.
-- finrag.graph.extract writes them from a document's stored chunks at ingest, by rules on
-- the filing's own structure (auditor's report, segment note, signatures, Exhibit 21).
-- Entities and relations are per document and go with it (ON DELETE CASCADE): a re-ingest,
-- which replaces the document, rebuilds them; `docs rm` removes them. The same name in two
-- filings is two rows, joined by name_norm at query time, so no document owns another's.

CREATE TABLE entities (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id  bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    company_id   bigint REFERENCES companies (id) ON DELETE SET NULL,  -- the filer
    kind         text NOT NULL CHECK (kind IN (
                     'company', 'subsidiary', 'segment', 'product', 'person', 'auditor',
                     'customer', 'competitor', 'place')),
    name         text NOT NULL,                  -- as printed: "Deloitte & Touche LLP"
    name_norm    text NOT NULL,                  -- finrag.graph.model.normalize_name
    aliases      text[] NOT NULL DEFAULT '{}',   -- normalized too: {"deloitte"}
    UNIQUE (document_id, kind, name_norm)
);
CREATE INDEX entities_company_idx ON entities (company_id, kind);
CREATE INDEX entities_name_idx ON entities (name_norm);
CREATE INDEX entities_aliases_idx ON entities USING gin (aliases);

-- A triple (subject, predicate, object) and where it is stated. Predicates are open
-- (has_segment, has_subsidiary, audited_by, has_executive, sells, located_in, ...), so an
-- LLM extractor can add its own without a migration; the CHECK keeps them identifiers.
CREATE TABLE relations (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id  bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    subject_id   bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    predicate    text NOT NULL CHECK (predicate ~ '^[a-z][a-z_]{1,40}$'),
    object_id    bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    chunk_id     bigint NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,  -- states it
    page         integer,
    evidence     text NOT NULL DEFAULT '',       -- the words the rule matched, for display
    UNIQUE (subject_id, predicate, object_id, chunk_id)
);
CREATE INDEX relations_subject_idx ON relations (subject_id);
CREATE INDEX relations_object_idx ON relations (object_id);
CREATE INDEX relations_chunk_idx ON relations (chunk_id);
CREATE INDEX relations_document_idx ON relations (document_id);
