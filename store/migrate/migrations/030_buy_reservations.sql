-- Carriers are called outside the writer. A buy calls the carrier with no transaction
-- open, then records the label (and its Idempotency-Key with the answer) in one transaction.
-- A label a carrier sold that could not be recorded, to be voided at the carrier, retried at
-- due_at until the carrier agrees.
CREATE TABLE label_voids (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL,
    shipment_id   TEXT NOT NULL,
    label_id      TEXT NOT NULL,
    carrier       TEXT NOT NULL,
    tracking_code TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    due_at        BIGINT NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX label_voids_due ON label_voids (due_at);
