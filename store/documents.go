package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// DocumentURLKey names the server key that signs the capability document URLs.
const DocumentURLKey = "document_urls"

// ServerKey returns the server's secret key called name: 32 bytes drawn from db.Rand at first
// use and stored, so that every process sharing the database holds the same key. The key is
// never logged.
func (db *DB) ServerKey(ctx context.Context, name string) ([]byte, error) {
	var secret string
	err := db.r.QueryRowContext(ctx, `SELECT secret FROM server_keys WHERE name = $1`, name).Scan(&secret)
	if errors.Is(err, sql.ErrNoRows) {
		var fresh []byte
		if fresh, err = db.randomBytes(32); err != nil {
			return nil, err
		}
		// A concurrent first use (another process) may insert first; both then read its key.
		err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO server_keys (name, secret, created_at) VALUES ($1, $2, $3)
				ON CONFLICT (name) DO NOTHING`, name, hex.EncodeToString(fresh), db.now()); err != nil {
				return err
			}
			return tx.QueryRowContext(ctx, `SELECT secret FROM server_keys WHERE name = $1`, name).Scan(&secret)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("server key %s: %w", name, err)
	}
	key, err := hex.DecodeString(secret)
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("server key %s: stored key is malformed", name)
	}
	return key, nil
}

// accountOf returns the account of the row id of table, one with id and account_id columns:
// for the routes that name a resource without its account (capability URLs, ADMIN), whose
// later queries are scoped to the account found. A missing row is ErrNotFound.
func (db *DB) accountOf(ctx context.Context, table, id string) (string, error) {
	var acct string
	err := db.readRow(ctx, `SELECT account_id FROM `+table+` WHERE id = $1`, id).Scan(&acct)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return acct, err
}

// LabelAccount returns the account a label belongs to. It serves the capability document URLs,
// which name a label without an account (their signature vouches for the id); every later
// query is scoped to that account.
func (db *DB) LabelAccount(ctx context.Context, labelID string) (string, error) {
	return db.accountOf(ctx, "shipping_labels", labelID)
}
