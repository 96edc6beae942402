-- An atom's update writes its row once, and its trigger only moves the generation.
--
-- An update used to be two statements on the row (the version claimed, then the
-- fields), each firing 0002's trigger: three statements apiece (the counter row made
-- when missing, the counter moved, the row stamped with it by one more UPDATE), so a
-- knowledge edit wrote the row four times and moved the counter twice. Cairn's update
-- (`store::graph::update_atom`) is now one statement that writes the generation the
-- trigger is about to reach, as the insert does (0012). The trigger then only moves
-- the counter, by one upsert; a write that leaves `gen` as it was (a detach, a
-- molecule deleted under its atoms, a row edited by hand) is stamped as before.
DROP TRIGGER graph_atoms_gen_update;
CREATE TRIGGER graph_atoms_gen_update
AFTER UPDATE OF id, project_id, molecule_id, name, paths, knowledge, related_atoms, created_by_task_id,
                last_task_id, version, created_at, updated_at ON graph_atoms
WHEN NEW.gen = OLD.gen BEGIN
  INSERT INTO graph_generations (project_id, generation) VALUES (NEW.project_id, 1)
    ON CONFLICT (project_id) DO UPDATE SET generation = generation + 1;
  UPDATE graph_atoms SET gen = (SELECT generation FROM graph_generations WHERE project_id = NEW.project_id)
   WHERE id = NEW.id;
END;
CREATE TRIGGER graph_atoms_gen_stamped
AFTER UPDATE OF id, project_id, molecule_id, name, paths, knowledge, related_atoms, created_by_task_id,
                last_task_id, version, created_at, updated_at ON graph_atoms
WHEN NEW.gen <> OLD.gen BEGIN
  INSERT INTO graph_generations (project_id, generation) VALUES (NEW.project_id, 1)
    ON CONFLICT (project_id) DO UPDATE SET generation = generation + 1;
END;
