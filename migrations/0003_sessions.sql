-- 0003_sessions: AI sessions of the MCP face and their call journal.
--
-- Portable between SQLite and PostgreSQL, as 0001_init: TEXT UUID ids made
-- by the store, BIGINT Unix nanoseconds, no engine-specific syntax.
--
--   * a session belongs to one identity of one project; idle_ns is its idle
--     expiry (0: none, the session lasts until it is ended); it is live while
--     ended_at is NULL and last_seen_at + idle_ns lies in the future;
--   * a journal row is written before a tool runs (outcome NULL) and
--     completed after it (outcome 'ok' or the error code, the caller-safe
--     message, the rows read or affected, the duration); seq numbers the
--     calls of a session from 1.

CREATE TABLE sessions (
    id           TEXT    NOT NULL PRIMARY KEY,
    project_id   TEXT    NOT NULL REFERENCES projects (id),
    identity_id  TEXT    NOT NULL REFERENCES identities (id),
    name         TEXT    NOT NULL,
    context      TEXT    NOT NULL,
    idle_ns      BIGINT  NOT NULL CHECK (idle_ns >= 0),
    started_at   BIGINT  NOT NULL,
    last_seen_at BIGINT  NOT NULL,
    ended_at     BIGINT
);

CREATE INDEX sessions_identity_idx ON sessions (identity_id);

CREATE TABLE session_calls (
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    seq         BIGINT  NOT NULL,
    tool        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL,
    started_at  BIGINT  NOT NULL,
    outcome     TEXT,
    message     TEXT    NOT NULL DEFAULT '',
    rows_count  BIGINT  NOT NULL DEFAULT 0,
    duration_ns BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, seq)
);
