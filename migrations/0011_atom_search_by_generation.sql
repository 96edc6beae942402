-- An atom search catches its project's full-text index up from the graph generation,
-- not from notes the writes leave.
--
-- 0008 had every atom write note the atom in `search_pending`: one more page written
-- by each create, update and delete. The graph already records what changed and when:
-- each atom carries the generation of its last write (`gen`, indexed by project) and
-- each deleted atom leaves a tombstone with its generation. `search_indexed` now holds,
-- per project, the generation the index reflects; the catch-up before an atom search
-- (`store::semantic::lexical`) removes the index rows of atoms deleted since, then
-- writes the rows of atoms written since, and moves the mark. A search still sees every
-- write committed before it, from this process or another.
--
-- A tombstone now keeps the deleted atom's rowid (`row`): the key of its index row,
-- removed only if it still holds that atom (the 0006 rule); an atom deleted and
-- written again under the same id has a new rowid, and its old index row must go.

-- What the notes still hold is indexed first, the 0008 way; then every project is
-- marked current and the notes go.
INSERT INTO search_catch_up (source) VALUES ('atom');
CREATE TABLE search_indexed (
  project_id TEXT PRIMARY KEY,
  gen        INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO search_indexed (project_id, gen) SELECT project_id, generation FROM graph_generations;
DROP TRIGGER search_catch_up_atoms;
DROP TABLE search_catch_up;
DROP TRIGGER graph_atoms_fts_insert;
DROP TRIGGER graph_atoms_fts_update;
DROP TRIGGER graph_atoms_fts_delete;
DROP TABLE search_pending;
CREATE TRIGGER graph_atoms_fts_delete AFTER DELETE ON graph_atoms BEGIN
  DELETE FROM embeddings WHERE source = 'atom' AND row_id = OLD.id;
END;

ALTER TABLE graph_tombstones ADD COLUMN row INTEGER;
DROP TRIGGER graph_atoms_cleanup;
CREATE TRIGGER graph_atoms_cleanup AFTER DELETE ON graph_atoms BEGIN
  DELETE FROM graph_changelog WHERE parent_type = 'atom' AND parent_id = OLD.id;
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
  INSERT INTO graph_tombstones (project_id, atom_id, gen, row)
    SELECT OLD.project_id, OLD.id, generation, OLD.rowid FROM graph_generations
     WHERE project_id = OLD.project_id AND EXISTS (SELECT 1 FROM projects WHERE id = OLD.project_id);
END;

-- A deleted project leaves no tombstones (0002), so its atoms' index rows and its mark
-- are removed with it.
CREATE TRIGGER search_projects_cleanup AFTER DELETE ON projects BEGIN
  DELETE FROM graph_atoms_fts WHERE project_id = OLD.id;
  DELETE FROM search_indexed WHERE project_id = OLD.id;
END;
