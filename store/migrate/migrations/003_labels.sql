-- Purchased labels and their tracking events.
CREATE TABLE shipping_labels (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts (id),
    shipment_id           TEXT NOT NULL UNIQUE REFERENCES shipments (id),
    shipping_rate_id      TEXT NOT NULL REFERENCES shipping_rates (id),
    carrier               TEXT NOT NULL,
    service               TEXT NOT NULL,
    tracking_code         TEXT NOT NULL UNIQUE,  -- also backs the tracking_code filter and the event feed
    status                TEXT NOT NULL,
    substatus             TEXT,
    label_format          TEXT NOT NULL,
    last_event_at         BIGINT,   -- occurred_at of the event the status follows
    first_carrier_scan_at BIGINT,
    delivered_at          BIGINT,
    finished_at           BIGINT,   -- when it became DELIVERED or RETURN_TO_SENDER
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX shipping_labels_account_created ON shipping_labels (account_id, created_at, id);
CREATE INDEX shipping_labels_account_status ON shipping_labels (account_id, status, created_at, id);

CREATE TABLE tracking_events (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    label_id      TEXT NOT NULL REFERENCES shipping_labels (id),
    status        TEXT NOT NULL,
    substatus     TEXT,
    status_detail TEXT,
    message       TEXT NOT NULL,
    occurred_at   BIGINT NOT NULL,
    source        TEXT NOT NULL,
    location      TEXT,             -- JSON: city, state, zip, country
    created_at    BIGINT NOT NULL,
    UNIQUE (label_id, occurred_at, status, message)
);
CREATE INDEX tracking_events_label ON tracking_events (label_id, occurred_at, id);

-- Idempotency-Key of label purchases: the key, what the request was (a fingerprint of shipment,
-- rate and options) and the answer, written in the purchase's transaction.
CREATE TABLE idempotency_keys (
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    idempotency_key TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    shipment_id     TEXT NOT NULL,
    response        TEXT NOT NULL,    -- JSON: the purchased shipment as answered
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (account_id, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
