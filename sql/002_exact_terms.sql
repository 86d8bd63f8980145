-- Exact finance acronyms in full-text search: "PP&E", "SG&A", "M&A", "10-K", "COVID-19".
-- The english parser splits them at '&' and '-' ("M&A" even loses its stop-word "a"),
-- so a question about M&A matched every chunk with an "m" in it. Each such token is also
-- indexed glued and lower-cased ('ppe', 'sga', 'ma', '10k', 'covid19') with the 'simple'
-- configuration (only tokens with a capital letter: dates and year ranges stay out);
-- finrag.retrieve.hybrid sends the same glued form for them.

CREATE FUNCTION finrag.exact_terms(body text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT coalesce(string_agg(lower(translate(m[1], '&/-', '')), ' '), '')
    FROM regexp_matches(
        body,
        '(?<![A-Za-z0-9&/-])((?=[A-Z0-9&/-]*[A-Z])[A-Z0-9]{1,6}(?:[&/-][A-Z0-9]{1,6})+)(?![A-Za-z0-9&/-])',
        'g'
    ) AS m
$$;

DROP INDEX chunks_tsv_idx;
ALTER TABLE chunks DROP COLUMN tsv;
ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('english'::regconfig, embed_text)
    || to_tsvector('simple'::regconfig, finrag.exact_terms(embed_text))
) STORED;
CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv);
