-- The twin of migrations/0016_project_subjects.sql (see there).
-- Every project has its Project subject, linked to it (`orchestrator_project_id`):
-- atoms scoped to that subject are what `recall` answers the project. Projects made
-- from now on get theirs when they are created; this links what older databases
-- hold. A live Project subject no project links yet is linked to the project of its
-- exact name, when exactly one project has that name, that project has no subject
-- yet, and no other unlinked Project subject has the same name (a guess between two
-- is not made). Projects still without a subject get one the first time a write
-- names them.

UPDATE memory_subjects
SET orchestrator_project_id = (SELECT p.id FROM projects p WHERE p.name = memory_subjects.name),
    version = version + 1
WHERE kind = 'Project'
  AND orchestrator_project_id IS NULL
  AND merged_into IS NULL
  AND (SELECT COUNT(*) FROM projects p WHERE p.name = memory_subjects.name) = 1
  AND NOT EXISTS (
    SELECT 1 FROM projects p JOIN memory_subjects o ON o.orchestrator_project_id = p.id
    WHERE p.name = memory_subjects.name AND o.merged_into IS NULL)
  AND (SELECT COUNT(*) FROM memory_subjects o
       WHERE o.kind = 'Project' AND o.name = memory_subjects.name
         AND o.orchestrator_project_id IS NULL AND o.merged_into IS NULL) = 1;
