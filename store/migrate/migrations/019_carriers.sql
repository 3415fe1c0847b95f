-- Carriers as data. A carrier's card is stored as versions that are never changed
-- or removed; the one in force for a shipment is chosen by effective_from (shipping.InForce).
-- A deleted carrier keeps its row and versions: its labels still track, void and bill.
CREATE TABLE carriers (
    code        TEXT PRIMARY KEY,
    deleted     BOOLEAN NOT NULL,
    -- The next tracking serial to hand out, raised to the range start in force when below it
    -- (store.txSerials): serials are never reused.
    next_serial BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE TABLE carrier_versions (
    carrier        TEXT NOT NULL REFERENCES carriers (code),
    version        BIGINT NOT NULL,
    effective_from TEXT NOT NULL,   -- YYYY-MM-DD
    created_at     BIGINT NOT NULL,
    card           TEXT NOT NULL,   -- JSON: shipping.Card
    PRIMARY KEY (carrier, version)
);
-- Every change of the stored carriers adds one to changes, in its transaction; each process
-- reads it (at most once a millisecond) to reload its compiled carriers when another process
-- changed them. seeded records that the sample carriers were stored once, on the first start.
CREATE TABLE carrier_changes (
    id      BIGINT PRIMARY KEY, -- always 1: the table has one row
    changes BIGINT NOT NULL,
    seeded  BOOLEAN NOT NULL
);
INSERT INTO carrier_changes (id, changes, seeded) VALUES (1, 0, FALSE);
