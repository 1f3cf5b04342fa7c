-- 0009_audit_without_rowid: on SQLite, audit_log is stored in its key.
--
-- SQLite only (PostgreSQL records the version and keeps its table: a heap
-- and one index, the key of 0008_audit_key). A SQLite table with a rowid
-- keeps its rows in one B-tree by rowid and its key (project_id, id) in a
-- second one: each row written is two B-tree inserts, and each row read by
-- the key a second lookup. WITHOUT ROWID keeps the rows in the B-tree of
-- the key itself: a row written is one insert, the pages a batch of rows
-- dirties fewer, and AuditLog (one project, newest first) reads the rows
-- in the key's order directly. Same columns, same key, same constraint
-- name.
--
-- The table is rebuilt, as SQLite cannot change a table's storage in
-- place: every row is copied, in key order, into the new table, which
-- then takes the old one's name.

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
) WITHOUT ROWID;

INSERT INTO audit_log_new (id, at, project_id, identity_id, identity, roles, face, object, action, rows_count, outcome, message, request_id, duration_ns)
SELECT id, at, project_id, identity_id, identity, roles, face, object, action, rows_count, outcome, message, request_id, duration_ns
FROM audit_log
ORDER BY project_id, id;

DROP TABLE audit_log;

ALTER TABLE audit_log_new RENAME TO audit_log;
