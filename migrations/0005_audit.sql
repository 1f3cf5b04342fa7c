-- 0005_audit: the audit log of data operations.
--
-- Portable between SQLite and PostgreSQL, as 0001_init: TEXT UUID ids made
-- by the store (version 7, so they sort by time), BIGINT Unix nanoseconds,
-- no engine-specific syntax.
--
--   * one row per data operation through either face (action create,
--     read, update or delete), written asynchronously by the server's
--     audit writer;
--   * no foreign keys: the log outlives the identities and projects it
--     names, and a row is never refused because its identity was deleted
--     a moment before the write;
--   * roles is a JSON array of the roles the token held; outcome is 'ok'
--     or the error code the caller got, message its caller-safe text;
--   * face is 'rest' or 'mcp' ('' when neither: the CLI); request_id is the
--     X-Request-Id of the answer, also on the request's log lines.

CREATE TABLE audit_log (
    id          TEXT    NOT NULL PRIMARY KEY,
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
    duration_ns BIGINT  NOT NULL
);

CREATE INDEX audit_log_project_idx ON audit_log (project_id, id);
