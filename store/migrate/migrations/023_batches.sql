-- Batches: a batch and its items are stored before POST /batches answers 202; the
-- batch worker works the items off this durable queue.
CREATE TABLE batches (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    status       TEXT NOT NULL,    -- PROCESSING | COMPLETED
    buy          TEXT NOT NULL,    -- CHEAPEST | FASTEST | NONE
    label_format TEXT,             -- the batch's default for its items, when given
    item_count   BIGINT NOT NULL,
    pending      BIGINT NOT NULL,  -- items not yet finished; the batch completes at 0
    created_at   BIGINT NOT NULL,
    completed_at BIGINT
);
CREATE INDEX batches_account_created ON batches (account_id, created_at, id);
-- The worker's fair claim starts from the accounts with batches in progress.
CREATE INDEX batches_status_account ON batches (status, account_id);

-- One row per item, in the batch's order (position). shipment_id is decided when the batch is
-- stored, so a worker that re-runs an item after a crash finds the shipment it made, and the
-- buy's Idempotency-Key is derived from the batch and position: each item is created and
-- bought exactly once.
CREATE TABLE batch_items (
    batch_id      TEXT NOT NULL REFERENCES batches (id),
    position      BIGINT NOT NULL,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    shipment_id   TEXT NOT NULL,
    body          TEXT NOT NULL,   -- the item as sent (JSON)
    status        TEXT NOT NULL,   -- QUEUED | PROCESSING | CREATED | PURCHASED | FAILED
    errors        TEXT,            -- JSON: the API error of a FAILED item
    attempts      BIGINT NOT NULL DEFAULT 0,
    claimed_until BIGINT NOT NULL DEFAULT 0, -- a worker's lease; 0 when unclaimed
    queued_at     BIGINT NOT NULL,
    PRIMARY KEY (batch_id, position)
);
-- The claim: an account's queued items in order, and leases that expired.
CREATE INDEX batch_items_queue ON batch_items (account_id, status, queued_at, batch_id, position);
