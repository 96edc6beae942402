-- The semantic layer's lexical side and its bookkeeping (issue 5).
--
-- 1. Full-text indexes (FTS5, BM25) over the texts search ranks: entity name +
--    description, reference symbol/path + description, RELATED_TO notes, atom and
--    molecule name + knowledge. They are standalone FTS5 tables holding their own copy
--    of the text (not external-content): the source tables have TEXT keys, and an
--    external-content index keyed by an implicit rowid breaks when VACUUM renumbers
--    rowids. The source id and project are UNINDEXED columns; triggers keep every
--    index in step with inserts, text updates and deletes (a delete by id scans that
--    one index, a cost paid by text edits only).
-- 2. The embedding-staleness triggers of 0004's header for the five sources.
-- 3. `semantic_generations`: a per-project counter bumped by every write that can
--    change what search or query sees (texts, edges, attachments, vectors), so a
--    server reuses a project's in-memory vectors and graph while the counter it saw is
--    current, and sees writes made by another process on the same file.
--    Triggers create a project's counter row with INSERT ... WHERE NOT EXISTS, not
--    INSERT OR IGNORE: inside a trigger the outer statement's conflict handling
--    replaces OR IGNORE, so an upsert into `embeddings` (re-embedding a row that has a
--    vector, as `cairn reindex --all` does) would fail with UNIQUE on this table.

CREATE TABLE semantic_generations (
  project_id TEXT PRIMARY KEY NOT NULL,
  generation INTEGER NOT NULL
);
CREATE TRIGGER semantic_generations_cleanup AFTER DELETE ON projects BEGIN
  DELETE FROM semantic_generations WHERE project_id = OLD.id;
END;

-- code_entities (entity)
CREATE VIRTUAL TABLE code_entities_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO code_entities_fts (name, body, row_id, project_id)
  SELECT s.name, s.description, s.id, s.project_id FROM code_entities s;
