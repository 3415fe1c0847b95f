-- A purchase from a carrier that sells outside waybill (a Go carrier of the host, a carrier's
-- API) is written here, in its own transaction, before the carrier is called, and deleted in the
-- transaction that records its label, or once nothing was sold. One row per shipment and per
-- Idempotency-Key at most: a second buy of either, in any process, waits for it to end. A row
-- left PENDING by a process that died is recovered: the carrier asked again under the same label
-- id (state stays PENDING, claimed_until leases it to one process), or, where the carrier cannot
-- be asked again, UNRESOLVED until the operator says what the carrier did.
CREATE TABLE purchase_attempts (
    label_id        TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    shipment_id     TEXT NOT NULL,
    rate_id         TEXT NOT NULL,
    carrier         TEXT NOT NULL,
    insured_cents   BIGINT NOT NULL,
    idempotency_key TEXT,
    fingerprint     TEXT,
    state           TEXT NOT NULL,   -- PENDING | UNRESOLVED
    started_at      BIGINT NOT NULL,
    claimed_until   BIGINT NOT NULL
);
CREATE UNIQUE INDEX purchase_attempts_shipment ON purchase_attempts (account_id, shipment_id);
CREATE UNIQUE INDEX purchase_attempts_key ON purchase_attempts (account_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX purchase_attempts_state ON purchase_attempts (state, claimed_until);
