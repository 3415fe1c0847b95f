-- Documents: invoice documents rendered once, the key that signs document URLs, and the
-- bill-to an invoice is addressed to.

-- A finalized invoice never changes, so its PDF and CSV are rendered once, in the finalize
-- transaction, and served from here. The digests are the documents' ETags.
CREATE TABLE invoice_documents (
    invoice_id  TEXT PRIMARY KEY REFERENCES invoices (id),
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    pdf         BYTEA NOT NULL,
    pdf_sha256  TEXT NOT NULL,
    csv         BYTEA NOT NULL,
    csv_sha256  TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- Secret keys the server keeps for itself (hex), created at first use so that every process
-- sharing the database signs alike. "document_urls" signs the capability document URLs.
CREATE TABLE server_keys (
    name       TEXT PRIMARY KEY,
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- bill_to_address is JSON: {street1, street2, city, state, zip, country}.
ALTER TABLE billing_profiles ADD COLUMN bill_to_name TEXT;
ALTER TABLE billing_profiles ADD COLUMN bill_to_address TEXT;
