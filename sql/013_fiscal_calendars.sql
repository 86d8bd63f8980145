-- Fiscal calendars as each filing states them (finrag.facts.calendar), and the
-- cross-checks each fact passed or failed before it may be called verified
-- (finrag.facts.checks).

CREATE TABLE fiscal_calendars (
    document_id     bigint PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    company_id      bigint REFERENCES companies (id) ON DELETE SET NULL,
    year_end_month  smallint NOT NULL CHECK (year_end_month BETWEEN 1 AND 12),
    year_end_day    smallint CHECK (year_end_day BETWEEN 1 AND 31),
    weeks_52_53     boolean NOT NULL DEFAULT false,
    -- added to the calendar year a fiscal year ends in to name it: 0, or -1 for a year
    -- named for the calendar year it begins in
    naming          smallint NOT NULL DEFAULT 0 CHECK (naming IN (-1, 0)),
    source          text NOT NULL,                  -- dei | cover | path | default
    evidence        text NOT NULL DEFAULT '',       -- what it was read from, in words
    ambiguous       text                            -- why it places nothing; NULL = it does
);
CREATE INDEX fiscal_calendars_company_idx ON fiscal_calendars (company_id);

ALTER TABLE facts
    ADD COLUMN checks   text[] NOT NULL DEFAULT '{}',   -- cross-checks passed
    ADD COLUMN failures text[] NOT NULL DEFAULT '{}',   -- "check: why" of those failed
    ADD COLUMN verified boolean NOT NULL DEFAULT false; -- a check passed, none failed
