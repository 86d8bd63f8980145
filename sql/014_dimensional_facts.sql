-- Dimensional and cover-page facts (issue 29): segment, region and product facts are
-- looked up by their member ("aapl:GreaterChinaSegmentMember"), cover-page dei: facts
-- (trading symbols, exchanges, filer category: text kept in `printed`, no value) by
-- concept. Facts already carry their [[axis, member], ...] in `dimensions`; these
-- indexes serve the lookups that ask for one member or one dei: concept.
CREATE INDEX facts_dimensions_idx ON facts USING gin (dimensions jsonb_path_ops)
    WHERE dimensions <> '[]'::jsonb;
CREATE INDEX facts_cover_idx ON facts (company_id, concept) WHERE concept LIKE 'dei:%';
