-- Tasks and features get vectors, so that a text search over them ranks by meaning as
-- well as by words (service::ranking). Their vectors are kept under one tenant,
-- `tasks`, whatever project they belong to (a task or feature may have none): one
-- snapshot holds every one, and a search keeps the rows its filters allow.
--
-- As for every source (migration 0004): a changed text deletes its vector, so the row
-- is embedded again (an update that rewrites the same text, as every field update
-- does, keeps it); every change moves the tenant's counter, so a cached snapshot of
-- vectors is never trusted past it.

CREATE TRIGGER tasks_embed_insert AFTER INSERT ON tasks BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT 'tasks', 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = 'tasks');
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = 'tasks';
END;
CREATE TRIGGER tasks_embed_stale AFTER UPDATE OF title, summary, description ON tasks
  WHEN OLD.title IS NOT NEW.title OR OLD.summary IS NOT NEW.summary OR OLD.description IS NOT NEW.description BEGIN
  DELETE FROM embeddings WHERE source = 'task' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT 'tasks', 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = 'tasks');
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = 'tasks';
END;
CREATE TRIGGER tasks_embed_gone AFTER DELETE ON tasks BEGIN
  DELETE FROM embeddings WHERE source = 'task' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT 'tasks', 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = 'tasks');
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = 'tasks';
END;
CREATE TRIGGER features_embed_insert AFTER INSERT ON features BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT 'tasks', 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = 'tasks');
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = 'tasks';
END;
CREATE TRIGGER features_embed_stale AFTER UPDATE OF name, summary, description ON features
  WHEN OLD.name IS NOT NEW.name OR OLD.summary IS NOT NEW.summary OR OLD.description IS NOT NEW.description BEGIN
  DELETE FROM embeddings WHERE source = 'feature' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT 'tasks', 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = 'tasks');
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = 'tasks';
END;
CREATE TRIGGER features_embed_gone AFTER DELETE ON features BEGIN
  DELETE FROM embeddings WHERE source = 'feature' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT 'tasks', 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = 'tasks');
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = 'tasks';
END;
