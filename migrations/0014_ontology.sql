-- The ontology toolset (issue 19): a project's ontology repository, what its last sync
-- read at the base branch's head (pages, entities, axioms), the problems it met,
-- proposals reviewed as git branches, and the per-domain term-id counters.
--
-- The pages in git are the source of truth; these rows are what the last sync
-- imported. A sync rewrites only what changed: a page row whose blob is unchanged is
-- left alone, an entity row whose fields are unchanged too, and a page's axioms are
-- replaced only when the axioms read from it differ. Pages, entities, repositories and
-- proposals carry `version` (optimistic locking); axioms, sync problems and proposal
-- files are immutable rows, replaced as a whole (so they carry none). Everything
-- belongs to a project and goes with it.

CREATE TABLE ontology_repos (
  id            TEXT PRIMARY KEY,
  project_id    TEXT NOT NULL UNIQUE REFERENCES projects(id) ON DELETE CASCADE,
  repo_path     TEXT NOT NULL,
  -- Repository-relative folder of the pages ('' for the repository's root).
  pages_dir     TEXT NOT NULL,
  base_branch   TEXT NOT NULL,
  github_owner  TEXT,
  github_name   TEXT,
  -- The commit the rows reflect, and when it was read; NULL before the first sync.
  synced_commit TEXT,
  synced_at     TEXT,
  version       INTEGER NOT NULL DEFAULT 1,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

-- Every markdown file of the pages folder at the synced commit: its blob (what makes
-- a sync incremental), its text, and what it declares. `state`: `entity` (the block
-- read; `iri` set), `plain` (no OntologyBlock: an ordinary Logseq page), `error` (the
-- page does not parse; the problem is in ontology_problems).
CREATE TABLE ontology_pages (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  path        TEXT NOT NULL,
  blob_sha    TEXT NOT NULL,
  content     TEXT NOT NULL,
  iri         TEXT,
  state       TEXT NOT NULL CHECK (state IN ('entity', 'plain', 'error')),
  version     INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  UNIQUE (project_id, path)
);

-- Classes, object properties and individuals with their page metadata. `page_id` is
-- NULL for the shared relationship properties (core:hasPart, ...), which exist
-- without pages.
CREATE TABLE ontology_entities (
  id              TEXT PRIMARY KEY,
  project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  page_id         TEXT REFERENCES ontology_pages(id) ON DELETE SET NULL,
  iri             TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('class', 'property', 'individual')),
  term_id         TEXT,
  preferred_term  TEXT,
  domain          TEXT,
  status          TEXT,
  definition      TEXT,
  alt_terms       TEXT,
  physicality     TEXT,
  role            TEXT,
  maturity        TEXT,
  quality_score   REAL,
  authority_score REAL,
  last_updated    TEXT,
  line            INTEGER,
  version         INTEGER NOT NULL DEFAULT 1,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  UNIQUE (project_id, iri)
);
CREATE INDEX ontology_entities_term ON ontology_entities (project_id, term_id);

-- The axioms each page states, in OWL functional syntax, with their line.
CREATE TABLE ontology_axioms (
  page_id     TEXT NOT NULL REFERENCES ontology_pages(id) ON DELETE CASCADE,
  project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
  line        INTEGER NOT NULL,
  kind        TEXT NOT NULL,
  ofn         TEXT NOT NULL,
  PRIMARY KEY (page_id, seq)
);
CREATE INDEX ontology_axioms_project ON ontology_axioms (project_id);

-- What the last sync skipped, with file and line.
CREATE TABLE ontology_problems (
  project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
  file        TEXT NOT NULL,
  line        INTEGER NOT NULL,
  col         INTEGER NOT NULL,
  message     TEXT NOT NULL,
  PRIMARY KEY (project_id, seq)
);

-- Proposals: a page (or, for an import, many) committed on a branch of the ontology
-- repository, checked and scored before it was staged. `state`: staged (a local
-- branch), pushed (a branch and pull request on GitHub), merged (the base branch has
-- it), rejected (the branch was deleted unmerged, or its pull request closed).
CREATE TABLE ontology_proposals (
  id               TEXT PRIMARY KEY,
  project_id       TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  operation        TEXT NOT NULL CHECK (operation IN ('create', 'amend', 'import')),
  state            TEXT NOT NULL CHECK (state IN ('staged', 'pushed', 'merged', 'rejected')),
  target_iri       TEXT,
  term_id          TEXT,
  agent_id         TEXT NOT NULL,
  agent_type       TEXT NOT NULL,
  session_id       TEXT,
  task_description TEXT NOT NULL,
  confidence       REAL NOT NULL,
  branch           TEXT NOT NULL,
  commit_sha       TEXT NOT NULL,
  base_commit      TEXT NOT NULL,
  new_subsumptions INTEGER NOT NULL,
  quality_score    REAL,
  tier_coverage    TEXT,
  report           TEXT NOT NULL,
  diff             TEXT NOT NULL,
  pr_number        INTEGER,
  pr_url           TEXT,
  push_error       TEXT,
  decided_at       TEXT,
  version          INTEGER NOT NULL DEFAULT 1,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX ontology_proposals_state ON ontology_proposals (project_id, state);

CREATE TABLE ontology_proposal_files (
  proposal_id TEXT NOT NULL REFERENCES ontology_proposals(id) ON DELETE CASCADE,
  path        TEXT NOT NULL,
  blob_sha    TEXT NOT NULL,
  content     TEXT NOT NULL,
  PRIMARY KEY (proposal_id, path)
);

-- The next term id number of each domain (`AI` → 852 after AI-0851 was reserved),
-- moved in the proposal's write transaction, so two proposals never share one.
CREATE TABLE ontology_term_counters (
  project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  domain      TEXT NOT NULL,
  next        INTEGER NOT NULL,
  PRIMARY KEY (project_id, domain)
);

-- The generation of a project's ontology: bumped by every page row written, in the
-- same transaction, so a server's cached classification and query graph are reused
-- only while it is unchanged (a sync by another process is seen on the next call).
CREATE TABLE ontology_generations (
  project_id  TEXT PRIMARY KEY NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  generation  INTEGER NOT NULL
);
CREATE TRIGGER ontology_pages_gen_insert AFTER INSERT ON ontology_pages BEGIN
  INSERT INTO ontology_generations (project_id, generation) VALUES (NEW.project_id, 1)
    ON CONFLICT (project_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER ontology_pages_gen_update AFTER UPDATE ON ontology_pages BEGIN
  INSERT INTO ontology_generations (project_id, generation) VALUES (NEW.project_id, 1)
    ON CONFLICT (project_id) DO UPDATE SET generation = generation + 1;
END;
-- A delete only moves an existing counter (a page's insert made it): it also runs
-- while a project's cascade removes its pages, when no row may reference the project.
CREATE TRIGGER ontology_pages_gen_delete AFTER DELETE ON ontology_pages BEGIN
  UPDATE ontology_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;

-- Classes are an embeddable source (`ontology_class`, src/store/embedding.rs): a
-- changed preferred term, alternative terms or definition drops the vector, and every
-- class write moves the project's semantic generation, so a cached snapshot of
-- vectors is reloaded (and the new text embedded) before the next search.
CREATE TRIGGER ontology_entities_embed_stale AFTER UPDATE OF preferred_term, alt_terms, definition, kind ON ontology_entities BEGIN
  DELETE FROM embeddings WHERE source = 'ontology_class' AND row_id = OLD.id;
END;
CREATE TRIGGER ontology_entities_semantic_insert AFTER INSERT ON ontology_entities WHEN NEW.kind = 'class' BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER ontology_entities_semantic_update AFTER UPDATE ON ontology_entities BEGIN
  INSERT INTO semantic_generations (project_id, generation) SELECT NEW.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = NEW.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = NEW.project_id;
END;
CREATE TRIGGER ontology_entities_gone AFTER DELETE ON ontology_entities BEGIN
  DELETE FROM embeddings WHERE source = 'ontology_class' AND row_id = OLD.id;
  INSERT INTO semantic_generations (project_id, generation) SELECT OLD.project_id, 0
   WHERE NOT EXISTS (SELECT 1 FROM semantic_generations WHERE project_id = OLD.project_id);
  UPDATE semantic_generations SET generation = generation + 1 WHERE project_id = OLD.project_id;
END;
