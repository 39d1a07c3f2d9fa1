-- Long-term memory: the facts the agent remembered (remember), each with
-- where it was said (chat, turn) and when, which the owner lists, edits
-- and forgets. An id is never reused (AUTOINCREMENT): the audit names a
-- fact by its id and the hash of its text, never by the text.
CREATE TABLE facts (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	text       TEXT    NOT NULL,
	hash       TEXT    NOT NULL, -- FactHash(text): the same fact is remembered once
	chat       TEXT    NOT NULL DEFAULT '',
	turn       INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX facts_hash ON facts (hash);
-- The full-text index of the facts (recall, and the facts chosen for a
-- turn's prompt). External content: the text is stored once, in facts;
-- the index holds its tokens, kept in step by the triggers below.
-- Forgetting is for real: with 'secure-delete' an FTS5 delete takes the
-- fact's tokens out of the index's pages instead of adding a tombstone
-- that leaves them there until a merge, and the store's connections run
-- with PRAGMA secure_delete, so the bytes a delete frees (the row, the
-- old pages of the index) are overwritten with zeros.
CREATE VIRTUAL TABLE facts_fts USING fts5(
	text,
	content = 'facts',
	content_rowid = 'id',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO facts_fts (facts_fts, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
	INSERT INTO facts_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
	INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER facts_au AFTER UPDATE OF text ON facts BEGIN
	INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.id, old.text);
	INSERT INTO facts_fts (rowid, text) VALUES (new.id, new.text);
END;
