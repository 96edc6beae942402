-- An atom's full-text row is written when a search needs it, not by the write.
--
-- Indexing an atom's knowledge (kilobytes of text) in the transaction that writes it
-- was more than half of what creating an atom cost: FTS5 tokenizes the text, then
-- flushes a segment of its own and merges segments at every commit. The triggers now
-- only note which atoms changed (`search_pending`); before reading `graph_atoms_fts`
-- the store brings it up to date in one statement (an insert into
-- `search_catch_up`), which indexes everything noted in one segment. A search thus
-- sees every write committed before it, from this process or another. Vectors
-- already work this way (embedded before the first search that needs them).
--
-- `row` is the atom's rowid when it was written: the key of its full-text row, which
-- is removed only if it still holds this atom (the 0006 rule).
CREATE TABLE search_pending (
  source TEXT NOT NULL,
  id     TEXT NOT NULL,
  row    INTEGER NOT NULL,
  PRIMARY KEY (source, id)
) WITHOUT ROWID;

-- Never holds a row: inserting one runs the catch-up of its source and is undone.
CREATE TABLE search_catch_up (source TEXT NOT NULL);
CREATE TRIGGER search_catch_up_atoms AFTER INSERT ON search_catch_up WHEN NEW.source = 'atom' BEGIN
  DELETE FROM graph_atoms_fts
   WHERE rowid IN (SELECT row FROM search_pending WHERE source = 'atom')
     AND EXISTS (SELECT 1 FROM search_pending p WHERE p.source = 'atom'
                    AND p.row = graph_atoms_fts.rowid AND p.id = graph_atoms_fts.row_id);
  INSERT OR REPLACE INTO graph_atoms_fts (rowid, name, body, row_id, project_id)
    SELECT s.rowid, s.name || ' ' || s.paths, s.knowledge, s.id, s.project_id
      FROM search_pending p JOIN graph_atoms s ON s.id = p.id
     WHERE p.source = 'atom';
  DELETE FROM search_pending WHERE source = 'atom';
  DELETE FROM search_catch_up;
END;

-- An atom keeps its first note until the catch-up: that note's rowid is where the
-- index holds the atom (an atom deleted and written again under the same id has a
-- new rowid, and its old index row must still go). INSERT ... WHERE NOT EXISTS rather
-- than OR IGNORE, which an outer statement's conflict clause would override.
DROP TRIGGER graph_atoms_fts_insert;
CREATE TRIGGER graph_atoms_fts_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO search_pending (source, id, row) SELECT 'atom', NEW.id, NEW.rowid
   WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE source = 'atom' AND id = NEW.id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER graph_atoms_fts_update;
CREATE TRIGGER graph_atoms_fts_update AFTER UPDATE OF name, paths, knowledge ON graph_atoms BEGIN
  INSERT INTO search_pending (source, id, row) SELECT 'atom', OLD.id, OLD.rowid
   WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE source = 'atom' AND id = OLD.id);
END;
DROP TRIGGER graph_atoms_fts_delete;
CREATE TRIGGER graph_atoms_fts_delete AFTER DELETE ON graph_atoms BEGIN
  INSERT INTO search_pending (source, id, row) SELECT 'atom', OLD.id, OLD.rowid
   WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE source = 'atom' AND id = OLD.id);
  DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
