-- Full-text rows keyed by their source row's rowid.
--
-- 0005 found an index row by its UNINDEXED `row_id` column, which FTS5 cannot look
-- up: every text edit or delete scanned the whole index (all of a project's knowledge
-- at 20,000 atoms). Each index row now takes the rowid of its source row, so those
-- are direct lookups. The `row_id` and `project_id` columns stay, so searches read
-- the same columns as before.
--
-- 0005 avoided rowids because VACUUM may renumber the rowids of tables without an
-- INTEGER PRIMARY KEY. The triggers below stay safe if that happens: a delete also
-- checks `row_id`, so it never removes another row's text, and an insert replaces
-- whatever index row holds its rowid, so the index heals as rows are written again.

-- code_entities
DROP TABLE code_entities_fts;
CREATE VIRTUAL TABLE code_entities_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO code_entities_fts (rowid, name, body, row_id, project_id)
  SELECT s.rowid, s.name, s.description, s.id, s.project_id FROM code_entities s;
DROP TRIGGER code_entities_fts_insert;
CREATE TRIGGER code_entities_fts_insert AFTER INSERT ON code_entities BEGIN
  INSERT OR REPLACE INTO code_entities_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, NEW.name, NEW.description, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER code_entities_fts_update;
CREATE TRIGGER code_entities_fts_update AFTER UPDATE OF name, description ON code_entities BEGIN
  DELETE FROM code_entities_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  INSERT OR REPLACE INTO code_entities_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, NEW.name, NEW.description, NEW.id, NEW.project_id);
END;
DROP TRIGGER code_entities_fts_delete;
CREATE TRIGGER code_entities_fts_delete AFTER DELETE ON code_entities BEGIN
  DELETE FROM code_entities_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'entity' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- code_references
DROP TABLE code_references_fts;
CREATE VIRTUAL TABLE code_references_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO code_references_fts (rowid, name, body, row_id, project_id)
  SELECT s.rowid, COALESCE(s.lsp_symbol, '') || ' ' || s.document_path, s.description, s.id, s.project_id FROM code_references s;
DROP TRIGGER code_references_fts_insert;
CREATE TRIGGER code_references_fts_insert AFTER INSERT ON code_references BEGIN
  INSERT OR REPLACE INTO code_references_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, COALESCE(NEW.lsp_symbol, '') || ' ' || NEW.document_path, NEW.description, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER code_references_fts_update;
CREATE TRIGGER code_references_fts_update AFTER UPDATE OF lsp_symbol, document_path, description ON code_references BEGIN
  DELETE FROM code_references_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  INSERT OR REPLACE INTO code_references_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, COALESCE(NEW.lsp_symbol, '') || ' ' || NEW.document_path, NEW.description, NEW.id, NEW.project_id);
END;
DROP TRIGGER code_references_fts_delete;
CREATE TRIGGER code_references_fts_delete AFTER DELETE ON code_references BEGIN
  DELETE FROM code_references_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'reference' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- code_relations
DROP TABLE code_relations_fts;
CREATE VIRTUAL TABLE code_relations_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO code_relations_fts (rowid, name, body, row_id, project_id)
  SELECT s.rowid, '', COALESCE(s.note, ''), s.from_id || ':' || s.to_id, (SELECT project_id FROM code_entities WHERE id = s.from_id) FROM code_relations s;
DROP TRIGGER code_relations_fts_insert;
CREATE TRIGGER code_relations_fts_insert AFTER INSERT ON code_relations BEGIN
  INSERT OR REPLACE INTO code_relations_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, '', COALESCE(NEW.note, ''), NEW.from_id || ':' || NEW.to_id, (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id);
END;
DROP TRIGGER code_relations_fts_update;
CREATE TRIGGER code_relations_fts_update AFTER UPDATE OF note ON code_relations BEGIN
  DELETE FROM code_relations_fts WHERE rowid = OLD.rowid AND row_id = OLD.from_id || ':' || OLD.to_id;
  INSERT OR REPLACE INTO code_relations_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, '', COALESCE(NEW.note, ''), NEW.from_id || ':' || NEW.to_id, (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  DELETE FROM embeddings WHERE source = 'relation' AND row_id = OLD.from_id || ':' || OLD.to_id;
END;
DROP TRIGGER code_relations_fts_delete;
CREATE TRIGGER code_relations_fts_delete AFTER DELETE ON code_relations BEGIN
  DELETE FROM code_relations_fts WHERE rowid = OLD.rowid AND row_id = OLD.from_id || ':' || OLD.to_id;
  DELETE FROM embeddings WHERE source = 'relation' AND row_id = OLD.from_id || ':' || OLD.to_id;
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id);
END;

-- graph_atoms
DROP TABLE graph_atoms_fts;
CREATE VIRTUAL TABLE graph_atoms_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO graph_atoms_fts (rowid, name, body, row_id, project_id)
  SELECT s.rowid, s.name || ' ' || s.paths, s.knowledge, s.id, s.project_id FROM graph_atoms s;
DROP TRIGGER graph_atoms_fts_insert;
CREATE TRIGGER graph_atoms_fts_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT OR REPLACE INTO graph_atoms_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, NEW.name || ' ' || NEW.paths, NEW.knowledge, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER graph_atoms_fts_update;
CREATE TRIGGER graph_atoms_fts_update AFTER UPDATE OF name, paths, knowledge ON graph_atoms BEGIN
  DELETE FROM graph_atoms_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  INSERT OR REPLACE INTO graph_atoms_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, NEW.name || ' ' || NEW.paths, NEW.knowledge, NEW.id, NEW.project_id);
END;
DROP TRIGGER graph_atoms_fts_delete;
CREATE TRIGGER graph_atoms_fts_delete AFTER DELETE ON graph_atoms BEGIN
  DELETE FROM graph_atoms_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- graph_molecules
DROP TABLE graph_molecules_fts;
CREATE VIRTUAL TABLE graph_molecules_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO graph_molecules_fts (rowid, name, body, row_id, project_id)
  SELECT s.rowid, s.name, s.knowledge, s.id, s.project_id FROM graph_molecules s;
DROP TRIGGER graph_molecules_fts_insert;
CREATE TRIGGER graph_molecules_fts_insert AFTER INSERT ON graph_molecules BEGIN
  INSERT OR REPLACE INTO graph_molecules_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, NEW.name, NEW.knowledge, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER graph_molecules_fts_update;
CREATE TRIGGER graph_molecules_fts_update AFTER UPDATE OF name, knowledge ON graph_molecules BEGIN
  DELETE FROM graph_molecules_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  INSERT OR REPLACE INTO graph_molecules_fts (rowid, name, body, row_id, project_id) VALUES (NEW.rowid, NEW.name, NEW.knowledge, NEW.id, NEW.project_id);
  DELETE FROM embeddings WHERE source = 'molecule' AND row_id = OLD.id;
END;
DROP TRIGGER graph_molecules_fts_delete;
CREATE TRIGGER graph_molecules_fts_delete AFTER DELETE ON graph_molecules BEGIN
  DELETE FROM graph_molecules_fts WHERE rowid = OLD.rowid AND row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'molecule' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
