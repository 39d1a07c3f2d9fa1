-- Browser logins of the web UI (issue 16): the owner signs in once with
-- the API token, then each request carries an HttpOnly cookie holding a
-- random session id. The cookie's value is a secret and is never stored:
-- id is its SHA-256 in lowercase hex, which the checks below hold to.
-- csrf is the token the web layer compares with a request header.
-- A session ends when it has been idle too long (last_seen), when the
-- owner logs out or revokes every session, or when it is the oldest of
-- more than 64 (CreateSession). agent is the browser's User-Agent at
-- login, cut to 200 bytes. Times are UTC unix nanoseconds.
CREATE TABLE web_sessions (
	id         TEXT    PRIMARY KEY CHECK (length(id) = 64 AND id NOT GLOB '*[^0-9a-f]*'),
	csrf       TEXT    NOT NULL CHECK (csrf != ''),
	created_at INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL,
	agent      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX web_sessions_last_seen ON web_sessions (last_seen);
