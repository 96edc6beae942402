-- The index of tasks by feature leaves out tasks without one.
--
-- Every query through it names a feature (`feature_id = ?`, which SQLite knows
-- implies NOT NULL, so the partial index still serves it, as it does the foreign-key
-- check when a feature is deleted). The entries of tasks without a feature were never
-- read, yet each such task's insert wrote an index page for one.
DROP INDEX tasks_feature;
CREATE INDEX tasks_feature ON tasks(feature_id, status, priority, complexity, created_at)
  WHERE feature_id IS NOT NULL;