CREATE TRIGGER code_entities_fts_insert AFTER INSERT ON code_entities BEGIN
  INSERT INTO code_entities_fts (name, body, row_id, project_id) VALUES (NEW.name, NEW.description, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER code_entities_fts_update AFTER UPDATE OF name, description ON code_entities BEGIN
  DELETE FROM code_entities_fts WHERE row_id = OLD.id;
  INSERT INTO code_entities_fts (name, body, row_id, project_id) VALUES (NEW.name, NEW.description, NEW.id, NEW.project_id);
END;
-- Only the description is embedded (DES-005): a rename keeps the vector.
CREATE TRIGGER code_entities_embed_stale AFTER UPDATE OF description ON code_entities BEGIN
  DELETE FROM embeddings WHERE source = 'entity' AND row_id = OLD.id;
END;
CREATE TRIGGER code_entities_semantic_touch AFTER UPDATE ON code_entities BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER code_entities_fts_delete AFTER DELETE ON code_entities BEGIN
  DELETE FROM code_entities_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'entity' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- code_references (reference)
CREATE VIRTUAL TABLE code_references_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO code_references_fts (name, body, row_id, project_id)
  SELECT COALESCE(s.lsp_symbol, '') || ' ' || s.document_path, s.description, s.id, s.project_id FROM code_references s;
CREATE TRIGGER code_references_fts_insert AFTER INSERT ON code_references BEGIN
  INSERT INTO code_references_fts (name, body, row_id, project_id) VALUES (COALESCE(NEW.lsp_symbol, '') || ' ' || NEW.document_path, NEW.description, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER code_references_fts_update AFTER UPDATE OF lsp_symbol, document_path, description ON code_references BEGIN
  DELETE FROM code_references_fts WHERE row_id = OLD.id;
  INSERT INTO code_references_fts (name, body, row_id, project_id) VALUES (COALESCE(NEW.lsp_symbol, '') || ' ' || NEW.document_path, NEW.description, NEW.id, NEW.project_id);
END;
-- Only the description is embedded: re-anchoring a reference keeps its vector.
CREATE TRIGGER code_references_embed_stale AFTER UPDATE OF description ON code_references BEGIN
  DELETE FROM embeddings WHERE source = 'reference' AND row_id = OLD.id;
END;
CREATE TRIGGER code_references_semantic_touch AFTER UPDATE ON code_references BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER code_references_fts_delete AFTER DELETE ON code_references BEGIN
  DELETE FROM code_references_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'reference' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- code_relations (relation)
CREATE VIRTUAL TABLE code_relations_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO code_relations_fts (name, body, row_id, project_id)
  SELECT '', COALESCE(s.note, ''), s.from_id || ':' || s.to_id, (SELECT project_id FROM code_entities WHERE id = s.from_id) FROM code_relations s;
CREATE TRIGGER code_relations_fts_insert AFTER INSERT ON code_relations BEGIN
  INSERT INTO code_relations_fts (name, body, row_id, project_id) VALUES ('', COALESCE(NEW.note, ''), NEW.from_id || ':' || NEW.to_id, (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id);
END;
CREATE TRIGGER code_relations_fts_update AFTER UPDATE OF note ON code_relations BEGIN
  DELETE FROM code_relations_fts WHERE row_id = OLD.from_id || ':' || OLD.to_id;
  INSERT INTO code_relations_fts (name, body, row_id, project_id) VALUES ('', COALESCE(NEW.note, ''), NEW.from_id || ':' || NEW.to_id, (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  DELETE FROM embeddings WHERE source = 'relation' AND row_id = OLD.from_id || ':' || OLD.to_id;
END;
CREATE TRIGGER code_relations_semantic_touch AFTER UPDATE ON code_relations BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id);
END;
CREATE TRIGGER code_relations_fts_delete AFTER DELETE ON code_relations BEGIN
  DELETE FROM code_relations_fts WHERE row_id = OLD.from_id || ':' || OLD.to_id;
  DELETE FROM embeddings WHERE source = 'relation' AND row_id = OLD.from_id || ':' || OLD.to_id;
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id);
END;

-- graph_atoms (atom). The name column also holds the glob patterns (their JSON text),
-- so a search for "payments" still finds the atom owning src/payments/**, as the LIKE
-- search before it did; only name and knowledge are embedded.
CREATE VIRTUAL TABLE graph_atoms_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO graph_atoms_fts (name, body, row_id, project_id)
  SELECT s.name || ' ' || s.paths, s.knowledge, s.id, s.project_id FROM graph_atoms s;
CREATE TRIGGER graph_atoms_fts_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO graph_atoms_fts (name, body, row_id, project_id) VALUES (NEW.name || ' ' || NEW.paths, NEW.knowledge, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER graph_atoms_fts_update AFTER UPDATE OF name, paths, knowledge ON graph_atoms BEGIN
  DELETE FROM graph_atoms_fts WHERE row_id = OLD.id;
  INSERT INTO graph_atoms_fts (name, body, row_id, project_id) VALUES (NEW.name || ' ' || NEW.paths, NEW.knowledge, NEW.id, NEW.project_id);
END;
CREATE TRIGGER graph_atoms_embed_stale AFTER UPDATE OF name, knowledge ON graph_atoms BEGIN
  DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id;
END;
CREATE TRIGGER graph_atoms_semantic_touch AFTER UPDATE ON graph_atoms BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER graph_atoms_fts_delete AFTER DELETE ON graph_atoms BEGIN
  DELETE FROM graph_atoms_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- graph_molecules (molecule)
CREATE VIRTUAL TABLE graph_molecules_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO graph_molecules_fts (name, body, row_id, project_id)
  SELECT s.name, s.knowledge, s.id, s.project_id FROM graph_molecules s;
CREATE TRIGGER graph_molecules_fts_insert AFTER INSERT ON graph_molecules BEGIN
  INSERT INTO graph_molecules_fts (name, body, row_id, project_id) VALUES (NEW.name, NEW.knowledge, NEW.id, NEW.project_id);
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER graph_molecules_fts_update AFTER UPDATE OF name, knowledge ON graph_molecules BEGIN
  DELETE FROM graph_molecules_fts WHERE row_id = OLD.id;
  INSERT INTO graph_molecules_fts (name, body, row_id, project_id) VALUES (NEW.name, NEW.knowledge, NEW.id, NEW.project_id);
  DELETE FROM embeddings WHERE source = 'molecule' AND row_id = OLD.id;
END;
CREATE TRIGGER graph_molecules_semantic_touch AFTER UPDATE ON graph_molecules BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER graph_molecules_fts_delete AFTER DELETE ON graph_molecules BEGIN
  DELETE FROM graph_molecules_fts WHERE row_id = OLD.id;
  DELETE FROM embeddings WHERE source = 'molecule' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- Edges and attachments change what `query` walks.
CREATE TRIGGER code_belongs_semantic_insert AFTER INSERT ON code_belongs BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.child_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.child_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.child_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.child_id);
END;
CREATE TRIGGER code_belongs_semantic_delete AFTER DELETE ON code_belongs BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.child_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.child_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.child_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.child_id);
END;
CREATE TRIGGER code_links_semantic_insert AFTER INSERT ON code_links BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.from_id);
END;
CREATE TRIGGER code_links_semantic_delete AFTER DELETE ON code_links BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.from_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.from_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.from_id);
END;
CREATE TRIGGER code_attachments_semantic_insert AFTER INSERT ON code_attachments BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id);
END;
CREATE TRIGGER code_attachments_semantic_delete AFTER DELETE ON code_attachments BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id);
END;
CREATE TRIGGER code_entity_categories_semantic_insert AFTER INSERT ON code_entity_categories BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = NEW.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = NEW.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = NEW.entity_id);
END;
CREATE TRIGGER code_entity_categories_semantic_delete AFTER DELETE ON code_entity_categories BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT (SELECT project_id FROM code_entities WHERE id = OLD.entity_id), 0
   WHERE (SELECT project_id FROM code_entities WHERE id = OLD.entity_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id));
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = (SELECT project_id FROM code_entities WHERE id = OLD.entity_id);
END;

-- A vector written or removed (by this process or another) changes rankings.
CREATE TRIGGER embeddings_semantic_insert AFTER INSERT ON embeddings BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER embeddings_semantic_update AFTER UPDATE ON embeddings BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NEW.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER embeddings_semantic_delete AFTER DELETE ON embeddings BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE OLD.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
