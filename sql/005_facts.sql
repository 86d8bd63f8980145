-- Facts: every number a filing reports, typed. From inline XBRL (concept, context, unit,
-- scale, sign) and from printed tables (row label, column period, units note). Values are
-- in base units (millions scaled out, parentheses negative, "—" zero); a nil fact's value
-- is NULL. A fact is replaced and removed with its document (ON DELETE CASCADE).

CREATE TABLE facts (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id     bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    company_id      bigint REFERENCES companies (id) ON DELETE SET NULL,
    chunk_id        bigint REFERENCES chunks (id) ON DELETE SET NULL,  -- where it is printed
    source          text NOT NULL CHECK (source IN ('ixbrl', 'table')),
    concept         text,                           -- "us-gaap:Revenues" when tagged
    label           text,                           -- the row label as printed
    label_norm      text,                           -- finrag.facts.model.normalize_label
    parents         text[] NOT NULL DEFAULT '{}',   -- section rows above: {"Current assets"}
    value           numeric,
    unit            text,                           -- USD, shares, USD/shares, %, pure, ...
    decimals        integer,                        -- XBRL precision; NULL = INF or untagged
    period_start    date,                           -- durations from XBRL contexts only
    period_end      date,                           -- a duration's last day, or the instant
    instant         boolean NOT NULL DEFAULT false,
    months          smallint CHECK (months BETWEEN 1 AND 120),
    fiscal_year     smallint CHECK (fiscal_year BETWEEN 1900 AND 2200),
    fiscal_quarter  smallint CHECK (fiscal_quarter BETWEEN 1 AND 4),
    dimensions      jsonb NOT NULL DEFAULT '[]',    -- [[axis, member], ...]; [] = entity total
    statement       text NOT NULL CHECK (statement IN (
                        'income_statement', 'balance_sheet', 'cash_flow', 'equity',
                        'comprehensive_income', 'segment', 'other_table', 'text')),
    page            integer,
    table_row       integer,
    table_column    integer,
    printed         text NOT NULL DEFAULT ''        -- the cell or element text as printed
);
CREATE INDEX facts_concept_idx ON facts (company_id, concept, fiscal_year, fiscal_quarter)
    WHERE concept IS NOT NULL;
CREATE INDEX facts_label_idx ON facts (company_id, label_norm, fiscal_year, fiscal_quarter);
CREATE INDEX facts_document_idx ON facts (document_id);
