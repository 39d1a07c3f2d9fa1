-- The ledger's sums by UTC day and model. The budgets sum the day's and
-- the month's model calls by model on every owner's turn (core's
-- spentAt); summed from usage, a month of a few thousand calls costs
-- milliseconds of CPU, all of it spent again on the next turn.
-- ModelUsage reads the whole UTC days of a range from here and only its
-- partial days at either end from usage. Triggers keep this table in
-- the transaction that changes usage, so the two never disagree, in
-- whatever process writes.
CREATE TABLE usage_daily (
	day           INTEGER NOT NULL, -- at / 86400000000000: UTC days since 1970
	model         TEXT    NOT NULL,
	calls         INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	PRIMARY KEY (day, model)
);

INSERT INTO usage_daily (day, model, calls, input_tokens, output_tokens)
	SELECT at / 86400000000000, model, COUNT(*), SUM(input_tokens), SUM(output_tokens)
	FROM usage GROUP BY 1, 2;

CREATE TRIGGER usage_daily_insert AFTER INSERT ON usage BEGIN
	INSERT INTO usage_daily (day, model, calls, input_tokens, output_tokens)
		VALUES (NEW.at / 86400000000000, NEW.model, 1, NEW.input_tokens, NEW.output_tokens)
		ON CONFLICT (day, model) DO UPDATE SET calls = calls + 1,
			input_tokens = input_tokens + excluded.input_tokens,
			output_tokens = output_tokens + excluded.output_tokens;
END;

-- The ledger only grows; these keep the sums right if a row is ever
-- changed or deleted by hand.
CREATE TRIGGER usage_daily_delete AFTER DELETE ON usage BEGIN
	UPDATE usage_daily SET calls = calls - 1,
		input_tokens = input_tokens - OLD.input_tokens,
		output_tokens = output_tokens - OLD.output_tokens
		WHERE day = OLD.at / 86400000000000 AND model = OLD.model;
END;

CREATE TRIGGER usage_daily_update AFTER UPDATE OF at, model, input_tokens, output_tokens ON usage BEGIN
	UPDATE usage_daily SET calls = calls - 1,
		input_tokens = input_tokens - OLD.input_tokens,
		output_tokens = output_tokens - OLD.output_tokens
		WHERE day = OLD.at / 86400000000000 AND model = OLD.model;
	INSERT INTO usage_daily (day, model, calls, input_tokens, output_tokens)
		VALUES (NEW.at / 86400000000000, NEW.model, 1, NEW.input_tokens, NEW.output_tokens)
		ON CONFLICT (day, model) DO UPDATE SET calls = calls + 1,
			input_tokens = input_tokens + excluded.input_tokens,
			output_tokens = output_tokens + excluded.output_tokens;
END;
