-- 0002_policy: permission templates, their bindings to roles, and row scopes.
--
-- Portable between SQLite and PostgreSQL, as 0001_init: TEXT UUID ids made
-- by the store, JSON documents as TEXT, no engine-specific syntax.
--
--   * a template is a named, ordered list of rules of one project;
--   * a rule's actions are a JSON array of "create", "read", "update",
--     "delete"; its columns a JSON array of column names, or NULL for every
--     column; its effect "allow" or "deny";
--   * a binding gives a role the rules of one template in one project;
--   * a scope restricts one role on objects matching a pattern to the rows
--     satisfying a filter in the REST grammar.
--
-- The store replaces a project's templates, rules, bindings, scopes and
-- locks together in one transaction (Store.ReplacePolicy).

CREATE TABLE templates (
    id         TEXT    NOT NULL PRIMARY KEY,
    project_id TEXT    NOT NULL REFERENCES projects (id),
    name       TEXT    NOT NULL,
    UNIQUE (project_id, name)
);

CREATE TABLE template_rules (
    template_id TEXT    NOT NULL REFERENCES templates (id),
    position    INTEGER NOT NULL,
    object      TEXT    NOT NULL,
    actions     TEXT    NOT NULL,
    columns     TEXT,
    effect      TEXT    NOT NULL CHECK (effect IN ('allow', 'deny')),
    PRIMARY KEY (template_id, position)
);

CREATE TABLE bindings (
    project_id  TEXT    NOT NULL REFERENCES projects (id),
    role        TEXT    NOT NULL,
    template_id TEXT    NOT NULL REFERENCES templates (id),
    UNIQUE (project_id, role, template_id)
);

CREATE INDEX bindings_template_idx ON bindings (template_id);

CREATE TABLE scopes (
    project_id TEXT    NOT NULL REFERENCES projects (id),
    role       TEXT    NOT NULL,
    object     TEXT    NOT NULL,
    filter     TEXT    NOT NULL,
    UNIQUE (project_id, role, object)
);
