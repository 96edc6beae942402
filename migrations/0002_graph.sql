-- The knowledge graph: molecules group atoms; atoms own glob patterns and hold what
-- an agent needs to know about the files they match; the changelog is append-only.
-- Task id fields are plain text (no foreign key): checked on write, and a deleted
-- task leaves the history readable.

CREATE TABLE graph_molecules (
  id                 TEXT PRIMARY KEY,
  project_id         TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name               TEXT NOT NULL,
  knowledge          TEXT NOT NULL DEFAULT '',
  related_molecules  TEXT NOT NULL DEFAULT '[]',
  created_by_task_id TEXT NOT NULL,
  last_task_id       TEXT NOT NULL,
  version            INTEGER NOT NULL DEFAULT 1,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);
CREATE INDEX graph_molecules_project ON graph_molecules(project_id, name);

CREATE TABLE graph_atoms (
  id                 TEXT PRIMARY KEY,
  project_id         TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  molecule_id        TEXT REFERENCES graph_molecules(id) ON DELETE SET NULL,
  name               TEXT NOT NULL,
  paths              TEXT NOT NULL DEFAULT '[]',
  knowledge          TEXT NOT NULL DEFAULT '',
  related_atoms      TEXT NOT NULL DEFAULT '[]',
  created_by_task_id TEXT NOT NULL,
  last_task_id       TEXT NOT NULL,
  version            INTEGER NOT NULL DEFAULT 1,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  -- The project generation of this row's last write (set by the triggers below).
  gen                INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX graph_atoms_project ON graph_atoms(project_id, name);
CREATE INDEX graph_atoms_gen ON graph_atoms(project_id, gen);
CREATE INDEX graph_atoms_molecule ON graph_atoms(molecule_id, name);

CREATE TABLE graph_changelog (
  id          TEXT PRIMARY KEY,
  parent_type TEXT NOT NULL CHECK (parent_type IN ('atom', 'molecule')),
  parent_id   TEXT NOT NULL,
  task_id     TEXT NOT NULL,
  summary     TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX graph_changelog_parent ON graph_changelog(parent_type, parent_id, created_at);
CREATE INDEX graph_changelog_task ON graph_changelog(task_id);

-- A per-project counter bumped in the same transaction as every atom or molecule
-- write (by the triggers below, so no write path can forget it). A server keeps each
-- project's compiled path matcher in memory and reuses it while the counter it saw
-- is still current, which also catches writes made by another process on this file.
-- Each atom row carries the generation of its last write and each deleted atom
-- leaves a tombstone, so a stale matcher is brought up to date by reading only what
-- changed since its generation. The counter row is created with INSERT ... WHERE NOT
-- EXISTS rather than OR IGNORE, which an outer statement's conflict clause (an upsert)
-- would override inside a trigger.
CREATE TABLE graph_generations (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  generation INTEGER NOT NULL
);

-- No foreign key: rows are written while a project's cascade runs, and are swept
-- by the project trigger below instead.
CREATE TABLE graph_tombstones (
  project_id TEXT NOT NULL,
  atom_id    TEXT NOT NULL,
  gen        INTEGER NOT NULL
);
CREATE INDEX graph_tombstones_gen ON graph_tombstones(project_id, gen);

CREATE TRIGGER graph_atoms_gen_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO graph_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM graph_generations WHERE project_id = NEW.project_id);
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
  UPDATE graph_atoms SET gen = (SELECT generation FROM graph_generations WHERE project_id = NEW.project_id)
   WHERE id = NEW.id;
END;
-- Fires on every column but `gen`, so stamping the row does not fire it again.
CREATE TRIGGER graph_atoms_gen_update
AFTER UPDATE OF id, project_id, molecule_id, name, paths, knowledge, related_atoms, created_by_task_id,
                last_task_id, version, created_at, updated_at ON graph_atoms BEGIN
  INSERT INTO graph_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM graph_generations WHERE project_id = NEW.project_id);
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
  UPDATE graph_atoms SET gen = (SELECT generation FROM graph_generations WHERE project_id = NEW.project_id)
   WHERE id = NEW.id;
END;
CREATE TRIGGER graph_molecules_gen_insert AFTER INSERT ON graph_molecules BEGIN
  INSERT INTO graph_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM graph_generations WHERE project_id = NEW.project_id);
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER graph_molecules_gen_update AFTER UPDATE ON graph_molecules BEGIN
  INSERT INTO graph_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM graph_generations WHERE project_id = NEW.project_id);
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;

-- Deleting an atom or molecule (directly, or through a project's cascade) takes its
-- changelog with it and bumps the generation; an atom leaves a tombstone.
CREATE TRIGGER graph_atoms_cleanup AFTER DELETE ON graph_atoms BEGIN
  DELETE FROM graph_changelog WHERE parent_type = 'atom' AND parent_id = OLD.id;
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
  INSERT INTO graph_tombstones (project_id, atom_id, gen)
    SELECT OLD.project_id, OLD.id, generation FROM graph_generations
     WHERE project_id = OLD.project_id AND EXISTS (SELECT 1 FROM projects WHERE id = OLD.project_id);
END;
CREATE TRIGGER graph_molecules_cleanup AFTER DELETE ON graph_molecules BEGIN
  DELETE FROM graph_changelog WHERE parent_type = 'molecule' AND parent_id = OLD.id;
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
CREATE TRIGGER graph_projects_cleanup AFTER DELETE ON projects BEGIN
  DELETE FROM graph_tombstones WHERE project_id = OLD.id;
END;
