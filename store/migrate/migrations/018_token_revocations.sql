-- Token revocations, counted: every revocation adds one in its own transaction, and each
-- process reads the count (at most once a millisecond, store.checkRevocations) to empty its
-- token cache when another process (the command line, another waybill on the same PostgreSQL
-- database) has revoked a token.
CREATE TABLE token_revocations (
    id      BIGINT PRIMARY KEY, -- always 1: the table has one row
    revoked BIGINT NOT NULL
);
INSERT INTO token_revocations (id, revoked) VALUES (1, 0);
