-- Pages of a PDF without a text layer (scans): those OCR read, and those left unread (no
-- OCR engine, or OCR found no text), per document; a chunk from an OCR'd page says so, and
-- so do its citations. A document with skipped pages is read again by the next ingest on a
-- machine where OCR is available.

ALTER TABLE documents ADD COLUMN ocr_pages integer[] NOT NULL DEFAULT '{}';
ALTER TABLE documents ADD COLUMN skipped_pages integer[] NOT NULL DEFAULT '{}';
ALTER TABLE chunks ADD COLUMN ocr boolean NOT NULL DEFAULT false;
