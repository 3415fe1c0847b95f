package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
)

// DueSimulatedLabels returns at most limit labels, of every account, the tracking simulator
// moves on from (in shipping.SimulatedStatuses, or the simulator's own missed delivery) whose last event (or purchase) is at or
// before cutoff, the longest waiting first. The simulator keeps no state of its own: what is
// due follows from the labels' stored status and last event time, so it survives restarts.
func (db *DB) DueSimulatedLabels(ctx context.Context, cutoff time.Time, limit int) ([]shipping.SimulatedLabel, error) {
	// Placeholders are numbered in the order they appear (SQLite binds them by appearance).
	var args []any
	marks := make([]string, len(shipping.SimulatedStatuses))
	for i, s := range shipping.SimulatedStatuses {
		args = append(args, s)
		marks[i] = "$" + strconv.Itoa(i+1)
	}
	n := len(args)
	args = append(args, shipping.LabelDeliveryException, shipping.SimulatedMissedDelivery, Micros(cutoff), limit)
	rows, err := db.r.QueryContext(ctx, `SELECT id, tracking_code, status, substatus, COALESCE(last_event_at, created_at)
		FROM shipping_labels
		WHERE (status IN (`+strings.Join(marks, ", ")+`) OR status = $`+strconv.Itoa(n+1)+` AND substatus = $`+strconv.Itoa(n+2)+`)
		AND COALESCE(last_event_at, created_at) <= $`+strconv.Itoa(n+3)+`
		ORDER BY COALESCE(last_event_at, created_at), id LIMIT $`+strconv.Itoa(n+4), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []shipping.SimulatedLabel
	for rows.Next() {
		var l shipping.SimulatedLabel
		var sub sql.NullString
		var last int64
		if err := rows.Scan(&l.ID, &l.TrackingCode, &l.Status, &sub, &last); err != nil {
			return nil, err
		}
		if sub.Valid {
			l.Substatus = &sub.String
		}
		l.LastEventAt = Time(last)
		out = append(out, l)
	}
	return out, rows.Err()
}
