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
	"maps"
	"slices"
	"strings"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/manifest"
)

// maxManifestBatch bounds the ids of one IN list of the close-out (well under the parameter
// limits of SQLite and PostgreSQL).
const maxManifestBatch = 500

// awaiting is manifest.Awaits as a condition on a label l and its shipment s, with the rule's
// values bound as $first and on: the rule is stated once, in package manifest.
func awaiting(first int) (string, []any) {
	return fmt.Sprintf(`l.status = $%d AND l.manifest_id IS NULL AND l.first_carrier_scan_at IS NULL
		AND s.status = $%d AND s.is_return = $%d`, first, first+1, first+2),
		[]any{manifest.AwaitedLabelStatus, manifest.AwaitedShipmentStatus, manifest.CollectsReturns}
}

// qualifying is manifest.Qualifies as a condition on a label l of the account and its shipment
// s, for the carrier and ship date, with its arguments bound as $first and on.
func qualifying(first int, accountID, carrier, shipDate string) (string, []any) {
	cond, args := awaiting(first + 3)
	return fmt.Sprintf(`l.account_id = $%d AND l.carrier = $%d AND s.ship_date = $%d AND `, first, first+1, first+2) + cond,
		append([]any{accountID, carrier, shipDate}, args...)
}

// labelsWithShipments joins the labels l to their shipments s.
const labelsWithShipments = `shipping_labels l JOIN shipments s ON s.account_id = l.account_id AND s.id = l.shipment_id`

// CloseOutCandidates reads the account's shipments whose label Qualifies for a manifest of
// carrier and shipDate, with their quotes and labels, oldest first (manifest.CloseOutStore). It
// starts from the account's labels of the carrier still PRE_TRANSIT (the index on (account_id,
// carrier, status)), so a close-out reads the labels not yet handed over, not every shipment
// the account ever sent with the carrier. It locks nothing: StoreManifest checks that they are
// unchanged when it writes.
func (db *DB) CloseOutCandidates(ctx context.Context, accountID, carrier, shipDate string) ([]*shipping.Shipment, error) {
	where, args := qualifying(1, accountID, carrier, shipDate)
	ids, err := collect(ctx, db.r, `SELECT l.shipment_id FROM `+labelsWithShipments+` WHERE `+where, args, scanString)
	if err != nil {
		return nil, err
	}
	var shipments []*shipping.Shipment
	for batch := range slices.Chunk(ids, maxManifestBatch) {
		got, err := db.Shipments(ctx, accountID, batch)
		if err != nil {
			return nil, err
		}
		shipments = append(shipments, got...)
	}
	slices.SortFunc(shipments, func(a, b *shipping.Shipment) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt.Time), strings.Compare(a.ID, b.ID))
	})
	return shipments, nil
}

// StoreManifest writes a closed-out day in one transaction (manifest.CloseOutStore): it locks
// the shipments, then their labels (the order every change to them takes), checks that they
// are as d.Read has them, stores the manifest with its documents, puts the labels in it with
// an UPDATE that repeats the rule (manifest.Qualifies), stores the shipments' renderings and
// emits d's event. Anything changed is manifest.ErrDayChanged, with nothing written. The
// renderings are made before the transaction, which runs only its SQL.
func (db *DB) StoreManifest(ctx context.Context, d manifest.Closed) error {
	m, now := d.View, Micros(d.View.CreatedAt.Time)
	ids, err := json.Marshal(m.ShippingLabelIDs)
	if err != nil {
		return err
	}
	type rendered struct{ shipment, label []byte }
	renderedAs := make([]rendered, len(d.Collected))
	for i, s := range d.Collected {
		if renderedAs[i].shipment, renderedAs[i].label, err = renderings(s); err != nil {
			return err
		}
	}
	pdfSum, csvSum := sha256.Sum256(d.PDF), sha256.Sum256(d.CSV)
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.unchanged(ctx, tx, d.AccountID, d.Read); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO manifests (id, account_id, carrier, ship_date, label_ids, label_count,
			pdf, pdf_sha256, csv, csv_sha256, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			m.ID, d.AccountID, m.Carrier, m.ShipDate, string(ids), m.LabelCount, d.PDF, hex.EncodeToString(pdfSum[:]), d.CSV,
			hex.EncodeToString(csvSum[:]), now)
		if err != nil {
			return err
		}
		if err := claimManifestLabels(ctx, tx, d.AccountID, m, now); err != nil {
			return err
		}
		for i, s := range d.Collected {
			if err := storeRenderings(ctx, tx, s, renderedAs[i].shipment, renderedAs[i].label); err != nil {
				return err
			}
		}
		return db.emitEvent(ctx, tx, d.AccountID, d.Topic, d.Payload)
	})
}

