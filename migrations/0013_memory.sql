-- The alive memory (issue 20, spec alive-memory.md): subjects, memory atoms (never the
-- knowledge graph's glob atoms, hence the memory_ prefix on every name), evidence
-- references, edges and diary entries.
--
-- Tenancy: the memory is one per database file. Subjects are shared by every project
-- (Zod is the same Zod everywhere), and so are the atoms about them: where an atom
-- applies is its IN_CONTEXT subject (a Project, Org, Person or Stack; NULL = Global),
-- not the orchestrator project that happened to record it. A Project subject may
-- point at an orchestrator project (`orchestrator_project_id`, cleared when that
-- project is deleted). Diary entries belong to the orchestrator project they were
-- written in, when they name one, and go with it.
--
-- Never overwritten: an atom's statement, predicate, value, type, subject and context
-- are written once. The life fields (status, confidence, review dates, resolution, a
-- Decision's own status, the stored claim key) move, each change bumping `version`.

CREATE TABLE memory_subjects (
  id                      TEXT PRIMARY KEY NOT NULL,
  kind                    TEXT NOT NULL,
  name                    TEXT NOT NULL,
  title                   TEXT,
  summary                 TEXT,
  -- Tags and the kind's own fields, encoded by the service (the store keeps text).
  tags                    TEXT NOT NULL DEFAULT '',
  details                 TEXT NOT NULL DEFAULT '',
  orchestrator_project_id TEXT REFERENCES projects(id) ON DELETE SET NULL,
  -- Set when identity resolution merged this subject into another: the row stays so
  -- an old id still resolves.
  merged_into             TEXT REFERENCES memory_subjects(id),
  version                 INTEGER NOT NULL DEFAULT 1,
  created_at              TEXT NOT NULL,
  updated_at              TEXT NOT NULL
);
-- One live Project subject per orchestrator project.
CREATE UNIQUE INDEX memory_subjects_orchestrator ON memory_subjects (orchestrator_project_id)
  WHERE orchestrator_project_id IS NOT NULL AND merged_into IS NULL;
CREATE INDEX memory_subjects_kind ON memory_subjects (kind, name);
CREATE INDEX memory_subjects_merged ON memory_subjects (merged_into) WHERE merged_into IS NOT NULL;

-- Every name a subject is known by (its name and its aliases) with the normal form
-- identity resolution compares (`zod`, `Zod` and `colinhacks/zod` all fold to `zod`).
CREATE TABLE memory_subject_names (
  subject_id TEXT NOT NULL REFERENCES memory_subjects(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  norm       TEXT NOT NULL,
  is_alias   INTEGER NOT NULL,
  PRIMARY KEY (subject_id, name)
);
CREATE INDEX memory_subject_names_norm ON memory_subject_names (norm);

-- Evidence (spec 6.3): first-class and shared between atoms; never changed.
CREATE TABLE memory_references (
  id           TEXT PRIMARY KEY NOT NULL,
  ref_type     TEXT NOT NULL,
  title        TEXT,
  uri          TEXT,
  authors      TEXT NOT NULL DEFAULT '',
  published_at TEXT,
  retrieved_at TEXT NOT NULL,
  snippet      TEXT,
  hash         TEXT,
  created_at   TEXT NOT NULL
);
CREATE INDEX memory_references_uri ON memory_references (uri) WHERE uri IS NOT NULL;

CREATE TABLE memory_atoms (
  id                   TEXT PRIMARY KEY NOT NULL,
  atom_type            TEXT NOT NULL,
  statement            TEXT NOT NULL,
  predicate            TEXT,
  -- text, number, bool or subject; `value` holds its text form.
  value_kind           TEXT,
  value                TEXT,
  about_id             TEXT REFERENCES memory_subjects(id),
  context_id           TEXT REFERENCES memory_subjects(id),
  -- The claim key `Type|predicate|about|context` (NULL without a predicate), and the
  -- group an atom competes in: its claim key, or for an atom without a predicate its
  -- type, subject, context and normalised statement.
  claim_key            TEXT,
  group_key            TEXT NOT NULL,
  status               TEXT NOT NULL,
  status_reason        TEXT,
  confidence           REAL NOT NULL,
  validated_confidence REAL NOT NULL,
  importance           TEXT NOT NULL,
  title                TEXT,
  summary              TEXT,
  notes                TEXT,
  resolution           TEXT,
  tags                 TEXT NOT NULL DEFAULT '',
  author               TEXT,
  confirmed_by         TEXT,
  confirmed_at         TEXT,
  valid_from           TEXT,
  valid_to             TEXT,
  recorded_at          TEXT NOT NULL,
  retired_at           TEXT,
  last_validated_at    TEXT,
  next_review_at       TEXT,
  review_interval_days INTEGER,
  -- A Decision's own status (it moves; the rest of the type's fields do not).
  decision_status      TEXT,
  -- The type's own fields, encoded by the service.
  details              TEXT NOT NULL,
  version              INTEGER NOT NULL DEFAULT 1,
  updated_at           TEXT NOT NULL
);
-- At most one current atom per claim key, whichever process writes: ACTIVE, or ACTIVE
-- and due for review. Two servers can never both make one ACTIVE.
CREATE UNIQUE INDEX memory_atoms_one_current ON memory_atoms (claim_key)
  WHERE claim_key IS NOT NULL AND status IN ('ACTIVE', 'NEEDS_REVIEW');
-- Only the status index and the unique one carry the status, so a status change
-- (the commonest write: every settlement, review and retirement) rewrites two index
-- entries, not six; groups, subjects and contexts are small and filtered by status
-- after the lookup.
CREATE INDEX memory_atoms_group ON memory_atoms (group_key);
CREATE INDEX memory_atoms_about ON memory_atoms (about_id);
CREATE INDEX memory_atoms_context ON memory_atoms (context_id);
CREATE INDEX memory_atoms_status ON memory_atoms (status, next_review_at);
CREATE INDEX memory_atoms_recorded ON memory_atoms (recorded_at, id);

-- Edges held as rows (ABOUT and IN_CONTEXT live on the atom). Ends are atoms,
-- subjects or references, named by kind and id; an edge is added or removed, never
-- changed.
CREATE TABLE memory_edges (
  from_kind  TEXT NOT NULL,
  from_id    TEXT NOT NULL,
  kind       TEXT NOT NULL,
  to_kind    TEXT NOT NULL,
  to_id      TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (from_id, kind, to_id)
);
CREATE INDEX memory_edges_to ON memory_edges (to_id, kind);
-- USES edges are few beside the evidence edges: usage facts read them all.
CREATE INDEX memory_edges_uses ON memory_edges (to_id) WHERE kind = 'USES';

-- Session or task summaries; never changed.
CREATE TABLE memory_diary (
  id              TEXT PRIMARY KEY NOT NULL,
  project_id      TEXT REFERENCES projects(id) ON DELETE CASCADE,
  task_id         TEXT REFERENCES tasks(id) ON DELETE SET NULL,
  session         TEXT,
  accomplishments TEXT NOT NULL DEFAULT '',
  decisions       TEXT NOT NULL DEFAULT '',
  challenges      TEXT NOT NULL DEFAULT '',
  learnings       TEXT NOT NULL DEFAULT '',
  recorded_at     TEXT NOT NULL,
  created_at      TEXT NOT NULL
);
CREATE INDEX memory_diary_recorded ON memory_diary (recorded_at, id);
CREATE INDEX memory_diary_session ON memory_diary (session, recorded_at);
CREATE INDEX memory_diary_task ON memory_diary (task_id);
CREATE INDEX memory_diary_project ON memory_diary (project_id, recorded_at);

-- Statements are searched like the other texts: BM25 over FTS5 (the semantic layer's
-- `lexical`, which filters on `project_id`: the memory's rows all carry `memory`, the
-- tenant its vectors are stored under too). As for the graph's atoms (migration
-- 0011), the index is brought up to date by the search, not by the write: atoms are
-- never deleted and their statements never change, so the rows above the mark
-- (`memory_search_indexed`, the highest rowid indexed) are exactly the ones to add,
-- and a remember writes no index segment.
CREATE VIRTUAL TABLE memory_atoms_fts USING fts5(name, body, row_id UNINDEXED, project_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE memory_search_indexed (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  upto  INTEGER NOT NULL
);
INSERT INTO memory_search_indexed (id, upto) VALUES (1, 0);
CREATE TRIGGER memory_atoms_generation AFTER INSERT ON memory_atoms BEGIN
  -- A new statement has no vector yet: the memory's snapshot of vectors is stale.
  INSERT INTO semantic_generations (project_id, generation) SELECT 'memory', 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = 'memory');
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = 'memory';
END;
