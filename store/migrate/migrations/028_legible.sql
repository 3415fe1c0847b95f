-- The record legible. A shipment's request is JSON text in
-- shipment_requests.request, its messages (who gave no rate) JSON text beside it (NULL for a
-- shipment quoted before they were kept), and its quotes rows of shipment_quotes, in cents;
-- shipments.packed keeps only a copy of the rendering (packed format 5). Both tables are
-- written with the shipment and never changed, so a buy, which rewrites the shipment's row,
-- does not rewrite them. The Go step of this migration (legibleRecords) moves there what older
-- rows hold in their packed values (formats 1 to 4), in shipments.request and .rates (JSON,
-- migrations 017 to 024) or in shipping_rates (before 017).
CREATE TABLE shipment_requests (
    shipment_id TEXT PRIMARY KEY REFERENCES shipments (id),
    request     TEXT NOT NULL,
    messages    TEXT
) WITHOUT ROWID;
-- One row per quote, in the order the API shows them (position); surcharges is a JSON object
-- of cents by type, in the quote's order ({"FUEL":19,"DAS":300}); a zone, a carrier version
-- of 0 is none; ddp_fee_cents is NULL unless the shipment is DDP. WITHOUT ROWID on SQLite:
-- the rows are kept in their key's order, with no second copy of it in an index (PostgreSQL's
-- tables have no rowid; the words are dropped there).
CREATE TABLE shipment_quotes (
    shipment_id             TEXT NOT NULL REFERENCES shipments (id),
    position                INTEGER NOT NULL,
    id                      TEXT NOT NULL,
    carrier                 TEXT NOT NULL,
    service                 TEXT NOT NULL,
    currency                TEXT NOT NULL,
    postage_cents           BIGINT NOT NULL,
    surcharges_cents        BIGINT NOT NULL,
    total_cents             BIGINT NOT NULL,
    retail_cents            BIGINT NOT NULL,
    estimated_delivery_at   BIGINT NOT NULL,
    estimated_delivery_days INTEGER NOT NULL,
    usps_zone               INTEGER NOT NULL,
    country_zone            INTEGER NOT NULL,
    billable_weight         BIGINT NOT NULL,
    actual_oz_weight        DOUBLE PRECISION NOT NULL,
    billable_oz_weight      BIGINT NOT NULL,
    dim_factor              INTEGER NOT NULL,
    dim_threshold           INTEGER NOT NULL,
    volume                  DOUBLE PRECISION NOT NULL,
    surcharges              TEXT NOT NULL,
    carrier_version         BIGINT NOT NULL,
    ddp_fee_cents           BIGINT,
    PRIMARY KEY (shipment_id, position)
) WITHOUT ROWID;
