-- One entity across filings (issue 30): "Corie S. Barry" in a 10-K and "Corie Barry" in
-- the 10-Q, "Ernst & Young LLP" auditing three filers, "Best Buy Co., Inc." and "Best Buy".
-- entities.canonical is a rule-based key computed from the stored name, so rows of
-- different documents that name the same person or organization share it, and graph
-- retrieval (finrag.graph.retrieve) joins on it. A generated column: stores built before
-- this migration get their keys here, and no writer can forget to set one.
--
-- The rules, from how filings print names (not from any question set):
--   person        name_norm without initials ("s"), suffixes (jr, sr, ii, iii, iv) and
--                 honorifics (mr, mrs, ms, dr): "corie s barry" -> "corie barry";
--   organization  (company, subsidiary, auditor, customer, competitor) without a leading
--                 "the", an EDGAR state tag ("Wells Fargo & Company/MN") and the trailing
--                 legal forms, repeated ("co inc", "& company", "llp", "l l c", "n v"):
--                 "best buy co inc" -> "best buy", "ernst & young llp" -> "ernst & young";
--   others        (segment, product, place) name_norm as it is.
-- A key the rules would leave empty ("Company") stays name_norm.

CREATE FUNCTION entity_key(kind text, name text, name_norm text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(nullif(btrim(CASE
        WHEN kind = 'person' THEN regexp_replace(
            regexp_replace(' ' || name_norm || ' ',
                           '\s(?:[a-z]|jr|sr|ii|iii|iv|mr|mrs|ms|dr)(?=\s)', ' ', 'g'),
            '\s+', ' ', 'g')
        WHEN kind IN ('company', 'subsidiary', 'auditor', 'customer', 'competitor') THEN
            regexp_replace(
                regexp_replace(
                    CASE WHEN name ~ '/[A-Za-z]{2,3}/?\s*$'
                         THEN regexp_replace(name_norm, '\s[a-z]{2,3}$', '')
                         ELSE name_norm END,
                    '^the\s', ''),
                '(?:\s(?:&|inc|incorporated|corp|corporation|co|company|ltd|limited|llc|l l c|'
                'llp|l l p|lp|l p|plc|n v|nv|s a|sa|ag|gmbh|b v|bv))+$', '')
        ELSE name_norm
    END), ''), name_norm)
$$;

ALTER TABLE entities
    ADD COLUMN canonical text GENERATED ALWAYS AS (entity_key(kind, name, name_norm)) STORED;
CREATE INDEX entities_canonical_idx ON entities (kind, canonical);
