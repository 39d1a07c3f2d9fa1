-- Turns, their messages (the chats' history) and the audit log.
-- Times are UTC unix nanoseconds.

CREATE TABLE turns (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	chat          TEXT    NOT NULL,
	input         TEXT    NOT NULL,
	status        TEXT    NOT NULL DEFAULT 'running',
	started_at    INTEGER NOT NULL,
	ended_at      INTEGER,
	reply         TEXT    NOT NULL DEFAULT '',
	error         TEXT    NOT NULL DEFAULT '',
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	provider      TEXT    NOT NULL DEFAULT '',
	model         TEXT    NOT NULL DEFAULT '',
	tool_calls    INTEGER NOT NULL DEFAULT 0,
	messages      INTEGER NOT NULL DEFAULT 0, -- rows in messages for this turn
	chars         INTEGER NOT NULL DEFAULT 0, -- sum of messages.chars
	owner         TEXT    NOT NULL DEFAULT '', -- the Store handle running it
	pid           INTEGER NOT NULL DEFAULT 0   -- the process running it
);
CREATE INDEX turns_chat ON turns (chat, id);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';
CREATE INDEX turns_ended ON turns (ended_at);

CREATE TABLE messages (
	id    INTEGER PRIMARY KEY AUTOINCREMENT,
	chat  TEXT    NOT NULL,
	turn  INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
	seq   INTEGER NOT NULL,
	role  TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
	body  TEXT    NOT NULL, -- JSON of contracts.Message
	chars INTEGER NOT NULL, -- runes of text, tool arguments and tool results
	UNIQUE (turn, seq)
);
CREATE INDEX messages_chat ON messages (chat, turn, seq);

CREATE TABLE audit (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	at          INTEGER NOT NULL,
	chat        TEXT    NOT NULL DEFAULT '',
	turn        INTEGER NOT NULL DEFAULT 0, -- 0: not part of a turn
	kind        TEXT    NOT NULL,
	tool        TEXT    NOT NULL DEFAULT '',
	args        TEXT    NOT NULL DEFAULT '',
	summary     TEXT    NOT NULL DEFAULT '',
	ok          INTEGER NOT NULL DEFAULT 0,
	duration_ns INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX audit_chat ON audit (chat, id);
CREATE INDEX audit_turn ON audit (turn, id);
