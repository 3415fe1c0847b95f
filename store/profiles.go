package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/rating"
)

// Rate shopping profiles are global: every account shops under the same profiles, so these
// queries, unlike every other, do not filter by account.

// SeedProfile stores the profile unless one with its key exists; it never replaces one.
func (db *DB) SeedProfile(ctx context.Context, key string, in rating.ProfileInput) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := db.now()
		_, err := tx.ExecContext(ctx, `INSERT INTO rate_shopping_profiles (profile_key, name, body, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $4) ON CONFLICT (profile_key) DO NOTHING`, key, in.Name, string(body), now)
		return err
	})
}

const profileColumns = `profile_key, body, updated_at`

func scanProfile(row rowScanner) (*rating.Profile, error) {
	var key, body string
	var updated int64
	if err := row.Scan(&key, &body, &updated); err != nil {
		return nil, err
	}
	var in rating.ProfileInput
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		return nil, err
	}
	return rating.LoadProfile(key, in, Time(updated)), nil
}

// Profile returns the rate shopping profile with the key.
func (db *DB) Profile(ctx context.Context, key string) (*rating.Profile, error) {
	p, err := scanProfile(db.r.QueryRowContext(ctx, `SELECT `+profileColumns+` FROM rate_shopping_profiles
		WHERE profile_key = $1`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return p, err
}

// ProfileVersion returns when the profile last changed, to check a cached copy.
func (db *DB) ProfileVersion(ctx context.Context, key string) (time.Time, error) {
	var updated int64
	err := db.r.QueryRowContext(ctx, `SELECT updated_at FROM rate_shopping_profiles WHERE profile_key = $1`, key).Scan(&updated)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, ErrNotFound
	}
	return Time(updated), err
}

// ListProfiles lists the profiles by key.
func (db *DB) ListProfiles(ctx context.Context, p Page) (List[*rating.Profile], error) {
	return offsetList(ctx, db.r, listQuery[*rating.Profile]{
		Columns: profileColumns,
		From:    "rate_shopping_profiles WHERE 1 = 1",
		Scan:    func(rows *sql.Rows) (*rating.Profile, error) { return scanProfile(rows) },
	}, "profile_key", p)
}

// PutProfile creates or replaces the profile, setting its UpdatedAt, and reports whether it
// created it (rating.ProfileStore). The event coverageEvent makes of the profile it replaces
// (nil for a new profile), if any, is emitted to every subscribed account, in the same
// transaction.
func (db *DB) PutProfile(ctx context.Context, p *rating.Profile, coverageEvent func(prev *rating.ProfileInput) *shipping.Event) (created bool, err error) {
	in := p.Input()
	body, err := json.Marshal(in)
	if err != nil {
		return false, err
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := db.now()
		// A new key is inserted; an existing one is locked before it is read. So concurrent
		// PUTs of one key (several processes on PostgreSQL) apply one after the other: exactly
		// one creates it, and each change is compared with the one before it.
		res, err := tx.ExecContext(ctx, `INSERT INTO rate_shopping_profiles (profile_key, name, body, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $4) ON CONFLICT (profile_key) DO NOTHING`, p.Key, p.Name, string(body), now)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		created = n == 1
		var prev *rating.ProfileInput
		if !created {
			var old string
			var oldUpdated int64
			if err := tx.QueryRowContext(ctx, `SELECT body, updated_at FROM rate_shopping_profiles WHERE profile_key = $1`+db.forUpdate(),
				p.Key).Scan(&old, &oldUpdated); err != nil {
				return err
			}
			// updated_at is the version cached copies are checked against: it must move
			// forward even when the clock has not.
			now = max(now, oldUpdated+1)
			prev = new(rating.ProfileInput)
			if err := json.Unmarshal([]byte(old), prev); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE rate_shopping_profiles SET name = $1, body = $2, updated_at = $3
				WHERE profile_key = $4`, p.Name, string(body), now, p.Key); err != nil {
				return err
			}
		}
		p.UpdatedAt = stamp(now)
		if e := coverageEvent(prev); e != nil {
			return db.emitEventToAll(ctx, tx, e.Topic, e.Payload)
		}
		return nil
	})
	return created, err
}
