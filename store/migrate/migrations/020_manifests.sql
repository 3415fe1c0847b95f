-- Manifests (end-of-day close-out). A manifest never changes once created: its
-- label ids and both documents are written in the transaction that creates it and served from
-- here. The digests are the documents' ETags.
CREATE TABLE manifests (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    carrier     TEXT NOT NULL,
    ship_date   TEXT NOT NULL,   -- YYYY-MM-DD
    label_ids   TEXT NOT NULL,   -- JSON array, in the documents' order
    label_count BIGINT NOT NULL,
    pdf         BYTEA NOT NULL,
    pdf_sha256  TEXT NOT NULL,
    csv         BYTEA NOT NULL,
    csv_sha256  TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX manifests_account_created ON manifests (account_id, created_at, id);
CREATE INDEX manifests_account_carrier ON manifests (account_id, carrier, ship_date, created_at, id);

-- The manifest holding a label; NULL until one does. A label joins at most one manifest: the
-- close-out claims it with UPDATE … WHERE manifest_id IS NULL.
ALTER TABLE shipping_labels ADD COLUMN manifest_id TEXT REFERENCES manifests (id);
-- The close-out looks up a carrier's PRE_TRANSIT labels of the account.
CREATE INDEX shipping_labels_account_carrier_status ON shipping_labels (account_id, carrier, status);
