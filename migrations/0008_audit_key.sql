-- 0008_audit_key: audit_log keyed by (project_id, id).
--
-- The log is read a project at a time, newest first (Store.AuditLog:
-- project_id = … ORDER BY id DESC), and written a row per data operation.
-- One key on (project_id, id) serves those reads, as the index
-- audit_log_project_idx did, and replaces both it and the key on id: each
-- row written updates one index fewer. Ids stay unique (time-ordered UUIDs
-- made by the store); the key names the project too.
--
-- The table is rebuilt, as SQLite cannot change a table's key in place:
-- every row is copied into the new table, which then takes the old one's
-- name. The old table's index goes with it.

CREATE TABLE audit_log_new (
    id          TEXT    NOT NULL,
    at          BIGINT  NOT NULL,
    project_id  TEXT    NOT NULL,
    identity_id TEXT    NOT NULL,
    identity    TEXT    NOT NULL,
    roles       TEXT    NOT NULL,
    face        TEXT    NOT NULL,
    object      TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    rows_count  BIGINT  NOT NULL,
    outcome     TEXT    NOT NULL,
    message     TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    duration_ns BIGINT  NOT NULL,
    CONSTRAINT audit_log_key PRIMARY KEY (project_id, id)
);

INSERT INTO audit_log_new (id, at, project_id, identity_id, identity, roles, face, object, action, rows_count, outcome, message, request_id, duration_ns)
SELECT id, at, project_id, identity_id, identity, roles, face, object, action, rows_count, outcome, message, request_id, duration_ns
FROM audit_log;

DROP TABLE audit_log;

ALTER TABLE audit_log_new RENAME TO audit_log;
