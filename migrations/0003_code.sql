-- The code ontology (DES-005): a project's repository, its taxonomy (categories per
-- scope), entities anchored to references in the repository, and the edges between
-- entities. Everything belongs to a project and goes with it. Every mutable row
-- carries `version`, starting at 1 (optimistic locking); edge rows are immutable
-- (created or removed, never changed) and so carry none.

CREATE TABLE code_repos (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL UNIQUE REFERENCES projects(id) ON DELETE CASCADE,
  repo_path   TEXT NOT NULL,
  version     INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

-- depth: Domain 1, Feature 2, Namespace 3, Component 4, Unit 5.
CREATE TABLE code_categories (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  scope       TEXT NOT NULL CHECK (scope IN ('Domain', 'Feature', 'Namespace', 'Component', 'Unit')),
  name        TEXT NOT NULL,
  description TEXT,
  version     INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  UNIQUE (project_id, scope, name)
);

-- scope is the scope of the entity's categories (all of one scope), kept here so
-- filters and depth checks need no join.
CREATE TABLE code_entities (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  description TEXT NOT NULL,
  scope       TEXT NOT NULL,
  version     INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX code_entities_project ON code_entities(project_id, scope, name);

CREATE TABLE code_entity_categories (
  entity_id   TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  category_id TEXT NOT NULL REFERENCES code_categories(id) ON DELETE CASCADE,
  PRIMARY KEY (entity_id, category_id)
);
CREATE INDEX code_entity_categories_category ON code_entity_categories(category_id);

-- BELONGS_TO: child → parent. A parent with children cannot be deleted (the service
-- refuses), so the cascade only ever fires from the child side or a project delete.
CREATE TABLE code_belongs (
  child_id    TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  parent_id   TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX code_belongs_parent ON code_belongs(parent_id);

-- kind 'code' or 'text'; lines are 1-based and inclusive. commit_sha is HEAD when the
-- reference was recorded and blob_sha the file as read then (so a reference made on
-- a dirty tree has an exact baseline for staleness).
CREATE TABLE code_references (
  id            TEXT PRIMARY KEY,
  project_id    TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  kind          TEXT NOT NULL CHECK (kind IN ('code', 'text')),
  document_path TEXT NOT NULL,
  start_line    INTEGER NOT NULL,
  end_line      INTEGER NOT NULL,
  lsp_symbol    TEXT,
  lsp_kind      INTEGER,
  anchor        TEXT,
  description   TEXT NOT NULL DEFAULT '',
  content_type  TEXT NOT NULL,
  commit_sha    TEXT NOT NULL,
  blob_sha      TEXT NOT NULL,
  version       INTEGER NOT NULL DEFAULT 1,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX code_references_document ON code_references(project_id, document_path, start_line);

-- A reference may be attached to several entities; it cannot be deleted while
-- attached (the default NO ACTION backs the service's check; it is checked at the end
-- of the statement, so a project delete cascading through entities still passes).
CREATE TABLE code_attachments (
  entity_id    TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  reference_id TEXT NOT NULL REFERENCES code_references(id),
  created_at   TEXT NOT NULL,
  PRIMARY KEY (entity_id, reference_id)
);
CREATE INDEX code_attachments_reference ON code_attachments(reference_id);

-- RELATED_TO (any scope, optional note) and code links (CALLS, IMPORTS, IMPLEMENTS,
-- INSTANTIATES; Component/Unit only), both directed from → to.
CREATE TABLE code_relations (
  from_id    TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  to_id      TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  note       TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (from_id, to_id)
);
CREATE INDEX code_relations_to ON code_relations(to_id);

CREATE TABLE code_links (
  from_id    TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  to_id      TEXT NOT NULL REFERENCES code_entities(id) ON DELETE CASCADE,
  link_type  TEXT NOT NULL CHECK (link_type IN ('CALLS', 'IMPORTS', 'IMPLEMENTS', 'INSTANTIATES')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (from_id, to_id, link_type)
);
CREATE INDEX code_links_to ON code_links(to_id);
