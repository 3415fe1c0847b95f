package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	shipcarrier "github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/rating"
)

// Carriers are global, like rate shopping profiles: every account shops the same carriers, so
// these queries do not filter by account.

// ErrCarrierInUse reports a carrier that a rate shopping profile still names.
var ErrCarrierInUse = errors.New("carrier is named by a rate shopping profile")

// shipcarrier.Stored is a carrier's stored versions, oldest first, and its tracking serials. Each
// version's Card is its outline (shipcarrier.Version.Load reads the whole card), except the

// CarrierChanges is the count of changes of the stored carriers, to check a compiled copy.
func (db *DB) CarrierChanges(ctx context.Context) (int64, error) {
	var n int64
	err := db.readRow(ctx, `SELECT changes FROM carrier_changes`).Scan(&n)
	return n, err
}

// Carriers returns every stored carrier, deleted ones included, by code, with the count of
// changes they reflect.
func (db *DB) Carriers(ctx context.Context) ([]*shipcarrier.Stored, int64, error) {
	var out []*shipcarrier.Stored
	var changes int64
	// One read transaction: the carriers, their versions and the count agree.
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT changes FROM carrier_changes`).Scan(&changes); err != nil {
		return nil, 0, err
	}
	out, err = db.carriersWhere(ctx, tx, "")
	return out, changes, err
}

// Carrier returns one carrier that is not deleted, or ErrNotFound.
func (db *DB) Carrier(ctx context.Context, code string) (*shipcarrier.Stored, error) {
	return db.carrier(ctx, db.r, code)
}

func (db *DB) carrier(ctx context.Context, q querier, code string) (*shipcarrier.Stored, error) {
	cs, err := db.carriersWhere(ctx, q, code)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 || cs[0].Deleted {
		return nil, ErrNotFound
	}
	return cs[0], nil
}

// carriersWhere reads the carrier code with its versions' outlines, or every carrier when code
// is "".
func (db *DB) carriersWhere(ctx context.Context, q querier, code string) ([]*shipcarrier.Stored, error) {
	where, args := "", []any{}
	if code != "" {
		where, args = " WHERE code = $1", append(args, code)
	}
	rows, err := q.QueryContext(ctx, `SELECT code, deleted, next_serial, created_at, updated_at FROM carriers`+where+` ORDER BY code`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*shipcarrier.Stored
	byCode := map[string]*shipcarrier.Stored{}
	for rows.Next() {
		var c shipcarrier.Stored
		var created, updated int64
		if err := rows.Scan(&c.Code, &c.Deleted, &c.NextSerial, &created, &updated); err != nil {
			return nil, err
		}
		c.CreatedAt, c.UpdatedAt = Time(created), Time(updated)
		if n, ok := db.serials.peek(c.Code); ok {
			c.NextSerial = n // the serials this process reserved and has not handed out are still to come
		}
		out, byCode[c.Code] = append(out, &c), &c
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if code != "" {
		where = " WHERE carrier = $1"
	}
	err = versionOutlines(ctx, q, db.r, where, args, func(carrier string, v *shipcarrier.Version) {
		if c := byCode[carrier]; c != nil {
			c.Versions = append(c.Versions, v)
		}
	})
	return out, err
}

// cardOutline is what a version's outline column holds: the parts of its card that choose the
// version, buy, void, name services and check tracking ranges — not its prices, ZIPs or chart.
type cardOutline struct {
	Name     string                     `json:"name"`
	Tracking shipcarrier.TrackingScheme `json:"tracking"`
	Services []serviceOutline           `json:"services"`
}

type serviceOutline struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

func outlineOf(c *shipcarrier.Card) cardOutline {
	o := cardOutline{Name: c.Name, Tracking: c.Tracking, Services: []serviceOutline{}}
	for _, s := range c.Services {
		o.Services = append(o.Services, serviceOutline{s.Code, s.Name})
	}
	return o
}

// card is the outline as a card of carrier code effective from effectiveFrom.
func (o cardOutline) card(code, effectiveFrom string) *shipcarrier.Card {
	c := &shipcarrier.Card{Code: code, Name: o.Name, EffectiveFrom: effectiveFrom, Tracking: o.Tracking}
	for _, s := range o.Services {
		c.Services = append(c.Services, shipcarrier.CardService{Code: s.Code, Name: s.Name})
	}
	return c
}

// versionOutlines calls each with the versions that where (with args) selects, by carrier and
// version, as outlines whose Load reads the whole card from load (the read pool: a loader
// outlives the transaction its outline was read in).
func versionOutlines(ctx context.Context, q, load querier, where string, args []any, each func(carrier string, v *shipcarrier.Version)) error {
	rows, err := q.QueryContext(ctx, `SELECT carrier, version, effective_from, created_at, outline
		FROM carrier_versions`+where+` ORDER BY carrier, version`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var carrier, from, outline string
		var created int64
		v := &shipcarrier.Version{}
		if err := rows.Scan(&carrier, &v.Version, &from, &created, &outline); err != nil {
			return err
		}
		var o cardOutline
		if err := json.Unmarshal([]byte(outline), &o); err != nil {
			return fmt.Errorf("carrier %s version %d: %w", carrier, v.Version, err)
		}
		v.CreatedAt, v.Card = Time(created), o.card(carrier, from)
		carrier, version := carrier, v.Version
		v.Load = func(ctx context.Context) (*shipcarrier.Card, error) { return versionCard(ctx, load, carrier, version) }
		each(carrier, v)
	}
	return rows.Err()
}

// versionCard reads and decodes one version's card: the only place a whole card is decoded.
func versionCard(ctx context.Context, q querier, carrier string, version int64) (*shipcarrier.Card, error) {
	var body string
	err := q.QueryRowContext(ctx, `SELECT card FROM carrier_versions WHERE carrier = $1 AND version = $2`, carrier, version).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c := new(shipcarrier.Card)
	if err := json.Unmarshal([]byte(body), c); err != nil {
		return nil, fmt.Errorf("carrier %s version %d: %w", carrier, version, err)
	}
	return c, nil
}

// CarrierCard returns the whole card of a stored version (ErrNotFound when not stored).
func (db *DB) CarrierCard(ctx context.Context, code string, version int64) (*shipcarrier.Card, error) {
	return versionCard(ctx, db.r, code, version)
}

// SeedCarriers stores the cards once in a database's life, on its first start: an operator's
// later changes and deletions are never undone.
func (db *DB) SeedCarriers(ctx context.Context, cards []shipcarrier.Card) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE carrier_changes SET seeded = TRUE WHERE seeded = FALSE`)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		for i := range cards {
			if err := db.addVersion(ctx, tx, &cards[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutCarrierVersion runs fn in one transaction that holds carrier code's row
// (shipcarrier.Writer).
func (db *DB) PutCarrierVersion(ctx context.Context, code string, fn func(shipcarrier.VersionTx) error) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.lock(ctx, tx, `SELECT code FROM carriers WHERE code = $1`, code); err != nil {
			return err
		}
		cs, err := db.carriersWhere(ctx, tx, code)
		if err != nil {
			return err
		}
		v := carrierVersionTx{db: db, tx: tx, code: code}
		if len(cs) == 1 {
			v.stored = cs[0]
		}
		return fn(v)
	})
}

