-- The semantic layer's vectors: one row per embedded text, whatever table the text
-- lives in. `source` names the kind of row (registry in src/store/embedding.rs: atom,
-- molecule, entity, reference, relation), `row_id` its id, `project_id` its tenant, so
-- search loads one project's vectors with one index range.
--
-- `model` is the embedder id that made the vector (all-minilm-l6-v2, hashing-v1): a row
-- whose model differs from the running embedder is re-embedded. `text_hash` is the FNV-1a
-- hash of the embedded text, so a re-index skips unchanged texts. `vector` is `dim`
-- little-endian f32 (L2-normalised). `truncated` says the text was longer than the
-- model's window and only its beginning was embedded.
--
-- A changed text marks its row for embedding by deleting its vector: each source table
-- gets, in its own migration, triggers of the form
--   CREATE TRIGGER atoms_embed_stale AFTER UPDATE OF name, knowledge ON atoms BEGIN
--     DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id; END;
--   CREATE TRIGGER atoms_embed_gone AFTER DELETE ON atoms BEGIN
--     DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id; END;
-- so a write never waits for the model, and the rows with no vector are the ones to embed.

CREATE TABLE embeddings (
  source      TEXT NOT NULL,
  row_id      TEXT NOT NULL,
  project_id  TEXT NOT NULL,
  model       TEXT NOT NULL,
  dim         INTEGER NOT NULL,
  vector      BLOB NOT NULL,
  text_hash   TEXT NOT NULL,
  truncated   INTEGER NOT NULL DEFAULT 0,
  embedded_at TEXT NOT NULL,
  PRIMARY KEY (source, row_id)
);

CREATE INDEX embeddings_project ON embeddings (project_id, source);

-- Deleting a project removes everything it owns, its vectors included.
CREATE TRIGGER projects_embeddings_cleanup AFTER DELETE ON projects BEGIN
  DELETE FROM embeddings WHERE project_id = OLD.id;
END;
