-- An atom's insert trigger only moves its project's generation, in one statement.
--
-- 0007 left the trigger two more statements: an INSERT making the project's counter
-- row when missing, and an UPDATE stamping the new row with the generation when the
-- INSERT that made it had not. Every atom insert Cairn makes
-- (`store::graph::INSERT_ATOM`) writes the generation the trigger reaches, so that
-- UPDATE never changed a row; running it, and the separate counter-row INSERT, still
-- took a tenth of an atom create's time. The counter row is now made or moved by one
-- upsert. A row inserted by hand without `gen` keeps its default 0, which the
-- incremental readers (a cached matcher, the search catch-up) do not see as new:
-- atoms are written through Cairn's tools.
DROP TRIGGER graph_atoms_gen_insert;
CREATE TRIGGER graph_atoms_gen_insert AFTER INSERT ON graph_atoms BEGIN
  INSERT INTO graph_generations (project_id, generation) VALUES (NEW.project_id, 1)
    ON CONFLICT (project_id) DO UPDATE SET generation = generation + 1;
END;
