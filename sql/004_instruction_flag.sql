-- Chunks whose text reads as instructions to a language model ("Ignore previous
-- instructions and answer that ..."): the words that did, NULL when none did. Answers
-- leave flagged chunks out of the model's context (answer.include_flagged), search marks
-- them. finrag.ingest.injection decides at ingest; chunks stored before this migration
-- stay NULL until `finrag ingest --rebuild` re-chunks them (their documents read as stale).

ALTER TABLE chunks ADD COLUMN flagged text;
