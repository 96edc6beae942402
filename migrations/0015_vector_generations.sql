-- Vector writes move a counter of their own.
--
-- Every write to `embeddings` bumped `semantic_generations`, the counter that also says
-- whether a project's entities, references and edges changed. Since texts are
-- embedded in the background (issue 18), batch after batch for minutes after a large
-- import, each batch made `query` reload the project's whole entity graph although no
-- entity had changed. Vector writes now bump `vector_generations` instead: a
-- snapshot of vectors is checked against the sum of the three counters, the entity
-- graph against the other two. The sum still grows with every write it covers, so a
-- cached value is never trusted past a change.
--
-- Numbered 0015: 0013 and 0014 are taken on other branches.

CREATE TABLE vector_generations (
  project_id TEXT PRIMARY KEY NOT NULL,
  generation INTEGER NOT NULL
);
CREATE TRIGGER vector_generations_cleanup AFTER DELETE ON projects BEGIN
  DELETE FROM vector_generations WHERE project_id = OLD.id;
END;

-- Rows are made with INSERT … WHERE NOT EXISTS, then moved: the writes that fire
-- these triggers are upserts, whose conflict handling would override an OR IGNORE
-- inside a trigger (see migration 0005).
DROP TRIGGER embeddings_semantic_insert;
DROP TRIGGER embeddings_semantic_update;
DROP TRIGGER embeddings_semantic_delete;
CREATE TRIGGER embeddings_vector_insert AFTER INSERT ON embeddings BEGIN
  INSERT INTO vector_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM vector_generations WHERE project_id = NEW.project_id);
  UPDATE vector_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER embeddings_vector_update AFTER UPDATE ON embeddings BEGIN
  INSERT INTO vector_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM vector_generations WHERE project_id = NEW.project_id);
  UPDATE vector_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER embeddings_vector_delete AFTER DELETE ON embeddings BEGIN
  INSERT INTO vector_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM vector_generations WHERE project_id = OLD.project_id);
  UPDATE vector_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
