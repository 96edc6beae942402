-- Fix for 0005 (already applied, so not edited): its triggers created a project's
-- `semantic_generations` row with INSERT OR IGNORE. Inside a trigger the outer
-- statement's conflict handling replaces OR IGNORE, so an upsert into `embeddings`
-- (re-embedding a row that has a vector, e.g. `cairn reindex --all`) failed with UNIQUE
-- on semantic_generations. Every such trigger is recreated with the row created by
-- INSERT ... WHERE NOT EXISTS, which never conflicts.

DROP TRIGGER code_entities_fts_insert;
CREATE TRIGGER code_entities_fts_insert AFTER INSERT ON code_entities BEGIN
  INSERT INTO code_entities_fts (name, body, row_id, project_id) VALUES (NEW.name, NEW.description, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER code_entities_semantic_touch;
CREATE TRIGGER code_entities_semantic_touch AFTER UPDATE ON code_entities BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER code_entities_fts_delete;
CREATE TRIGGER code_entities_fts_delete AFTER DELETE ON code_entities BEGIN
  DELETE FROM code_entities_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'entity' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
DROP TRIGGER code_references_fts_insert;
CREATE TRIGGER code_references_fts_insert AFTER INSERT ON code_references BEGIN
  INSERT INTO code_references_fts (name, body, row_id, project_id) VALUES (COALESCE(NEW.lsp_symbol, '') || ' ' || NEW.document_path, NEW.description, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER code_references_semantic_touch;
CREATE TRIGGER code_references_semantic_touch AFTER UPDATE ON code_references BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER code_references_fts_delete;
CREATE TRIGGER code_references_fts_delete AFTER DELETE ON code_references BEGIN
  DELETE FROM code_references_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'reference' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
DROP TRIGGER code_relations_fts_insert;
CREATE TRIGGER code_relations_fts_insert AFTER INSERT ON code_relations BEGIN
  INSERT INTO code_relations_fts (name, body, row_id, project_id) VALUES ('', COALESCE(NEW.note, ''), NEW.from_id || ':' || NEW.to_id, (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id);
END;
DROP TRIGGER code_relations_semantic_touch;
CREATE TRIGGER code_relations_semantic_touch AFTER UPDATE ON code_relations BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id);
END;
DROP TRIGGER code_relations_fts_delete;
CREATE TRIGGER code_relations_fts_delete AFTER DELETE ON code_relations BEGIN
  DELETE FROM code_relations_fts WHERE row_id = OLD.from_id || ':' || OLD.to_id;
  DELETE FROM embeddings WHERE source = 'relation' AND row_id = OLD.from_id || ':' || OLD.to_id;
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id);
END;
DROP TRIGGER graph_atoms_fts_insert;
CREATE TRIGGER graph_atoms_fts_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO graph_atoms_fts (name, body, row_id, project_id) VALUES (NEW.name || ' ' || NEW.paths, NEW.knowledge, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER graph_atoms_semantic_touch;
CREATE TRIGGER graph_atoms_semantic_touch AFTER UPDATE ON graph_atoms BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER graph_atoms_fts_delete;
CREATE TRIGGER graph_atoms_fts_delete AFTER DELETE ON graph_atoms BEGIN
  DELETE FROM graph_atoms_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
DROP TRIGGER graph_molecules_fts_insert;
CREATE TRIGGER graph_molecules_fts_insert AFTER INSERT ON graph_molecules BEGIN
  INSERT INTO graph_molecules_fts (name, body, row_id, project_id) VALUES (NEW.name, NEW.knowledge, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER graph_molecules_semantic_touch;
CREATE TRIGGER graph_molecules_semantic_touch AFTER UPDATE ON graph_molecules BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER graph_molecules_fts_delete;
CREATE TRIGGER graph_molecules_fts_delete AFTER DELETE ON graph_molecules BEGIN
  DELETE FROM graph_molecules_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'molecule' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
DROP TRIGGER code_belongs_semantic_insert;
CREATE TRIGGER code_belongs_semantic_insert AFTER INSERT ON code_belongs BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.child_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.child_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.child_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.child_id);
END;
DROP TRIGGER code_belongs_semantic_delete;
CREATE TRIGGER code_belongs_semantic_delete AFTER DELETE ON code_belongs BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.child_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.child_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.child_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.child_id);
END;
DROP TRIGGER code_links_semantic_insert;
CREATE TRIGGER code_links_semantic_insert AFTER INSERT ON code_links BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id);
END;
DROP TRIGGER code_links_semantic_delete;
CREATE TRIGGER code_links_semantic_delete AFTER DELETE ON code_links BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id);
END;
DROP TRIGGER code_attachments_semantic_insert;
CREATE TRIGGER code_attachments_semantic_insert AFTER INSERT ON code_attachments BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id);
END;
DROP TRIGGER code_attachments_semantic_delete;
CREATE TRIGGER code_attachments_semantic_delete AFTER DELETE ON code_attachments BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id);
END;
DROP TRIGGER code_entity_categories_semantic_insert;
CREATE TRIGGER code_entity_categories_semantic_insert AFTER INSERT ON code_entity_categories BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id);
END;
DROP TRIGGER code_entity_categories_semantic_delete;
CREATE TRIGGER code_entity_categories_semantic_delete AFTER DELETE ON code_entity_categories BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id);
END;
DROP TRIGGER embeddings_semantic_insert;
CREATE TRIGGER embeddings_semantic_insert AFTER INSERT ON embeddings BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER embeddings_semantic_update;
CREATE TRIGGER embeddings_semantic_update AFTER UPDATE ON embeddings BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
DROP TRIGGER embeddings_semantic_delete;
CREATE TRIGGER embeddings_semantic_delete AFTER DELETE ON embeddings BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
