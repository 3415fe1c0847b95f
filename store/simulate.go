package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/waybill/waybill/shipping"
)

// DueSimulatedLabels returns at most limit labels, of every account, the tracking simulator
// moves on from (in shipping.SimulatedStatuses, or the simulator's own missed delivery) whose last event (or purchase) is at or
// before cutoff, the longest waiting first. The simulator keeps no state of its own: what is
// due follows from the labels' stored status and last event time, so it survives restarts.
func (db *DB) DueSimulatedLabels(ctx context.Context, cutoff time.Time, limit int) ([]shipping.SimulatedLabel, error) {
	var args []any
	query := `SELECT id, tracking_code, status, substatus, COALESCE(last_event_at, created_at) FROM shipping_labels
		WHERE (status IN (` + placeholders(&args, shipping.SimulatedStatuses) + `)
			OR status = ` + arg(&args, shipping.LabelDeliveryException) + ` AND substatus = ` + arg(&args, shipping.SimulatedMissedDelivery) + `)
		AND COALESCE(last_event_at, created_at) <= ` + arg(&args, Micros(cutoff)) + `
		ORDER BY COALESCE(last_event_at, created_at), id LIMIT ` + arg(&args, limit)
	return collect(ctx, db.r, query, args, func(rows *sql.Rows) (shipping.SimulatedLabel, error) {
		var l shipping.SimulatedLabel
		var sub sql.NullString
		var last int64
		if err := rows.Scan(&l.ID, &l.TrackingCode, &l.Status, &sub, &last); err != nil {
			return l, err
		}
		if sub.Valid {
			l.Substatus = &sub.String
		}
		l.LastEventAt = Time(last)
		return l, nil
	})
}
