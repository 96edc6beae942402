-- An atom's update writes its row once (SQLite's 0020): Cairn's UPDATE carries the
-- generation the trigger reaches, so the trigger stamps the row only when it does not.
CREATE OR REPLACE FUNCTION graph_atoms_gen_update_fn() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  g bigint;
BEGIN
  g := cairn_graph_touch(NEW.project_id);
  IF g IS NOT NULL AND NEW.gen IS DISTINCT FROM g THEN
    UPDATE graph_atoms SET gen = g WHERE id = NEW.id;
  END IF;
  RETURN NULL;
END $$;
