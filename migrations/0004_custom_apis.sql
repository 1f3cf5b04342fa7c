-- 0004_custom_apis: custom APIs, operator-written parameterized SQL served
-- at /minimal/api/rest/custom/v1/{org}/{project}/{uri} and by the MCP tool
-- call_api.
--
-- Portable between SQLite and PostgreSQL, as 0001_init: TEXT UUID ids made
-- by the store, BIGINT Unix nanoseconds, JSON documents as TEXT, no
-- engine-specific syntax.
--
--   * a definition is keyed by (project, uri, method, version); several
--     versions of one uri and method coexist;
--   * db_type and schema_name name the registered database it runs on (the
--     database need not be registered yet: a call then answers 404);
--   * roles, tables, params and statements are JSON arrays: role names,
--     table names the statements read (for locks), parameter objects
--     {name, type, required, default, max_length, min, max}, and the SQL
--     text of each statement with its :name placeholders, as written.
--     Package custom checks and compiles them; the store checks their shape.

CREATE TABLE custom_apis (
    id          TEXT    NOT NULL PRIMARY KEY,
    project_id  TEXT    NOT NULL REFERENCES projects (id),
    uri         TEXT    NOT NULL,
    method      TEXT    NOT NULL CHECK (method IN ('GET', 'POST', 'PUT', 'DELETE')),
    version     BIGINT  NOT NULL CHECK (version >= 1),
    db_type     TEXT    NOT NULL,
    schema_name TEXT    NOT NULL,
    mode        TEXT    NOT NULL CHECK (mode IN ('read', 'write')),
    description TEXT    NOT NULL DEFAULT '',
    roles       TEXT    NOT NULL,
    tables      TEXT    NOT NULL,
    params      TEXT    NOT NULL,
    statements  TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (project_id, uri, method, version)
);
