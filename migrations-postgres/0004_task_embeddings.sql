-- The twin of migrations/0018_task_embeddings.sql: tasks and features get vectors,
-- kept under the tenant `tasks`; a changed text deletes its vector and every change
-- moves the tenant's counter.

CREATE FUNCTION tasks_embed_touch_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cairn_semantic_touch('tasks');
  RETURN NULL;
END $$;
CREATE FUNCTION tasks_embed_stale_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM embeddings WHERE source = TG_ARGV[0] AND row_id = OLD.id;
  PERFORM cairn_semantic_touch('tasks');
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_embed_insert AFTER INSERT ON tasks
  FOR EACH ROW EXECUTE FUNCTION tasks_embed_touch_fn();
CREATE TRIGGER tasks_embed_stale AFTER UPDATE OF title, summary, description ON tasks
  FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.summary IS DISTINCT FROM NEW.summary
    OR OLD.description IS DISTINCT FROM NEW.description)
  EXECUTE FUNCTION tasks_embed_stale_fn('task');
CREATE TRIGGER tasks_embed_gone AFTER DELETE ON tasks
  FOR EACH ROW EXECUTE FUNCTION tasks_embed_stale_fn('task');
CREATE TRIGGER features_embed_insert AFTER INSERT ON features
  FOR EACH ROW EXECUTE FUNCTION tasks_embed_touch_fn();
CREATE TRIGGER features_embed_stale AFTER UPDATE OF name, summary, description ON features
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.summary IS DISTINCT FROM NEW.summary
    OR OLD.description IS DISTINCT FROM NEW.description)
  EXECUTE FUNCTION tasks_embed_stale_fn('feature');
CREATE TRIGGER features_embed_gone AFTER DELETE ON features
  FOR EACH ROW EXECUTE FUNCTION tasks_embed_stale_fn('feature');
