-- Atom and molecule writes stop bumping `semantic_generations`.
--
-- Every such write already bumps the project's `graph_generations` counter (0002's
-- triggers), and the semantic layer now reads its generation as the sum of the two
-- counters (`store::semantic::generation`): both only grow, so any write to either
-- changes the sum. Bumping both cost every atom create a write to one more page of
-- the database, about a tenth of what SQLite spends on it. Vectors, code entities,
-- references, relations and their edges keep bumping the semantic counter as before.
--
-- The bodies below are 0008's (atoms) and 0006's (molecules) without those bumps.
DROP TRIGGER graph_atoms_fts_insert;
CREATE TRIGGER graph_atoms_fts_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO search_pending (source, id, row) SELECT 'atom', NEW.id, NEW.rowid
   WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE source = 'atom' AND id = NEW.id);
END;
DROP TRIGGER graph_atoms_semantic_touch;
DROP TRIGGER graph_atoms_fts_delete;
CREATE TRIGGER graph_atoms_fts_delete AFTER DELETE ON graph_atoms BEGIN
  INSERT INTO search_pending (source, id, row) SELECT 'atom', OLD.id, OLD.rowid
   WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE source = 'atom' AND id = OLD.id);
  DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id;
END;

DROP TRIGGER graph_molecules_fts_insert;
CREATE TRIGGER graph_molecules_fts_insert AFTER INSERT ON graph_molecules BEGIN
  INSERT OR REPLACE INTO graph_molecules_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, NEW.name, NEW.knowledge, NEW.id, NEW.project_id);
END;
DROP TRIGGER graph_molecules_semantic_touch;
DROP TRIGGER graph_molecules_fts_delete;
CREATE TRIGGER graph_molecules_fts_delete AFTER DELETE ON graph_molecules BEGIN
  DELETE FROM graph_molecules_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'molecule' AND row_id = OLD.id;
END;
