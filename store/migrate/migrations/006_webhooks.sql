-- Webhook subscriptions and their event records (the outbox).
CREATE TABLE webhook_subscriptions (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    url        TEXT NOT NULL,
    topic      TEXT NOT NULL,
    is_active  BOOLEAN NOT NULL,
    secret     TEXT NOT NULL,   -- base64 of 32 random bytes; signs every delivery
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhook_subscriptions_account_created ON webhook_subscriptions (account_id, created_at, id);
-- Emitting an event selects the active subscriptions to a topic (of one account, or of all).
CREATE INDEX webhook_subscriptions_topic ON webhook_subscriptions (topic, account_id, is_active);

-- One record per (event, subscription): the event id is shared by the records of every
-- subscription one change reached, and is the Standard Webhooks message id.
CREATE TABLE webhook_events (
    id                   TEXT NOT NULL,
    subscription_id      TEXT NOT NULL REFERENCES webhook_subscriptions (id),
    account_id           TEXT NOT NULL REFERENCES accounts (id),
    topic                TEXT NOT NULL,
    url                  TEXT NOT NULL,     -- the subscription's URL when the event was recorded
    payload              TEXT NOT NULL,     -- JSON
    happened_at          BIGINT NOT NULL,
    status               TEXT NOT NULL,     -- PENDING | DELIVERED | FAILED
    attempts             BIGINT NOT NULL DEFAULT 0,
    retry_from           BIGINT NOT NULL DEFAULT 0, -- attempts when last (re)queued
    last_attempt_at      BIGINT,
    next_attempt_at      BIGINT,            -- NULL once DELIVERED or FAILED
    last_response_status BIGINT,
    last_response_body   TEXT,              -- at most 1 KiB
    last_error           TEXT,
    lease_until          BIGINT,            -- a worker holds the record until then
    lease_token          TEXT,
    created_at           BIGINT NOT NULL,
    PRIMARY KEY (subscription_id, id)
);
CREATE INDEX webhook_events_list ON webhook_events (account_id, subscription_id, created_at, id);
CREATE INDEX webhook_events_list_status ON webhook_events (account_id, subscription_id, status, created_at, id);
CREATE INDEX webhook_events_due ON webhook_events (status, next_attempt_at);
