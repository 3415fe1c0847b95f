package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

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

// CreateManifest closes out the account's day for carrier: in one transaction it collects
// every label manifest.Qualifies for carrier and shipDate, claims them (manifest_id), renders
// and stores the manifest's PDF and CSV, rewrites the labels' stored responses and emits
// MANIFEST_CREATED with the manifest as link leaves it. No qualifying label is
// manifest.ErrNothingToManifest. Two close-outs never share a label: the labels are claimed with
// UPDATE … WHERE manifest_id IS NULL after their shipments and themselves are locked (on
// PostgreSQL; SQLite runs one writer), and a claim that misses a label rolls everything back.
func (db *DB) CreateManifest(ctx context.Context, accountID, carrier, shipDate string, link ManifestLink) (Manifest, error) {
	var m Manifest
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		collected, err := db.manifestShipments(ctx, tx, accountID, carrier, shipDate)
		if err != nil {
			return err
		}
		now := db.now()
		m = Manifest{ID: db.NewID(), Carrier: carrier, ShipDate: shipDate, Status: manifest.StatusCreated,
			LabelCount: len(collected), CreatedAt: stamp(now)}
		if err := db.storeManifest(ctx, tx, accountID, &m, collected, now); err != nil {
			return err
		}
		if err := claimManifestLabels(ctx, tx, accountID, m, now); err != nil {
			return err
		}
		for _, s := range collected {
			s.AccountID = accountID
			if err := storeRendering(ctx, tx, s); err != nil {
				return err
			}
		}
		emitted := m
		if link != nil {
			link(&emitted)
		}
		return db.emitEvent(ctx, tx, accountID, "MANIFEST_CREATED", emitted)
	})
	return m, err
}

// manifestShipments locks, reads and returns the shipments, with their labels, whose label
// manifest.Qualifies for carrier and shipDate; none is manifest.ErrNothingToManifest.
func (db *DB) manifestShipments(ctx context.Context, tx *sql.Tx, accountID, carrier, shipDate string) ([]*shipping.Shipment, error) {
	// Locks in the order every change to a shipment and its label takes them: the
	// shipments, then their labels (docs/decisions.md).
	// The shipments are those manifest.Qualifies can collect a label of: the carrier's,
	// of the date, bought, and no returns.
	if err := db.lock(ctx, tx, `SELECT id FROM shipments WHERE account_id = $1 AND carrier = $2 AND ship_date = $3
		AND status = $4 AND is_return = $5 ORDER BY id`, accountID, carrier, shipDate, shipping.StatusPurchased, false); err != nil {
		return nil, err
	}
	if err := db.lock(ctx, tx, `SELECT id FROM shipping_labels WHERE account_id = $1 AND carrier = $2 AND status = $3
		AND manifest_id IS NULL AND shipment_id IN (SELECT id FROM shipments WHERE account_id = $1 AND ship_date = $4
		AND is_return = $5) ORDER BY id`, accountID, carrier, shipping.LabelPreTransit, shipDate, false); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+shipmentColumns+` FROM `+shipmentsFrom+` WHERE account_id = $1 AND carrier = $2
		AND ship_date = $3 AND status = $4 AND is_return = $5 ORDER BY created_at, id`,
		accountID, carrier, shipDate, shipping.StatusPurchased, false)
	if err != nil {
		return nil, err
	}
	var shipments []*shipping.Shipment
	for rows.Next() {
		s, err := scanShipment(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		shipments = append(shipments, s)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for i := 0; i < len(shipments); i += maxManifestBatch {
		batch := shipments[i:min(i+maxManifestBatch, len(shipments))]
		if err := loadQuotes(ctx, tx, batch); err != nil {
			return nil, err
		}
		if err := db.attachLabelsWith(ctx, tx, accountID, batch); err != nil {
			return nil, err
		}
	}
	var collected []*shipping.Shipment
	for _, s := range shipments {
		if manifest.Qualifies(s, s.ShippingLabel, carrier, shipDate) {
			collected = append(collected, s)
		}
	}
	if len(collected) == 0 {
		return nil, manifest.ErrNothingToManifest
	}
	return collected, nil
}

// storeManifest renders and stores m, of the labels of collected, which it marks as m's.
func (db *DB) storeManifest(ctx context.Context, tx *sql.Tx, accountID string, m *Manifest, collected []*shipping.Shipment, now int64) error {
	doc := manifest.Manifest{ID: m.ID, Carrier: m.Carrier, ShipDate: m.ShipDate, CreatedAt: Time(now)}
	var name, brand string
	if err := tx.QueryRowContext(ctx, `SELECT name, brand FROM accounts WHERE id = $1`, accountID).Scan(&name, &brand); err != nil {
		return err
	}
	doc.Shipper = manifest.ShipperFor(name, brand, collected)
	for _, s := range collected {
		l := s.ShippingLabel
		m.ShippingLabelIDs = append(m.ShippingLabelIDs, l.ID)
		doc.Lines = append(doc.Lines, manifest.LineFor(s, l))
		l.ManifestID, l.UpdatedAt = &m.ID, stamp(now)
	}
	ids, err := json.Marshal(m.ShippingLabelIDs)
	if err != nil {
		return err
	}
	pdf, csv := manifest.PDF(doc), manifest.CSV(doc)
	pdfSum, csvSum := sha256.Sum256(pdf), sha256.Sum256(csv)
	_, err = tx.ExecContext(ctx, `INSERT INTO manifests (id, account_id, carrier, ship_date, label_ids, label_count,
		pdf, pdf_sha256, csv, csv_sha256, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		m.ID, accountID, m.Carrier, m.ShipDate, string(ids), m.LabelCount, pdf, hex.EncodeToString(pdfSum[:]), csv,
		hex.EncodeToString(csvSum[:]), now)
	return err
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

// PendingManifests lists, per carrier and ship date, how many of the account's labels wait for
// a manifest (manifest.Awaits: bought, PRE_TRANSIT, never scanned, in no manifest, no
// returns), ordered by carrier, then ship date.
func (db *DB) PendingManifests(ctx context.Context, accountID string, p Page) (List[manifest.Pending], error) {
	return offsetList(ctx, db.r, listQuery[manifest.Pending]{
		Columns: `l.carrier, s.ship_date, COUNT(*)`,
		From: `shipping_labels l JOIN shipments s ON s.account_id = l.account_id AND s.id = l.shipment_id
			WHERE l.account_id = $1 AND l.status = $2 AND l.manifest_id IS NULL AND l.first_carrier_scan_at IS NULL
			AND s.status = $3 AND s.is_return = $4 GROUP BY l.carrier, s.ship_date`,
		Args: []any{accountID, shipping.LabelPreTransit, shipping.StatusPurchased, false},
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
		args = append(args, f.Carrier)
		where += " AND carrier = $" + strconv.Itoa(len(args))
	}
	if f.ShipDate != "" {
		args = append(args, f.ShipDate)
		where += " AND ship_date = $" + strconv.Itoa(len(args))
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
