-- Tracking from carriers.

-- Each carrier's inbound secret for signed pushes (POST /carrier_events/{carrier}); a row is
-- created by the first rotation, and a carrier without one accepts no push.
CREATE TABLE carrier_event_secrets (
    carrier    TEXT PRIMARY KEY,
    secret     TEXT NOT NULL,
    rotated_at BIGINT NOT NULL
);

-- Polling of carriers that implement shipping.Tracker: when a label is next due (NULL: its
-- purchase plus the poll interval) and how many polls in a row failed. A poll claims a label by
-- moving poll_at past the poll's timeout, so one process polls it at a time.
ALTER TABLE shipping_labels ADD COLUMN poll_at BIGINT;
ALTER TABLE shipping_labels ADD COLUMN poll_failures BIGINT NOT NULL DEFAULT 0;
CREATE INDEX shipping_labels_carrier_poll ON shipping_labels (carrier, status, poll_at);
