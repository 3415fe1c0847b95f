-- Operator listings: accounts newest first, tokens with their last use, and an
-- account's order imports newest first (optionally by status).
CREATE INDEX accounts_created ON accounts (created_at, id);
ALTER TABLE api_tokens ADD COLUMN last_used_at BIGINT;
CREATE INDEX order_imports_account_received ON order_imports (account_id, received_at, id);
CREATE INDEX order_imports_account_status ON order_imports (account_id, status, received_at, id);
