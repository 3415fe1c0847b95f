package store

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Account is a tenant: everything else belongs to exactly one account.
type Account struct {
	ID             string
	Name           string
	Brand          string
	OrganizationID string
	IngestSecret   string
	CreatedAt      shipping.Timestamp
}

// Token is an API token. Token (the bearer string) is known only when the token is created.
type Token struct {
	ID        string
	AccountID string
	Scopes    []string
	Token     string
	CreatedAt shipping.Timestamp
}

// Principal is who a request acts for.
type Principal struct {
	AccountID string
	TokenID   string
	Scopes    []string
}

// CreateAccount creates an account with a fresh organization id and ingest secret, and its
// billing profile, in one transaction.
func (db *DB) CreateAccount(ctx context.Context, name, brand string) (Account, error) {
	secret, err := db.newSecret()
	if err != nil {
		return Account{}, err
	}
	a := Account{ID: db.NewID(), Name: name, Brand: brand, OrganizationID: db.NewID(), IngestSecret: secret, CreatedAt: stamp(db.now())}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return db.insertAccount(ctx, tx, a) })
	return a, err
}

func (db *DB) insertAccount(ctx context.Context, tx *sql.Tx, a Account) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, brand, organization_id, ingest_secret, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, a.ID, a.Name, a.Brand, a.OrganizationID, a.IngestSecret, Micros(a.CreatedAt.Time))
	if err != nil {
		return err
	}
	return db.createBillingProfile(ctx, tx, a.ID)
}

// Bootstrap is the first start: on a database without accounts it creates account "default"
// and a token with the given scopes, and returns the token with created true. It does so once
// in the database's life, also when several processes start together: one transaction claims
// the bootstrap row, and every other call (or a database that had accounts already) returns
// created false.
func (db *DB) Bootstrap(ctx context.Context, scopes []string) (tok Token, created bool, err error) {
	secret, err := db.newSecret()
	if err != nil {
		return Token{}, false, err
	}
	a := Account{ID: db.NewID(), Name: "default", OrganizationID: db.NewID(), IngestSecret: secret, CreatedAt: stamp(db.now())}
	tok, err = db.newToken(a.ID, scopes)
	if err != nil {
		return Token{}, false, err
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		created = false
		res, err := tx.ExecContext(ctx, `INSERT INTO bootstrap (id, created_at) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, db.now())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		var accounts int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts`).Scan(&accounts); err != nil || accounts > 0 {
			return err
		}
		if err := db.insertAccount(ctx, tx, a); err != nil {
			return err
		}
		if err := insertToken(ctx, tx, tok); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE bootstrap SET account_id = $1 WHERE id = 1`, a.ID); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil || !created {
		return Token{}, false, err
	}
	return tok, true, nil
}

// newSecret returns base64 text of 32 random bytes.
func (db *DB) newSecret() (string, error) {
	b, err := db.randomBytes(32)
	return base64.StdEncoding.EncodeToString(b), err
}

// Account returns one account.
func (db *DB) Account(ctx context.Context, id string) (Account, error) {
	return db.accountWhere(ctx, "id", id)
}

// AccountName returns the account's name.
func (db *DB) AccountName(ctx context.Context, id string) (string, error) {
	a, err := db.Account(ctx, id)
	return a.Name, err
}

// AccountBrand returns the account's brand, the default of its new shipments, from a cache
// (accounts never change their brand; a vanished account is not found).
func (db *DB) AccountBrand(ctx context.Context, id string) (string, error) {
	if brand, ok := db.brands.get(id); ok {
		return brand, nil
	}
	gen := db.brands.begin()
	var brand string
	err := db.readRow(ctx, `SELECT brand FROM accounts WHERE id = $1`, id).Scan(&brand)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", err
	}
	db.brands.put(gen, id, brand)
	return brand, nil
}

func (db *DB) accountWhere(ctx context.Context, column, value string) (Account, error) {
	a, err := scanAccount(db.r.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE `+column+` = $1`, value))
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, ErrNotFound
	}
	return a, err
}

// accountColumns are the columns scanAccount reads, in order.
const accountColumns = `id, name, brand, organization_id, ingest_secret, created_at`

func scanAccount(row rowScanner) (Account, error) {
	var a Account
	var created int64
	err := row.Scan(&a.ID, &a.Name, &a.Brand, &a.OrganizationID, &a.IngestSecret, &created)
	a.CreatedAt = stamp(created)
	return a, err
}

