-- Order import: the durable inbox of signed payloads, and the orders they become.

-- One row per accepted request. body is the raw payload exactly as signed (valid UTF-8 JSON,
-- so TEXT); a body sent twice by the same account is one import (body_sha256).
CREATE TABLE order_imports (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    body_sha256   TEXT NOT NULL,
    body          TEXT NOT NULL,
    order_id      TEXT,             -- the payload's id, when it has one
    status        TEXT NOT NULL,    -- QUEUED | PROCESSING | PROCESSED | FAILED
    errors        TEXT,             -- JSON [{field, code, message}] when FAILED
    attempts      BIGINT NOT NULL DEFAULT 0,
    claimed_until BIGINT NOT NULL DEFAULT 0, -- a worker's lease; 0 when unclaimed
    received_at   BIGINT NOT NULL,
    processed_at  BIGINT,
    UNIQUE (account_id, body_sha256)
);
-- The worker's claim query: unfinished imports whose lease has expired, oldest first.
CREATE INDEX order_imports_due ON order_imports (status, claimed_until, received_at);

-- One order per (account, payload id). import_id and import_received_at say which import the
-- content comes from, so an older import processed late never overwrites a newer one.
CREATE TABLE orders (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts (id),
    order_id            TEXT NOT NULL,
    name                TEXT NOT NULL,
    tags                TEXT NOT NULL,  -- JSON array of strings
    shipping_address    TEXT,           -- JSON address (the API's address field names)
    fulfillment_orders  TEXT NOT NULL,  -- JSON: normalized fulfillment orders with line items
    import_id           TEXT NOT NULL REFERENCES order_imports (id),
    import_received_at  BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    UNIQUE (account_id, order_id)
);
CREATE INDEX orders_account_created ON orders (account_id, created_at, id);
