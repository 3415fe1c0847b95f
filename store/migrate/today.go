package migrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// todaysShapes (migration 039) rewrites the rows still stored in a shape older than the one
// the running service writes: renderings packed in formats 3 and 4, carrier versions without
// an outline, and line items' rate metadata of the older shape.
func todaysShapes(ctx context.Context, tx *sql.Tx, _ Dialect) error {
	for _, step := range []func(context.Context, *sql.Tx) error{repackOlder, fillOutlines, rewriteRateMetadata} {
		if err := step(ctx, tx); err != nil {
			return fmt.Errorf("migration 039: %w", err)
		}
	}
	return nil
}

// repackOlder repacks as format 5 the renderings packed in formats 3 and 4: a shipment's value
// held its rendering first (then its request and quote cents, which migration 028 copied into
// rows), a label's its rendering alone. A value that does not unpack, or fails its checksum,
// is left as it is: the store refuses it when read, as it refused it before.
func repackOlder(ctx context.Context, tx *sql.Tx) error {
	var p packer
	for _, t := range []struct {
		table string
		parts int
	}{{"shipments", 3}, {"shipping_labels", 1}} {
		err := eachInBatches(ctx, tx, `SELECT id, packed FROM `+t.table+` WHERE id > $1 AND packed < $2
			ORDER BY id LIMIT $3`, func(id, packed string) error {
			parts, err := p.unpackOlder([]byte(packed), t.parts)
			if err != nil || packed[0] < packChecked {
				return nil
			}
			_, err = tx.ExecContext(ctx, `UPDATE `+t.table+` SET packed = $1 WHERE id = $2`, p.pack(parts[0]), id)
			return err
		}, []byte{packRendering})
		if err != nil {
			return fmt.Errorf("%s: %w", t.table, err)
		}
	}
	return nil
}

// cardOutline is what a version's outline column holds: the parts of its card that choose the
// version, buy, void, name services and check tracking ranges.
type cardOutline struct {
	Name     string           `json:"name"`
	Tracking json.RawMessage  `json:"tracking"`
	Services []serviceOutline `json:"services"`
}

type serviceOutline struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// fillOutlines writes the outline of each carrier version stored without one, from its card.
func fillOutlines(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT carrier, version, card FROM carrier_versions WHERE outline IS NULL`)
	if err != nil {
		return err
	}
	type version struct {
		carrier string
		version int64
		outline []byte
	}
	var missing []version
	for rows.Next() {
		var v version
		var card string
		if err := rows.Scan(&v.carrier, &v.version, &card); err != nil {
			rows.Close()
			return err
		}
		if v.outline, err = outlineOf(card); err != nil {
			rows.Close()
			return fmt.Errorf("carrier %s version %d: %w", v.carrier, v.version, err)
		}
		missing = append(missing, v)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, v := range missing {
		if _, err := tx.ExecContext(ctx, `UPDATE carrier_versions SET outline = $1 WHERE carrier = $2 AND version = $3`,
			string(v.outline), v.carrier, v.version); err != nil {
			return err
		}
	}
	return nil
}

// outlineOf is the outline of a card's JSON.
func outlineOf(card string) ([]byte, error) {
	var c cardOutline
	if err := json.Unmarshal([]byte(card), &c); err != nil {
		return nil, err
	}
	if c.Tracking == nil || string(c.Tracking) == "null" {
		c.Tracking = json.RawMessage(`{"scheme":""}`) // a card without one, as its zero scheme is written
	}
	if c.Services == nil {
		c.Services = []serviceOutline{}
	}
	return json.Marshal(c)
}

// rewriteRateMetadata rewrites each line item's rate metadata of the older shape (its zone as
// "zone") in today's.
func rewriteRateMetadata(ctx context.Context, tx *sql.Tx) error {
	return eachInBatches(ctx, tx, `SELECT id, shipping_rate_metadata FROM billing_line_items
		WHERE id > $1 AND shipping_rate_metadata LIKE '%"zone"%' ORDER BY id LIMIT $2`, func(id, meta string) error {
		m, older, err := readRateMetadata(meta)
		if err != nil || !older {
			return nil // a value that does not read is refused when read, as before
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE billing_line_items SET shipping_rate_metadata = $1 WHERE id = $2`, string(b), id)
		return err
	})
}
