-- An atom is stamped with its project's generation by the INSERT that creates it.
--
-- 0002's insert trigger bumped the counter and then rewrote the new row to stamp it:
-- a second write of the whole row (knowledge runs to kilobytes), of its `gen` index
-- entry, and a second bump of the semantic counter through the update trigger, on
-- every atom created. `store::graph::insert_atom` now writes the generation the
-- trigger is about to reach, so the trigger finds the row stamped and leaves it. It
-- still stamps a row written without one, so no insert can leave a stale matcher.
DROP TRIGGER graph_atoms_gen_insert;
CREATE TRIGGER graph_atoms_gen_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO graph_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM graph_generations WHERE project_id = NEW.project_id);
  UPDATE graph_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
  UPDATE graph_atoms SET gen = (SELECT generation FROM graph_generations WHERE project_id = NEW.project_id)
   WHERE id = NEW.id
     AND gen IS NOT (SELECT generation FROM graph_generations WHERE project_id = NEW.project_id);
END;
