-- Identical chunk texts are embedded once (finrag.db.stored_vectors): filings repeat their
-- boilerplate, and one store holds one embedding space (embedding_model), so a vector
-- stored for the same embed_text is the vector the embedder would make again. This index
-- finds it by the text's md5 without reading the texts themselves; the caller compares the
-- texts, so a collision costs an embedding, never a wrong vector.
CREATE INDEX chunks_embed_text_md5_idx ON chunks (md5(embed_text));
