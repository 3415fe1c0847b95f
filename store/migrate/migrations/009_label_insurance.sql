-- Insurance bought with a label (compat: insurance_amount on buy). insured_cents is the declared
-- value, NULL when not insured; insurance_cents what it costs, an INSURANCE surcharge billed with
-- the postage. (shipping_rates.rate_metadata is written with the real product's field names
-- from here on: usps_zone, billable_weight, weight_metadata, surcharges_metadata; rows in the
-- earlier shape are still read.)
ALTER TABLE shipping_labels ADD COLUMN insured_cents BIGINT;
ALTER TABLE shipping_labels ADD COLUMN insurance_cents BIGINT NOT NULL DEFAULT 0;
