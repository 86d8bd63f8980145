-- What each chunk's section is about (finrag.ingest.sections): a statement, a note, an
-- Item. Read from its heading path (and a table's title) at ingest; its words also open
-- the chunk's embedded text, so both retrievers see it. Chunks stored before this
-- migration stay NULL until `finrag ingest --rebuild` re-chunks them (chunker version 3
-- makes their documents read as stale).

ALTER TABLE chunks ADD COLUMN section_kind text CHECK (section_kind IN (
    'income_statement', 'balance_sheet', 'cash_flows', 'equity_statement', 'debt_note',
    'segment_note', 'legal_proceedings', 'risk_factors', 'customers_concentration',
    'acquisitions', 'mdna', 'guidance_outlook', 'business', 'other'
));
