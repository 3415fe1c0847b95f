-- Shipments and the rates quoted for them.
CREATE TABLE shipments (
    id                     TEXT PRIMARY KEY,
    account_id             TEXT NOT NULL REFERENCES accounts (id),
    status                 TEXT NOT NULL,
    brand                  TEXT NOT NULL DEFAULT '',
    carrier                TEXT,            -- the purchased rate's carrier; NULL until bought
    ship_date              TEXT NOT NULL,   -- YYYY-MM-DD
    rate_shopping_profile  TEXT NOT NULL,
    rate_shopping_strategy TEXT NOT NULL,
    label_format           TEXT NOT NULL,   -- PDF | ZPL
    custom_reference_1     TEXT,
    custom_reference_2     TEXT,
    request                TEXT NOT NULL,   -- JSON: origin, destination, return_address, parcel
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL
);
CREATE INDEX shipments_account_created ON shipments (account_id, created_at, id);
CREATE INDEX shipments_account_status ON shipments (account_id, status, created_at, id);
CREATE INDEX shipments_account_brand ON shipments (account_id, brand, created_at, id);
CREATE INDEX shipments_account_carrier ON shipments (account_id, carrier, created_at, id);

CREATE TABLE shipping_rates (
    id                      TEXT PRIMARY KEY,
    account_id              TEXT NOT NULL REFERENCES accounts (id),
    shipment_id             TEXT NOT NULL REFERENCES shipments (id),
    carrier                 TEXT NOT NULL,
    service                 TEXT NOT NULL,
    currency                TEXT NOT NULL,
    postage_cents           BIGINT NOT NULL,  -- base postage
    surcharges_cents        BIGINT NOT NULL,  -- fuel + DAS/EDAS
    total_cents             BIGINT NOT NULL,  -- price.amount in cents = postage + surcharges
    retail_cents            BIGINT NOT NULL,  -- the carrier's list price for the same parcel
    estimated_delivery_days BIGINT NOT NULL,
    estimated_delivery_date TEXT NOT NULL,    -- RFC 3339
    rate_metadata           TEXT NOT NULL,    -- JSON: zone, billable_weight_oz, surcharges
    position                BIGINT NOT NULL,  -- order within the shipment's rates
    created_at              BIGINT NOT NULL
);
CREATE INDEX shipping_rates_shipment ON shipping_rates (shipment_id, position);

-- Rate shopping profiles are global: every account shops under them (no account_id).
CREATE TABLE rate_shopping_profiles (
    profile_key TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    body        TEXT NOT NULL,   -- JSON: carriers, sort_centers, zip_coverage, zip_surcharges, zone_tnt_mapping
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
