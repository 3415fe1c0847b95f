-- Accounts (tenants) and their scoped API tokens.
CREATE TABLE accounts (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    brand           TEXT NOT NULL DEFAULT '',
    organization_id TEXT NOT NULL UNIQUE,
    ingest_secret   TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);

-- Tokens are stored only as SHA-256 hashes of the bearer string.
CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    token_hash TEXT NOT NULL UNIQUE,
    scopes     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_tokens_account ON api_tokens (account_id);
