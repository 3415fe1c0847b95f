package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/manifest"
)

// Manifest is a stored manifest (end-of-day close-out), as the API answers it. PDFURL and
// CSVURL are the API's capability URLs, which the store leaves empty.
type Manifest struct {
	ID               string             `json:"id"`
	Carrier          string             `json:"carrier"`
	ShipDate         string             `json:"ship_date"`
	Status           string             `json:"status"`
	LabelCount       int                `json:"label_count"`
	ShippingLabelIDs []string           `json:"shipping_label_ids"`
	PDFURL           string             `json:"pdf_url"`
	CSVURL           string             `json:"csv_url"`
	CreatedAt        shipping.Timestamp `json:"created_at"`
}

// ManifestLink sets a manifest's URLs (the API's), before it is answered or emitted.
type ManifestLink func(*Manifest)

// maxManifestBatch bounds the ids of one IN list of the close-out (well under the parameter
// limits of SQLite and PostgreSQL).
const maxManifestBatch = 500

// CloseOut runs fn in one transaction on the account's day with carrier (manifest.CloseOutStore,
// with link setting the URLs of the MANIFEST_CREATED payload), and returns the manifest fn
// stored. The shipments that could have a label to collect are locked with their labels first
// (on PostgreSQL; SQLite runs one writer), and the labels are claimed with UPDATE … WHERE
// manifest_id IS NULL, so two close-outs never share a label: a claim that misses one rolls
// everything back.
func (db *DB) CloseOut(ctx context.Context, accountID, carrier, shipDate string, link ManifestLink, fn func(manifest.Day) error) (Manifest, error) {
	var d *closingDay
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		shipments, err := db.manifestShipments(ctx, tx, accountID, carrier, shipDate)
		if err != nil {
			return err
		}
		d = &closingDay{db: db, tx: tx, accountID: accountID, shipments: shipments, link: link}
		if err := tx.QueryRowContext(ctx, `SELECT name, brand FROM accounts WHERE id = $1`, accountID).Scan(&d.name, &d.brand); err != nil {
			return err
		}
		return fn(d)
	})
	if err != nil {
		return Manifest{}, err
	}
	return d.stored, nil
}

// closingDay is an account's day with a carrier in its close-out's transaction (manifest.Day).
type closingDay struct {
	db          *DB
	tx          *sql.Tx
	accountID   string
	shipments   []*shipping.Shipment
	name, brand string
	link        ManifestLink
	stored      Manifest
}

func (d *closingDay) Shipments() []*shipping.Shipment { return d.shipments }
func (d *closingDay) Shipper() (string, string)       { return d.name, d.brand }
func (d *closingDay) NewID() string                   { return d.db.NewID() }
func (d *closingDay) Now() time.Time                  { return Time(d.db.now()) }

