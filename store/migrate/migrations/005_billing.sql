-- Billing: one profile per account, one invoice per account and period, line items.

CREATE TABLE billing_profiles (
    account_id     TEXT PRIMARY KEY REFERENCES accounts (id),
    currency       TEXT NOT NULL,
    period         TEXT NOT NULL,   -- MONTHLY | WEEKLY
    net_terms_days BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

-- Invoice numbers (INV-YYYY-NNNNNN) count per year across all accounts, as an issuer's
-- invoice numbers must; the row is bumped in the transaction that creates the invoice.
CREATE TABLE invoice_sequences (
    year     BIGINT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);

CREATE TABLE invoices (
    id                      TEXT PRIMARY KEY,
    account_id              TEXT NOT NULL REFERENCES accounts (id),
    status                  TEXT NOT NULL,   -- DRAFT | OPEN | PAID | UNCOLLECTIBLE | VOID
    currency                TEXT NOT NULL,
    invoice_number          TEXT NOT NULL,
    period_start            TEXT NOT NULL,   -- YYYY-MM-DD
    period_end              TEXT NOT NULL,   -- YYYY-MM-DD, inclusive
    total_cents             BIGINT NOT NULL, -- always the sum of the live line items
    deferred_cents          BIGINT NOT NULL,
    invoice_date            TEXT,            -- set when finalized
    due_date                TEXT,
    finalized_at            BIGINT,
    paid_at                 BIGINT,
    marked_uncollectible_at BIGINT,
    voided_at               BIGINT,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL,
    UNIQUE (account_id, period_start),
    UNIQUE (invoice_number)
);
-- The list (newest period first), its status filter, and the closer's scan for ended DRAFTs.
CREATE INDEX invoices_account_status ON invoices (account_id, status, period_start, id);
CREATE INDEX invoices_status_period_end ON invoices (status, period_end);

-- label_id is UNIQUE so a finished label is billed at most once, even when soft-deleted.
CREATE TABLE billing_line_items (
    id                          TEXT PRIMARY KEY,
    account_id                  TEXT NOT NULL REFERENCES accounts (id),
    invoice_id                  TEXT NOT NULL REFERENCES invoices (id),
    type                        TEXT NOT NULL,   -- POSTAGE | FEE
    label_id                    TEXT UNIQUE REFERENCES shipping_labels (id),
    carrier                     TEXT,
    service                     TEXT,
    tracking_code               TEXT,
    description                 TEXT NOT NULL,
    postage_cents               BIGINT NOT NULL,
    surcharges_cents            BIGINT NOT NULL,
    total_cents                 BIGINT NOT NULL,
    retail_cents                BIGINT,
    purchased_at                BIGINT,
    shipping_label_status       TEXT,
    shipment_request_parameters TEXT,            -- JSON
    shipping_rate_metadata      TEXT,            -- JSON
    created_at                  BIGINT NOT NULL,
    deleted_at                  BIGINT           -- soft delete
);
CREATE INDEX billing_line_items_invoice ON billing_line_items (account_id, invoice_id, deleted_at, created_at, id);
