-- The task orchestrator: projects, features, tasks, sections, templates, tags,
-- dependencies and the workflow pipelines in force. Every mutable row carries
-- `version`, starting at 1, bumped by every write (optimistic locking).

CREATE TABLE projects (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  summary     TEXT NOT NULL DEFAULT '',
  description TEXT,
  version     INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

-- priority is a rank: 0 HIGH, 1 MEDIUM, 2 LOW, so "next" walks an index.
CREATE TABLE features (
  id            TEXT PRIMARY KEY,
  project_id    TEXT REFERENCES projects(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  summary       TEXT NOT NULL DEFAULT '',
  description   TEXT,
  status        TEXT NOT NULL,
  priority      INTEGER NOT NULL DEFAULT 1,
  status_reason TEXT,
  version       INTEGER NOT NULL DEFAULT 1,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX features_next ON features(status, priority, created_at);
CREATE INDEX features_project ON features(project_id, status, priority, created_at);

CREATE TABLE tasks (
  id            TEXT PRIMARY KEY,
  project_id    TEXT REFERENCES projects(id) ON DELETE CASCADE,
  feature_id    TEXT REFERENCES features(id) ON DELETE CASCADE,
  title         TEXT NOT NULL,
  summary       TEXT NOT NULL DEFAULT '',
  description   TEXT,
  status        TEXT NOT NULL,
  priority      INTEGER NOT NULL DEFAULT 1,
  complexity    INTEGER NOT NULL DEFAULT 5,
  status_reason TEXT,
  version       INTEGER NOT NULL DEFAULT 1,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX tasks_next ON tasks(status, priority, complexity, created_at);
CREATE INDEX tasks_project ON tasks(project_id, status, priority, complexity, created_at);
CREATE INDEX tasks_feature ON tasks(feature_id, status, priority, complexity, created_at);

-- Edges between items of one kind. from_id NULL is the NO_OP blocker: something
-- outside Cairn blocks to_id, described by reason.
CREATE TABLE dependencies (
  id         TEXT PRIMARY KEY,
  item_type  TEXT NOT NULL CHECK (item_type IN ('task', 'feature')),
  from_id    TEXT,
  to_id      TEXT NOT NULL,
  type       TEXT NOT NULL CHECK (type IN ('BLOCKS', 'RELATES_TO')),
  reason     TEXT,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX dependencies_edge ON dependencies(to_id, type, ifnull(from_id, ''));
CREATE INDEX dependencies_from ON dependencies(from_id);

CREATE TABLE sections (
  id                TEXT PRIMARY KEY,
  entity_type       TEXT NOT NULL CHECK (entity_type IN ('PROJECT', 'FEATURE', 'TASK')),
  entity_id         TEXT NOT NULL,
  title             TEXT NOT NULL,
  usage_description TEXT NOT NULL DEFAULT '',
  content           TEXT NOT NULL DEFAULT '',
  content_format    TEXT NOT NULL DEFAULT 'MARKDOWN',
  ordinal           INTEGER NOT NULL,
  version           INTEGER NOT NULL DEFAULT 1,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL
);
CREATE INDEX sections_entity ON sections(entity_id, ordinal);

CREATE TABLE templates (
  id                 TEXT PRIMARY KEY,
  name               TEXT NOT NULL UNIQUE,
  description        TEXT NOT NULL DEFAULT '',
  target_entity_type TEXT NOT NULL CHECK (target_entity_type IN ('PROJECT', 'FEATURE', 'TASK')),
  is_built_in        INTEGER NOT NULL DEFAULT 0,
  is_protected       INTEGER NOT NULL DEFAULT 0,
  is_enabled         INTEGER NOT NULL DEFAULT 1,
  created_by         TEXT,
  version            INTEGER NOT NULL DEFAULT 1,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);

CREATE TABLE template_sections (
  id                TEXT PRIMARY KEY,
  template_id       TEXT NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
  title             TEXT NOT NULL,
  usage_description TEXT NOT NULL DEFAULT '',
  content_sample    TEXT NOT NULL DEFAULT '',
  content_format    TEXT NOT NULL DEFAULT 'MARKDOWN',
  is_required       INTEGER NOT NULL DEFAULT 0,
  ordinal           INTEGER NOT NULL
);
CREATE INDEX template_sections_template ON template_sections(template_id, ordinal);

-- Labels on any entity; entity_type is PROJECT, FEATURE, TASK, SECTION or TEMPLATE.
CREATE TABLE tags (
  entity_type TEXT NOT NULL,
  entity_id   TEXT NOT NULL,
  tag         TEXT NOT NULL,
  PRIMARY KEY (entity_id, tag)
) WITHOUT ROWID;
CREATE INDEX tags_tag ON tags(tag, entity_type);

-- The pipelines in force, changed only by `sync`.
CREATE TABLE workflow_pipelines (
  kind       TEXT PRIMARY KEY CHECK (kind IN ('task', 'feature')),
  states     TEXT NOT NULL,
  version    INTEGER NOT NULL DEFAULT 1,
  updated_at TEXT NOT NULL
);
INSERT INTO workflow_pipelines (kind, states, updated_at) VALUES
  ('task', 'NEW,ACTIVE,CLOSED', '1970-01-01T00:00:00.000Z'),
  ('feature', 'NEW,ACTIVE,CLOSED', '1970-01-01T00:00:00.000Z');

-- Rows that hang off a container by a polymorphic id go with it. Foreign-key
-- cascades fire these triggers too, so deleting a project clears everything below.
CREATE TRIGGER projects_cleanup AFTER DELETE ON projects BEGIN
  DELETE FROM sections WHERE entity_id = OLD.id;
  DELETE FROM tags WHERE entity_id = OLD.id;
END;
CREATE TRIGGER features_cleanup AFTER DELETE ON features BEGIN
  DELETE FROM sections WHERE entity_id = OLD.id;
  DELETE FROM tags WHERE entity_id = OLD.id;
  DELETE FROM dependencies WHERE from_id = OLD.id OR to_id = OLD.id;
END;
CREATE TRIGGER tasks_cleanup AFTER DELETE ON tasks BEGIN
  DELETE FROM sections WHERE entity_id = OLD.id;
  DELETE FROM tags WHERE entity_id = OLD.id;
  DELETE FROM dependencies WHERE from_id = OLD.id OR to_id = OLD.id;
END;
CREATE TRIGGER sections_cleanup AFTER DELETE ON sections BEGIN
  DELETE FROM tags WHERE entity_id = OLD.id;
END;
CREATE TRIGGER templates_cleanup AFTER DELETE ON templates BEGIN
  DELETE FROM tags WHERE entity_id = OLD.id;
END;

-- Built-in templates. The port ships none, which leaves agents nowhere to write the
-- "Context Files" section the knowledge graph reads.
INSERT INTO templates (id, name, description, target_entity_type, is_built_in, is_protected, is_enabled, created_by, created_at, updated_at) VALUES
  ('0192f000-0000-7000-8000-000000000001', 'Task Implementation',
   'Requirements, plan, the files the task touches, and how it will be tested.',
   'TASK', 1, 1, 1, 'cairn', '1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z'),
  ('0192f000-0000-7000-8000-000000000002', 'Feature Plan',
   'Problem, scope, acceptance criteria and the areas of code the feature touches.',
   'FEATURE', 1, 1, 1, 'cairn', '1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z');

INSERT INTO template_sections (id, template_id, title, usage_description, content_sample, content_format, is_required, ordinal) VALUES
  ('0192f000-0000-7000-8000-000000000101', '0192f000-0000-7000-8000-000000000001', 'Requirements',
   'What must be true when the task is done.', '- ', 'MARKDOWN', 1, 0),
  ('0192f000-0000-7000-8000-000000000102', '0192f000-0000-7000-8000-000000000001', 'Implementation Plan',
   'Steps, in order, and the decisions they rest on.', '1. ', 'MARKDOWN', 1, 1),
  ('0192f000-0000-7000-8000-000000000103', '0192f000-0000-7000-8000-000000000001', 'Context Files',
   'Repository-relative paths this task reads or changes, one per line. The knowledge graph matches them against atoms.',
   'src/example/file.rs', 'PLAIN_TEXT', 1, 2),
  ('0192f000-0000-7000-8000-000000000104', '0192f000-0000-7000-8000-000000000001', 'Testing Strategy',
   'How the change is verified: tests to add or run.', '- ', 'MARKDOWN', 1, 3),
  ('0192f000-0000-7000-8000-000000000201', '0192f000-0000-7000-8000-000000000002', 'Problem Statement',
   'Who needs this and why.', '', 'MARKDOWN', 1, 0),
  ('0192f000-0000-7000-8000-000000000202', '0192f000-0000-7000-8000-000000000002', 'Scope',
   'What is in and out of this feature.', '- In: \n- Out: ', 'MARKDOWN', 1, 1),
  ('0192f000-0000-7000-8000-000000000203', '0192f000-0000-7000-8000-000000000002', 'Acceptance Criteria',
   'Observable conditions that make the feature done.', '- ', 'MARKDOWN', 1, 2),
  ('0192f000-0000-7000-8000-000000000204', '0192f000-0000-7000-8000-000000000002', 'Context Files',
   'Repository-relative paths or globs of the areas the feature touches, one per line.',
   'src/example/', 'PLAIN_TEXT', 0, 3);

INSERT INTO tags (entity_type, entity_id, tag) VALUES
  ('TEMPLATE', '0192f000-0000-7000-8000-000000000001', 'built-in'),
  ('TEMPLATE', '0192f000-0000-7000-8000-000000000002', 'built-in');