// Store stores m and its documents, claims its labels, renders their shipments again and emits
// MANIFEST_CREATED (manifest.Day).
func (d *closingDay) Store(ctx context.Context, m manifest.Manifest, collected []*shipping.Shipment, pdf, csv []byte) error {
	now := Micros(m.CreatedAt)
	rec := Manifest{ID: m.ID, Carrier: m.Carrier, ShipDate: m.ShipDate, Status: manifest.StatusCreated,
		LabelCount: len(collected), CreatedAt: stamp(now)}
	for _, s := range collected {
		l := s.ShippingLabel
		rec.ShippingLabelIDs = append(rec.ShippingLabelIDs, l.ID)
		l.ManifestID, l.UpdatedAt = &rec.ID, stamp(now)
	}
	ids, err := json.Marshal(rec.ShippingLabelIDs)
	if err != nil {
		return err
	}
	pdfSum, csvSum := sha256.Sum256(pdf), sha256.Sum256(csv)
	_, err = d.tx.ExecContext(ctx, `INSERT INTO manifests (id, account_id, carrier, ship_date, label_ids, label_count,
		pdf, pdf_sha256, csv, csv_sha256, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		rec.ID, d.accountID, rec.Carrier, rec.ShipDate, string(ids), rec.LabelCount, pdf, hex.EncodeToString(pdfSum[:]), csv,
		hex.EncodeToString(csvSum[:]), now)
	if err != nil {
		return err
	}
	if err := claimManifestLabels(ctx, d.tx, d.accountID, rec, now); err != nil {
		return err
	}
	for _, s := range collected {
		s.AccountID = d.accountID
		if err := storeRendering(ctx, d.tx, s); err != nil {
			return err
		}
	}
	d.stored = rec
	emitted := rec
	if d.link != nil {
		d.link(&emitted)
	}
	return d.db.emitEvent(ctx, d.tx, d.accountID, "MANIFEST_CREATED", emitted)
}

// pendingShipments selects the shipments of an account's ($1) labels of a carrier ($2) still
// PRE_TRANSIT ($3) and in no manifest.
const pendingShipments = `SELECT shipment_id FROM shipping_labels WHERE account_id = $1 AND carrier = $2 AND status = $3
	AND manifest_id IS NULL ORDER BY shipment_id`

// dayWhere is the condition, and its arguments, of the shipments among ids a close-out of
// the account's shipDate may collect.
func dayWhere(accountID, shipDate string, ids []string) (string, []any) {
	args := []any{accountID, shipDate, false}
	return `account_id = $1 AND ship_date = $2 AND is_return = $3 AND id IN (` + placeholders(&args, ids) + `)`, args
}

// manifestShipments reads, locked, the shipments a close-out of the carrier and day collects,
// oldest first, with their quotes and labels. It starts from the account's labels of the carrier
// still PRE_TRANSIT and in no manifest (the index on (account_id, carrier, status)) and finds
// their shipments by id, so a close-out reads the labels not yet handed over, not every
// shipment the account ever sent with the carrier; manifest.Qualifies checks each.
func (db *DB) manifestShipments(ctx context.Context, tx *sql.Tx, accountID, carrier, shipDate string) ([]*shipping.Shipment, error) {
	pending, err := collect(ctx, tx, pendingShipments, []any{accountID, carrier, shipping.LabelPreTransit}, scanString)
	if err != nil {
		return nil, err
	}
	// Locks in the order every change to a shipment and its label takes them: the
	// shipments, then their labels (docs/decisions.md).
	var shipments []*shipping.Shipment
	for batch := range slices.Chunk(pending, maxManifestBatch) {
		where, args := dayWhere(accountID, shipDate, batch)
		if err := db.lock(ctx, tx, `SELECT id FROM shipments WHERE `+where+` ORDER BY id`, args...); err != nil {
			return nil, err
		}
		day, err := collect(ctx, tx, `SELECT `+shipmentColumns+` FROM `+shipmentsFrom+` WHERE `+where, args,
			func(rows *sql.Rows) (*shipping.Shipment, error) { return scanShipment(rows) })
		if err != nil {
			return nil, err
		}
		shipments = append(shipments, day...)
	}
	for batch := range slices.Chunk(shipments, maxManifestBatch) {
		args := []any{accountID}
		_, ids := indexShipments(batch)
		if err := db.lock(ctx, tx, `SELECT id FROM shipping_labels WHERE account_id = $1 AND shipment_id IN (`+
			placeholders(&args, ids)+`) ORDER BY id`, args...); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(shipments, func(a, b *shipping.Shipment) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt.Time), strings.Compare(a.ID, b.ID))
	})
	for batch := range slices.Chunk(shipments, maxManifestBatch) {
		if err := loadQuotes(ctx, tx, batch); err != nil {
			return nil, err
		}
		if err := db.attachLabelsWith(ctx, tx, accountID, batch); err != nil {
			return nil, err
		}
	}
	return shipments, nil
}

// claimManifestLabels sets m's labels' manifest_id; a claim that misses a label (another change
// took it) is an error, which rolls the close-out back.
func claimManifestLabels(ctx context.Context, tx *sql.Tx, accountID string, m Manifest, now int64) error {
	for i := 0; i < len(m.ShippingLabelIDs); i += maxManifestBatch {
		batch := m.ShippingLabelIDs[i:min(i+maxManifestBatch, len(m.ShippingLabelIDs))]
		args := []any{m.ID, now, accountID, shipping.LabelPreTransit}
		res, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET manifest_id = $1, updated_at = $2
			WHERE account_id = $3 AND status = $4 AND manifest_id IS NULL AND first_carrier_scan_at IS NULL
			AND id IN (`+placeholders(&args, batch)+`)`, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(batch)) {
			if err != nil {
				return err
			}
			return fmt.Errorf("manifest %s: claimed %d of %d labels; another change took the others", m.ID, n, len(batch))
		}
	}
	return nil
}

// pendingManifests selects the labels waiting for a manifest ($1 the account, $2 PRE_TRANSIT,
// $3 PURCHASED, $4 false), grouped by carrier and ship date.
const pendingManifests = `shipping_labels l JOIN shipments s ON s.account_id = l.account_id AND s.id = l.shipment_id
	WHERE l.account_id = $1 AND l.status = $2 AND l.manifest_id IS NULL AND l.first_carrier_scan_at IS NULL
	AND s.status = $3 AND s.is_return = $4 GROUP BY l.carrier, s.ship_date`

