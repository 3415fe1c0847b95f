package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Carriers are global, like rate shopping profiles: every account shops the same carriers, so
// these queries do not filter by account.

// ErrCarrierInUse reports a carrier that a rate shopping profile still names.
var ErrCarrierInUse = errors.New("carrier is named by a rate shopping profile")

// shipping.StoredCarrier is a carrier's stored versions, oldest first, and its tracking serials. Each
// version's Card is its outline (shipping.CarrierVersion.Load reads the whole card), except the

// CarrierChanges is the count of changes of the stored carriers, to check a compiled copy.
func (db *DB) CarrierChanges(ctx context.Context) (int64, error) {
	var n int64
	err := db.readRow(ctx, `SELECT changes FROM carrier_changes`).Scan(&n)
	return n, err
}

// Carriers returns every stored carrier, deleted ones included, by code, with the count of
// changes they reflect.
func (db *DB) Carriers(ctx context.Context) ([]*shipping.StoredCarrier, int64, error) {
	var out []*shipping.StoredCarrier
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
func (db *DB) Carrier(ctx context.Context, code string) (*shipping.StoredCarrier, error) {
	return db.carrier(ctx, db.r, code)
}

func (db *DB) carrier(ctx context.Context, q querier, code string) (*shipping.StoredCarrier, error) {
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
func (db *DB) carriersWhere(ctx context.Context, q querier, code string) ([]*shipping.StoredCarrier, error) {
	where, args := "", []any{}
	if code != "" {
		where, args = " WHERE code = $1", append(args, code)
	}
	rows, err := q.QueryContext(ctx, `SELECT code, deleted, next_serial, created_at, updated_at FROM carriers`+where+` ORDER BY code`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*shipping.StoredCarrier
	byCode := map[string]*shipping.StoredCarrier{}
	for rows.Next() {
		var c shipping.StoredCarrier
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
	err = versionOutlines(ctx, q, db.r, where, args, func(carrier string, v *shipping.CarrierVersion) {
		if c := byCode[carrier]; c != nil {
			c.Versions = append(c.Versions, v)
		}
	})
	return out, err
}

// cardOutline is what a version's outline column holds: the parts of its card that choose the
// version, buy, void, name services and check tracking ranges — not its prices, ZIPs or chart.
type cardOutline struct {
	Name     string                  `json:"name"`
	Tracking shipping.TrackingScheme `json:"tracking"`
	Services []serviceOutline        `json:"services"`
}

type serviceOutline struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

func outlineOf(c *shipping.Card) cardOutline {
	o := cardOutline{Name: c.Name, Tracking: c.Tracking, Services: []serviceOutline{}}
	for _, s := range c.Services {
		o.Services = append(o.Services, serviceOutline{s.Code, s.Name})
	}
	return o
}

// card is the outline as a card of carrier code effective from effectiveFrom.
func (o cardOutline) card(code, effectiveFrom string) *shipping.Card {
	c := &shipping.Card{Code: code, Name: o.Name, EffectiveFrom: effectiveFrom, Tracking: o.Tracking}
	for _, s := range o.Services {
		c.Services = append(c.Services, shipping.CardService{Code: s.Code, Name: s.Name})
	}
	return c
}

// versionOutlines calls each with the versions that where (with args) selects, by carrier and
// version, as outlines whose Load reads the whole card from load (the read pool: a loader
// outlives the transaction its outline was read in). A version stored before outlines were
// (fillOutlines has not run since) is read from its card.
func versionOutlines(ctx context.Context, q, load querier, where string, args []any, each func(carrier string, v *shipping.CarrierVersion)) error {
	rows, err := q.QueryContext(ctx, `SELECT carrier, version, effective_from, created_at, outline,
		CASE WHEN outline IS NULL THEN card END FROM carrier_versions`+where+` ORDER BY carrier, version`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var carrier, from string
		var outline, card sql.NullString
		var created int64
		v := &shipping.CarrierVersion{}
		if err := rows.Scan(&carrier, &v.Version, &from, &created, &outline, &card); err != nil {
			return err
		}
		var o cardOutline
		if outline.Valid {
			err = json.Unmarshal([]byte(outline.String), &o)
		} else {
			var c shipping.Card
			err = json.Unmarshal([]byte(card.String), &c)
			o = outlineOf(&c)
		}
		if err != nil {
			return fmt.Errorf("carrier %s version %d: %w", carrier, v.Version, err)
		}
		v.CreatedAt, v.Card = Time(created), o.card(carrier, from)
		carrier, version := carrier, v.Version
		v.Load = func(ctx context.Context) (*shipping.Card, error) { return versionCard(ctx, load, carrier, version) }
		each(carrier, v)
	}
	return rows.Err()
}

// versionCard reads and decodes one version's card: the only place a whole card is decoded.
func versionCard(ctx context.Context, q querier, carrier string, version int64) (*shipping.Card, error) {
	var body string
	err := q.QueryRowContext(ctx, `SELECT card FROM carrier_versions WHERE carrier = $1 AND version = $2`, carrier, version).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c := new(shipping.Card)
	if err := json.Unmarshal([]byte(body), c); err != nil {
		return nil, fmt.Errorf("carrier %s version %d: %w", carrier, version, err)
	}
	return c, nil
}

// CarrierCard returns the whole card of a stored version (ErrNotFound when not stored).
func (db *DB) CarrierCard(ctx context.Context, code string, version int64) (*shipping.Card, error) {
	return versionCard(ctx, db.r, code, version)
}

// fillOutlines gives the versions stored before outlines were theirs, once.
func (db *DB) fillOutlines(ctx context.Context) error {
	rows, err := db.r.QueryContext(ctx, `SELECT carrier, version FROM carrier_versions WHERE outline IS NULL`)
	if err != nil {
		return err
	}
	type key struct {
		carrier string
		version int64
	}
	var missing []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.carrier, &k.version); err != nil {
			rows.Close()
			return err
		}
		missing = append(missing, k)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, k := range missing {
		c, err := versionCard(ctx, db.r, k.carrier, k.version)
		if err != nil {
			return err
		}
		outline, err := json.Marshal(outlineOf(c))
		if err != nil {
			return err
		}
		if err := db.write(ctx, func(ctx context.Context, w writer) error {
			_, err := w.ExecContext(ctx, `UPDATE carrier_versions SET outline = $1 WHERE carrier = $2 AND version = $3`,
				string(outline), k.carrier, k.version)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// SeedCarriers stores the cards once in a database's life, on its first start: an operator's
// later changes and deletions are never undone.
func (db *DB) SeedCarriers(ctx context.Context, cards []shipping.Card) error {
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

// CarrierPut is what storing a version answered: the carrier after it, whether the version
// created the carrier (or brought a deleted one back), and the prices it changed against the
// version in force on its effective date.
type CarrierPut struct {
	Carrier *shipping.StoredCarrier
	Created bool
	Changes []shipping.PriceChange
}

// PutCarrier validates the card and appends it as the carrier's next version; with dryRun it
// only validates and reports. The card is normalized for code on today's date.
func (db *DB) PutCarrier(ctx context.Context, code string, card *shipping.Card, dryRun bool) (CarrierPut, error) {
	card.Normalize(code, db.Now())
	if err := card.Validate(code); err != nil {
		return CarrierPut{}, err
	}
	return db.putVersion(ctx, code, card.EffectiveFrom, dryRun, func(*shipping.Card) (*shipping.Card, error) { return card, nil })
}

// PutPriceGrid appends a version, effective from effectiveFrom (today when empty), equal to
// the version in force on that date except for service's grid. The carrier and the service
// must exist (else ErrNotFound).
func (db *DB) PutPriceGrid(ctx context.Context, code, service, effectiveFrom string, breaks []int64, prices [][]int64, dryRun bool) (CarrierPut, error) {
	if effectiveFrom == "" {
		effectiveFrom = db.Now().UTC().Format(time.DateOnly)
	}
	if _, err := db.Carrier(ctx, code); err != nil {
		return CarrierPut{}, err
	}
	return db.putVersion(ctx, code, effectiveFrom, dryRun, func(inForce *shipping.Card) (*shipping.Card, error) {
		if inForce == nil {
			var v shipping.ValidationError
			v.Add("effective_from", "invalid", "no version of carrier "+code+" is in force on "+effectiveFrom)
			return nil, v.Err()
		}
		if inForce.Service(service) == nil {
			return nil, ErrNotFound
		}
		if err := inForce.CheckGrid(service, prices); err != nil {
			return nil, err
		}
		card := inForce.WithGrid(service, breaks, prices, effectiveFrom)
		return card, card.Validate(code)
	})
}

// putVersion appends the card that next makes of the version in force on effectiveFrom (nil
// for a new or deleted carrier), in one transaction that holds the carrier's row, so versions
// are numbered one after the other and compared with the one before.
func (db *DB) putVersion(ctx context.Context, code, effectiveFrom string, dryRun bool, next func(inForce *shipping.Card) (*shipping.Card, error)) (CarrierPut, error) {
	var put CarrierPut
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		put = CarrierPut{}
		if err := db.lock(ctx, tx, `SELECT code FROM carriers WHERE code = $1`, code); err != nil {
			return err
		}
		cs, err := db.carriersWhere(ctx, tx, code)
		if err != nil {
			return err
		}
		live := len(cs) == 1 && !cs[0].Deleted
		var inForce *shipping.Card
		if live {
			// Only the version compared with is read whole: a put costs the same at the 1st
			// version and the 100th (DESIGN §18).
			if v := shipping.InForce(cs[0].Versions, effectiveFrom); v != nil {
				if inForce, err = versionCard(ctx, tx, code, v.Version); err != nil {
					return err
				}
			}
		}
		card, err := next(inForce)
		if err != nil {
			return err
		}
		// Carrier puts take the one row of carrier_changes, which each of them updates in the
		// end anyway, before comparing ranges: two carriers loaded at once compare with each
		// other, one after the other, on PostgreSQL too.
		if err := db.lock(ctx, tx, `SELECT id FROM carrier_changes`); err != nil {
			return err
		}
		others, err := db.othersTracking(ctx, tx, code)
		if err != nil {
			return err
		}
		if err := card.CheckTrackingOverlap(others); err != nil {
			return err
		}
		put.Changes, put.Created = shipping.PriceChanges(inForce, card), !live
		if dryRun {
			put.Carrier = dryRunCarrier(cs, card, db.Now())
			return errDryRun
		}
		if err := db.addVersion(ctx, tx, card); err != nil {
			return err
		}
		if put.Carrier, err = db.carrier(ctx, tx, code); err != nil {
			return err
		}
		put.Carrier.Versions[len(put.Carrier.Versions)-1].Card = card // the answer shows it whole
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	return put, err
}

// othersTracking returns the tracking schemes that a card of carrier code must not overlap:
// those of every other carrier's versions in force today or later, a deleted carrier's too (a
// rate it quoted before its deletion can still be bought). A version no longer in force issues
// no more numbers. Only the versions' outlines are read, not their whole cards.
func (db *DB) othersTracking(ctx context.Context, tx *sql.Tx, code string) ([]shipping.CarrierTracking, error) {
	byCarrier := map[string][]*shipping.CarrierVersion{}
	var carriers []string
	err := versionOutlines(ctx, tx, db.r, " WHERE carrier <> $1", []any{code}, func(carrier string, v *shipping.CarrierVersion) {
		if byCarrier[carrier] == nil {
			carriers = append(carriers, carrier)
		}
		byCarrier[carrier] = append(byCarrier[carrier], v)
	})
	if err != nil {
		return nil, err
	}
	today := db.Now().UTC().Format(time.DateOnly)
	var out []shipping.CarrierTracking
	for _, carrier := range carriers {
		for _, v := range shipping.InForceFrom(byCarrier[carrier], today) {
			out = append(out, shipping.CarrierTracking{Carrier: carrier, Version: v.Version, Tracking: v.Card.Tracking})
		}
	}
	return out, nil
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// dryRunCarrier is the carrier as it would be with card stored as its next version.
func dryRunCarrier(cs []*shipping.StoredCarrier, card *shipping.Card, now time.Time) *shipping.StoredCarrier {
	c := &shipping.StoredCarrier{Code: card.Code, CreatedAt: now}
	if len(cs) == 1 {
		*c = *cs[0]
	}
	n := int64(len(c.Versions)) + 1
	c.Versions = append(c.Versions[:len(c.Versions):len(c.Versions)], &shipping.CarrierVersion{Version: n, CreatedAt: now, Card: card})
	c.Deleted, c.UpdatedAt = false, now
	return c
}

// addVersion stores card as the next version of its carrier, creating the carrier or bringing
// a deleted one back.
func (db *DB) addVersion(ctx context.Context, tx *sql.Tx, card *shipping.Card) error {
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
			var in shipping.ProfileInput
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