// unchanged locks the shipments read and then their labels and reports manifest.ErrDayChanged
// unless each is still there with the updated_at it was read with: every change to a shipment
// or label moves it, and the close-out's documents and renderings were made from what it read.
func (db *DB) unchanged(ctx context.Context, tx *sql.Tx, accountID string, read []*shipping.Shipment) error {
	shipments, labels := map[string]int64{}, map[string]int64{}
	for _, s := range read {
		shipments[s.ID], labels[s.ShippingLabel.ID] = Micros(s.UpdatedAt.Time), Micros(s.ShippingLabel.UpdatedAt.Time)
	}
	for _, t := range []struct {
		table string
		want  map[string]int64
	}{{"shipments", shipments}, {"shipping_labels", labels}} {
		ids := slices.Sorted(maps.Keys(t.want))
		for batch := range slices.Chunk(ids, maxManifestBatch) {
			args := []any{accountID}
			query := `SELECT id, updated_at FROM ` + t.table + ` WHERE account_id = $1 AND id IN (` +
				placeholders(&args, batch) + `) ORDER BY id`
			if db.dialect == PostgreSQL {
				query += " FOR NO KEY UPDATE"
			}
			got, err := collect(ctx, tx, query, args, func(rows *sql.Rows) (version, error) {
				var v version
				return v, rows.Scan(&v.id, &v.updatedAt)
			})
			if err != nil {
				return err
			}
			if len(got) != len(batch) {
				return manifest.ErrDayChanged
			}
			for _, v := range got {
				if t.want[v.id] != v.updatedAt {
					return manifest.ErrDayChanged
				}
			}
		}
	}
	return nil
}

// version is a row's id and updated_at.
type version struct {
	id        string
	updatedAt int64
}

// claimManifestLabels puts m's labels in it, each only if it still Qualifies; one that does not
// (another change took it) is manifest.ErrDayChanged, which rolls the close-out back.
func claimManifestLabels(ctx context.Context, tx *sql.Tx, accountID string, m manifest.View, now int64) error {
	where, rule := qualifying(3, accountID, m.Carrier, m.ShipDate)
	for batch := range slices.Chunk(m.ShippingLabelIDs, maxManifestBatch) {
		args := append([]any{m.ID, now}, rule...)
		res, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET manifest_id = $1, updated_at = $2
			WHERE id IN (SELECT l.id FROM `+labelsWithShipments+` WHERE `+where+` AND l.id IN (`+
			placeholders(&args, batch)+`))`, args...)
		if err != nil {
			return err
		}
		if got, err := res.RowsAffected(); err != nil {
			return err
		} else if got != int64(len(batch)) {
			return manifest.ErrDayChanged
		}
	}
	return nil
}

// pendingManifests is the FROM clause of the account's labels waiting for a manifest
// (manifest.Awaits), grouped by carrier and ship date, with its arguments.
func pendingManifests(accountID string) (string, []any) {
	cond, args := awaiting(2)
	return labelsWithShipments + ` WHERE l.account_id = $1 AND ` + cond + ` GROUP BY l.carrier, s.ship_date`,
		append([]any{accountID}, args...)
}

// PendingManifests lists, per carrier and ship date, how many of the account's labels wait for
// a manifest (manifest.Awaits: bought, PRE_TRANSIT, never scanned, in no manifest, no
// returns), ordered by carrier, then ship date.
func (db *DB) PendingManifests(ctx context.Context, accountID string, p Page) (List[manifest.Pending], error) {
	from, args := pendingManifests(accountID)
	return offsetList(ctx, db.r, listQuery[manifest.Pending]{
		Columns: `l.carrier, s.ship_date, COUNT(*)`,
		From:    from,
		Args:    args,
		Scan: func(rows *sql.Rows) (manifest.Pending, error) {
			var m manifest.Pending
			return m, rows.Scan(&m.Carrier, &m.ShipDate, &m.LabelCount)
		},
	}, db.bytewise("l.carrier")+", s.ship_date", p)
}

const manifestColumns = `id, carrier, ship_date, label_ids, label_count, created_at`

func scanManifest(row rowScanner) (manifest.View, error) {
	var m manifest.View
	var ids string
	var created int64
	if err := row.Scan(&m.ID, &m.Carrier, &m.ShipDate, &ids, &m.LabelCount, &created); err != nil {
		return m, err
	}
	m.Status, m.CreatedAt = manifest.StatusCreated, stamp(created)
	return m, json.Unmarshal([]byte(ids), &m.ShippingLabelIDs)
}

// GetManifest returns one of the account's manifests.
func (db *DB) GetManifest(ctx context.Context, accountID, id string) (manifest.View, error) {
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
func (db *DB) ListManifests(ctx context.Context, accountID string, f ManifestFilter, p Page) (List[manifest.View], error) {
	args := []any{accountID}
	where := "manifests WHERE account_id = $1"
	if f.Carrier != "" {
		where += " AND carrier = " + arg(&args, f.Carrier)
	}
	if f.ShipDate != "" {
		where += " AND ship_date = " + arg(&args, f.ShipDate)
	}
	return offsetList(ctx, db.r, listQuery[manifest.View]{
		Columns: manifestColumns,
		From:    where,
		Args:    args,
		Scan:    func(rows *sql.Rows) (manifest.View, error) { return scanManifest(rows) },
	}, "created_at DESC, id DESC", p)
}

// Manifest document kinds (the column names).
const (
	ManifestPDF = "pdf"
	ManifestCSV = "csv"
)

// ManifestDocument is a manifest's stored PDF or CSV, with its digest.
type ManifestDocument struct {
	Manifest manifest.View
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
