-- Recall reads a found atom with the atoms recorded just before and after it in its
-- context (the previous and next turn of one exchange): an index on the context and
-- the recording time finds them by a seek. It serves the context lookups the
-- single-column index served, so that one goes and a write maintains no more entries.
CREATE INDEX memory_atoms_context_recorded ON memory_atoms (context_id, recorded_at, id);
DROP INDEX memory_atoms_context;
