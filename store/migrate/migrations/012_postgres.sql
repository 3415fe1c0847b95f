-- Many processes on one database.

-- The import worker's claim: due imports oldest first, by id (ClaimImports).
CREATE INDEX order_imports_claim ON order_imports (status, received_at, id);

-- The first start's bootstrap (the default account and its token) happens once in the
-- database's life: the transaction that inserts this row does it; any other finds the row.
CREATE TABLE bootstrap (
    id         BIGINT PRIMARY KEY,
    account_id TEXT,
    created_at BIGINT NOT NULL
);