// PendingManifests lists, per carrier and ship date, how many of the account's labels wait for
// a manifest (manifest.Awaits: bought, PRE_TRANSIT, never scanned, in no manifest, no
// returns), ordered by carrier, then ship date.
func (db *DB) PendingManifests(ctx context.Context, accountID string, p Page) (List[manifest.Pending], error) {
	return offsetList(ctx, db.r, listQuery[manifest.Pending]{
		Columns: `l.carrier, s.ship_date, COUNT(*)`,
		From:    pendingManifests,
		Args:    []any{accountID, shipping.LabelPreTransit, shipping.StatusPurchased, false},
		Scan: func(rows *sql.Rows) (manifest.Pending, error) {
			var m manifest.Pending
			return m, rows.Scan(&m.Carrier, &m.ShipDate, &m.LabelCount)
		},
	}, db.bytewise("l.carrier")+", s.ship_date", p)
}

const manifestColumns = `id, carrier, ship_date, label_ids, label_count, created_at`

func scanManifest(row rowScanner) (Manifest, error) {
	var m Manifest
	var ids string
	var created int64
	if err := row.Scan(&m.ID, &m.Carrier, &m.ShipDate, &ids, &m.LabelCount, &created); err != nil {
		return m, err
	}
	m.Status, m.CreatedAt = manifest.StatusCreated, stamp(created)
	return m, json.Unmarshal([]byte(ids), &m.ShippingLabelIDs)
}

// GetManifest returns one of the account's manifests.
func (db *DB) GetManifest(ctx context.Context, accountID, id string) (Manifest, error) {
	m, err := scanManifest(db.readRow(ctx, `SELECT `+manifestColumns+` FROM manifests WHERE account_id = $1 AND id = $2`,
		accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return m, ErrNotFound
	}
	return m, err
}

// ManifestFilter narrows a manifest list; empty fields do not filter.
type ManifestFilter struct {
	Carrier, ShipDate string
}

// ListManifests lists the account's manifests, newest first.
func (db *DB) ListManifests(ctx context.Context, accountID string, f ManifestFilter, p Page) (List[Manifest], error) {
	args := []any{accountID}
	where := "manifests WHERE account_id = $1"
	if f.Carrier != "" {
		where += " AND carrier = " + arg(&args, f.Carrier)
	}
	if f.ShipDate != "" {
		where += " AND ship_date = " + arg(&args, f.ShipDate)
	}
	return offsetList(ctx, db.r, listQuery[Manifest]{
		Columns: manifestColumns,
		From:    where,
		Args:    args,
		Scan:    func(rows *sql.Rows) (Manifest, error) { return scanManifest(rows) },
	}, "created_at DESC, id DESC", p)
}

// Manifest document kinds (the column names).
const (
	ManifestPDF = "pdf"
	ManifestCSV = "csv"
)

// ManifestDocument is a manifest's stored PDF or CSV, with its digest.
type ManifestDocument struct {
	Manifest Manifest
	Body     []byte
	SHA256   string
}

// GetManifestDocument returns a manifest's stored document of kind ManifestPDF or ManifestCSV:
// the bytes rendered when it was created.
func (db *DB) GetManifestDocument(ctx context.Context, accountID, id, kind string) (ManifestDocument, error) {
	if kind != ManifestPDF && kind != ManifestCSV {
		return ManifestDocument{}, fmt.Errorf("store: unknown manifest document %q", kind)
	}
	var d ManifestDocument
	var ids string
	var created int64
	m := &d.Manifest
	err := db.readRow(ctx, `SELECT id, carrier, ship_date, label_ids, label_count, created_at, `+kind+`, `+kind+`_sha256
		FROM manifests WHERE account_id = $1 AND id = $2`, accountID, id).Scan(&m.ID, &m.Carrier, &m.ShipDate, &ids,
		&m.LabelCount, &created, &d.Body, &d.SHA256)
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, err
	}
	m.Status, m.CreatedAt = manifest.StatusCreated, stamp(created)
	return d, json.Unmarshal([]byte(ids), &m.ShippingLabelIDs)
}

// ManifestAccount returns the account of a manifest, whichever it is (a capability URL names
// the manifest alone).
func (db *DB) ManifestAccount(ctx context.Context, id string) (string, error) {
	return db.accountOf(ctx, "manifests", id)
}