// carrierVersionTx is a carrier version being stored, in tx (shipcarrier.VersionTx).
type carrierVersionTx struct {
	db     *DB
	tx     *sql.Tx
	code   string
	stored *shipcarrier.Stored
}

func (v carrierVersionTx) Stored() *shipcarrier.Stored { return v.stored }

func (v carrierVersionTx) Card(ctx context.Context, version int64) (*shipcarrier.Card, error) {
	return versionCard(ctx, v.tx, v.code, version)
}

// Others takes the one row of carrier_changes, which every put updates in the end anyway, then
// reads the other carriers' version outlines (not their whole cards).
func (v carrierVersionTx) Others(ctx context.Context) ([]*shipcarrier.Stored, error) {
	if err := v.db.lock(ctx, v.tx, `SELECT id FROM carrier_changes`); err != nil {
		return nil, err
	}
	var out []*shipcarrier.Stored
	err := versionOutlines(ctx, v.tx, v.db.r, " WHERE carrier <> $1", []any{v.code}, func(carrier string, cv *shipcarrier.Version) {
		if len(out) == 0 || out[len(out)-1].Code != carrier {
			out = append(out, &shipcarrier.Stored{Code: carrier})
		}
		c := out[len(out)-1]
		c.Versions = append(c.Versions, cv)
	})
	return out, err
}

func (v carrierVersionTx) Add(ctx context.Context, card *shipcarrier.Card) (*shipcarrier.Stored, error) {
	if err := v.db.addVersion(ctx, v.tx, card); err != nil {
		return nil, err
	}
	return v.db.carrier(ctx, v.tx, v.code)
}

// addVersion stores card as the next version of its carrier, creating the carrier or bringing
// a deleted one back.
func (db *DB) addVersion(ctx context.Context, tx *sql.Tx, card *shipcarrier.Card) error {
	body, err := json.Marshal(card)
	if err != nil {
		return err
	}
	outline, err := json.Marshal(outlineOf(card))
	if err != nil {
		return err
	}
	now := db.now()
	_, err = tx.ExecContext(ctx, `INSERT INTO carriers (code, deleted, next_serial, created_at, updated_at)
		VALUES ($1, FALSE, 0, $2, $2) ON CONFLICT (code) DO UPDATE SET deleted = FALSE, updated_at = $2`, card.Code, now)
	if err != nil {
		return err
	}
	var version int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) + 1 FROM carrier_versions WHERE carrier = $1`,
		card.Code).Scan(&version); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO carrier_versions (carrier, version, effective_from, created_at, card, outline)
		VALUES ($1, $2, $3, $4, $5, $6)`, card.Code, version, card.EffectiveFrom, now, string(body), string(outline))
	if err != nil {
		return err
	}
	return carriersChanged(ctx, tx)
}

func carriersChanged(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE carrier_changes SET changes = changes + 1`)
	return err
}

// DeleteCarrier deletes the carrier: it is quoted no more, while its labels still track, void
// and bill, and its versions stay. ErrCarrierInUse while a profile names it.
func (db *DB) DeleteCarrier(ctx context.Context, code string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.lock(ctx, tx, `SELECT code FROM carriers WHERE code = $1`, code); err != nil {
			return err
		}
		var deleted bool
		err := tx.QueryRowContext(ctx, `SELECT deleted FROM carriers WHERE code = $1`, code).Scan(&deleted)
		if errors.Is(err, sql.ErrNoRows) || err == nil && deleted {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT body FROM rate_shopping_profiles`+db.forUpdate())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var body string
			var in rating.ProfileInput
			if err := rows.Scan(&body); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(body), &in); err != nil {
				return err
			}
			if in.Names(code) {
				return ErrCarrierInUse
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE carriers SET deleted = TRUE, updated_at = $1 WHERE code = $2`, db.now(), code); err != nil {
			return err
		}
		return carriersChanged(ctx, tx)
	})
}