// RotateIngestSecret replaces the account's ingest secret; the old one stops working at once.
func (db *DB) RotateIngestSecret(ctx context.Context, accountID string) (Account, error) {
	secret, err := db.newSecret()
	if err != nil {
		return Account{}, err
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE accounts SET ingest_secret = $1 WHERE id = $2`, secret, accountID)
		return rowsOrNotFound(res, err)
	})
	if err != nil {
		return Account{}, err
	}
	return db.Account(ctx, accountID)
}

// CreateToken makes a token for the account. The bearer string is returned once and only its
// SHA-256 hash is kept.
func (db *DB) CreateToken(ctx context.Context, accountID string, scopes []string) (Token, error) {
	t, err := db.newToken(accountID, scopes)
	if err != nil {
		return Token{}, err
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts WHERE id = $1`, accountID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		return insertToken(ctx, tx, t)
	})
	return t, err
}

// newToken makes a token with a fresh bearer string, not yet stored.
func (db *DB) newToken(accountID string, scopes []string) (Token, error) {
	raw, err := db.randomBytes(32)
	if err != nil {
		return Token{}, err
	}
	return Token{ID: db.NewID(), AccountID: accountID, Scopes: scopes,
		Token: "wb_" + base64.RawURLEncoding.EncodeToString(raw), CreatedAt: stamp(db.now())}, nil
}

func insertToken(ctx context.Context, tx *sql.Tx, t Token) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO api_tokens (id, account_id, token_hash, scopes, created_at)
		VALUES ($1, $2, $3, $4, $5)`, t.ID, t.AccountID, tokenHash(t.Token), strings.Join(t.Scopes, ","), Micros(t.CreatedAt.Time))
	return err
}

// RevokeToken revokes the token with the given id.
func (db *DB) RevokeToken(ctx context.Context, id string) error {
	return db.revoke(ctx, "id", id)
}

// RevokeBearer revokes the token whose bearer string is given.
func (db *DB) RevokeBearer(ctx context.Context, bearer string) error {
	return db.revoke(ctx, "token_hash", tokenHash(bearer))
}

func (db *DB) revoke(ctx context.Context, column, value string) error {
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = $1 WHERE `+column+` = $2 AND revoked_at IS NULL`,
			db.now(), value)
		if err := rowsOrNotFound(res, err); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE token_revocations SET revoked = revoked + 1`)
		return err
	})
	// The revocation takes effect at once in this process; other processes see the count
	// change at their next check (checkRevocations).
	db.tokens.invalidate()
	return err
}

// revocationCheck is how often a process reads the count of token revocations. A token
// revoked through another process (the command line, another waybill on the same PostgreSQL
// database) stops working here at the next check, within a millisecond, not when its cache
// entry expires; the read costs one small query a millisecond under load, none when idle.
const revocationCheck = time.Millisecond

// revocationMark is the count of revocations the token cache was last checked against.
type revocationMark struct {
	mu      sync.Mutex
	checked time.Time
	count   int64
}

// checkRevocations empties the token cache if tokens were revoked since the last check, when
// the last check is older than revocationCheck. Concurrent callers wait on one check.
func (db *DB) checkRevocations(ctx context.Context) error {
	m := &db.revocations
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.checked) < revocationCheck {
		return nil
	}
	var n int64
	if err := db.readRow(ctx, `SELECT revoked FROM token_revocations`).Scan(&n); err != nil {
		return err
	}
	if n != m.count {
		m.count = n
		db.tokens.invalidate()
	}
	m.checked = time.Now()
	return nil
}

// Authenticate resolves a bearer string to its principal; unknown and revoked tokens are
// ErrNotFound.
func (db *DB) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	h := tokenHash(bearer)
	if err := db.checkRevocations(ctx); err != nil {
		return Principal{}, err
	}
	if p, ok := db.tokens.get(h); ok {
		return p, nil
	}
	gen := db.tokens.begin()
	var p Principal
	var stored, scopes string
	var lastUsed sql.NullInt64
	err := db.readRow(ctx, `SELECT id, account_id, token_hash, scopes, last_used_at FROM api_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL`, h).Scan(&p.TokenID, &p.AccountID, &stored, &scopes, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrNotFound
	}
	if err != nil {
		return Principal{}, err
	}
	// The lookup already matched; the constant-time comparison keeps the check itself honest
	// should the lookup ever become a prefix or range scan.
	if subtle.ConstantTimeCompare([]byte(stored), []byte(h)) != 1 {
		return Principal{}, ErrNotFound
	}
	if scopes != "" {
		p.Scopes = strings.Split(scopes, ",")
	}
	if err := db.touchToken(ctx, p.TokenID, lastUsed); err != nil {
		return Principal{}, err
	}
	// Only valid tokens are cached: a new token works at once, and guessed ones fill nothing.
	// last_used_at, recorded a minute at a time, is touched again once the entry expires.
	db.tokens.put(gen, h, p)
	return p, nil
}

func tokenHash(bearer string) string {
	sum := sha256.Sum256([]byte(bearer))
	return hex.EncodeToString(sum[:])
}

// rowsOrNotFound turns an update that touched no row into ErrNotFound.
func rowsOrNotFound(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
