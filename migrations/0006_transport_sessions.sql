-- 0006_transport_sessions: the MCP transport session an AI session is
-- bound to.
--
-- A handshake-era MCP client (protocol 2025-03-26 … 2025-11-25) carries the
-- Mcp-Session-Id that initialize issued, and no other header of its own. An
-- AI session started on such a transport session records its id here, and
-- later calls on it use the newest AI session so bound (NULL: started with
-- no transport session, as over 2026-07-28 or stdio).

ALTER TABLE sessions ADD COLUMN transport_id TEXT;

CREATE INDEX sessions_transport_idx ON sessions (transport_id);
