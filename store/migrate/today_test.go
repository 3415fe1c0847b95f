package migrate

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"strings"
	"testing"
	"time"
)

// unpackRendering reads a packed value of format 5, as the store reads it.
func unpackRendering(t *testing.T, b []byte) []byte {
	t.Helper()
	if len(b) < 6 || b[0] != packRendering {
		t.Fatalf("packed value %.12x…: not of format 5", b)
	}
	crc := binary.LittleEndian.Uint32(b[1:])
	n, k := binary.Uvarint(b[5:])
	if k <= 0 {
		t.Fatalf("packed value %.12x…: no length", b)
	}
	got, err := newLZDict([]byte(packDict)).unpackAll(nil, b[5+k:], int(n))
	if err != nil || crc32.Checksum(got, castagnoli) != crc {
		t.Fatalf("packed value %.12x…: %v, or fails its checksum", b, err)
	}
	return got
}

// A shipment's packed value as stored before migration 028 gives back its rendering, its
// request, its quotes with their cents and its messages; a value that does not read is an
// error.
func TestUnpackShipment(t *testing.T) {
	var p packer
	packed := fixture(t, "open_v3.hex")
	rendering, req, quotes, messages, err := p.unpackShipment(packed)
	if err != nil || !bytes.Equal(rendering, fixture(t, "open.json")) {
		t.Fatalf("unpackShipment = %.40q…, %v; want the rendering", rendering, err)
	}
	if r, err := readRequest(req); err != nil || r.Origin.Country != "US" || r.IsReturn {
		t.Errorf("unpackShipment request = %s (%v); want the shipment's", req, err)
	}
	if len(quotes) != 9 {
		t.Fatalf("unpackShipment read %d quotes; want 9", len(quotes))
	}
	for _, q := range quotes {
		if q.Price != (money{float64(q.TotalCents) / 100, "USD"}) || q.PostageCents != q.TotalCents-40 ||
			q.SurchargesCents != 40 || q.RetailCents != q.TotalCents*5/4 || q.EstimatedDeliveryDate.IsZero() {
			t.Errorf("quote %+v: cents not as packed", q)
		}
	}
	if want := `[{"carrier":"REGIONALX","service":"REGSL","message":"parcel weighs more than 1 lb"}]`; messages == nil || *messages != want {
		t.Errorf("unpackShipment messages = %v; want %s", messages, want)
	}
	for _, bad := range [][]byte{nil, {2}, packed[:len(packed)/2], append([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}, packed[1:]...),
		p.pack(rendering)} {
		if _, _, _, _, err := p.unpackShipment(bad); err == nil {
			t.Errorf("unpackShipment(%.20x…): no error", bad)
		}
	}
}

// A shipment packed before shipments had messages (this value was packed by the code of then)
// reads without them: its messages column stays NULL, and the store shows none rather than an
// empty list, which would claim every carrier quoted.
func TestPackedShipmentWithoutMessages(t *testing.T) {
	const packedBeforeMessages = "01b508ec020707f004047331119a06084f50454e2d860e14323032362d31312d323321900e024113e60c1231204d61696e2053740def0c0c41757374696e0ff50c0454580bf70c0a3738373031bb01a70ea301a50e25a30e02310da40e02380da40e023433a40e023257a50e319e0e1db9099701980e0472311bab0904733113ad0910504f53544c494e4513b5090c47524f554e4421bb0908392e343755be0908303030312da50669d9090238a902d909219609023205ad0911ff07359602139a08352b23b508026f198716a905f707107dc00e26e60ec012"
	var p packer
	b, _ := hex.DecodeString(packedBeforeMessages)
	rendering, _, _, messages, err := p.unpackShipment(b)
	if err != nil {
		t.Fatal(err)
	}
	if messages != nil || bytes.Contains(rendering, []byte(`"messages"`)) {
		t.Errorf("a shipment packed before messages reads messages %v from %s; want none", *messages, rendering)
	}
}

// TestTodaysShapes: migration 039 rewrites what the store no longer reads — renderings packed
// in formats 3 and 4, Idempotency-Keys without an answer, carrier versions without an outline,
// line items' rate metadata of the older shape — and leaves everything else as it was,
// damaged values included.
func TestTodaysShapes(t *testing.T) {
	db := migrated(t)
	var p packer
	today := p.pack([]byte(`{"id":"s-today"}`))
	damaged := fixture(t, "label_v3.hex")
	damaged[len(damaged)-1] ^= 0x20
	insertShipment(t, db, "s-v4", "", fixture(t, "bought_v4.hex"))
	insertShipment(t, db, "s-today", "", today)
	insertShipment(t, db, "s-none", "", nil)
	insertLabel(t, db, "l-v3", "s-v4", fixture(t, "label_v3.hex"))
	insertLabel(t, db, "l-damaged", "s-today", damaged)
	const card = `{"code":"ACME","name":"Acme","effective_from":"2026-01-01","services":[{"code":"G","name":"Ground","expedited":false}],` +
		`"dim_factor":166,"tracking":{"scheme":"luhn","prefix":"AC","digits":10},"das_cents":0}`
	const older = `{"zone":8,"billable_weight_oz":31,"surcharges":[{"type":"FUEL","amount":0.19}]}`
	const current = `{"usps_zone":5,"billable_weight":12,"weight_metadata":{"actual_oz_weight":12,"billable_oz_weight":12,"dim_factor":166,"dim_threshold":1728,"volume":0},"surcharges_metadata":[]}`
	run(t, db,
		`INSERT INTO carriers (code, deleted, next_serial, created_at, updated_at) VALUES ('ACME', FALSE, 0, 0, 0),
			('BARE', FALSE, 0, 0, 0)`,
		`INSERT INTO invoices (id, account_id, status, currency, invoice_number, period_start, period_end, total_cents,
			deferred_cents, created_at, updated_at) VALUES ('inv', 'acct', 'DRAFT', 'USD', 'N1', '2026-11-01', '2026-11-30', 0, 0, 0, 0)`,
		`INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, shipment_id, response, created_at)
			VALUES ('acct', 'k-claimed', 'f', 's-v4', '', 0), ('acct', 'k-answered', 'f', 's-v4', '{"id":"s-v4"}', 0)`,
		`INSERT INTO carrier_versions (carrier, version, effective_from, created_at, outline, card)
			VALUES ('ACME', 1, '2026-01-01', 0, NULL, '`+card+`'), ('ACME', 2, '2026-02-01', 0, '{"name":"kept"}', '`+card+`'),
			('BARE', 1, '2026-01-01', 0, NULL, '{"name":"Bare"}')`,
		`INSERT INTO billing_line_items (id, account_id, invoice_id, type, description, postage_cents, surcharges_cents,
			total_cents, shipping_rate_metadata, created_at) VALUES ('i-older', 'acct', 'inv', 'POSTAGE', 'd', 0, 0, 0, '`+older+`', 0),
			('i-current', 'acct', 'inv', 'POSTAGE', 'd', 0, 0, 0, '`+current+`', 0),
			('i-fee', 'acct', 'inv', 'FEE', 'd', 0, 0, 0, NULL, 0)`,
		`DELETE FROM schema_migrations WHERE version = 39`)
	if err := Apply(context.Background(), db, SQLite, time.Now); err != nil {
		t.Fatal(err)
	}

	packed := func(table, id string) []byte {
		var b []byte
		if err := db.QueryRow(`SELECT packed FROM `+table+` WHERE id = $1`, id).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := unpackRendering(t, packed("shipments", "s-v4")); !bytes.Equal(got, fixture(t, "bought.json")) {
		t.Errorf("shipment of format 4 repacked as %.60q…; want its rendering", got)
	}
	if got := unpackRendering(t, packed("shipping_labels", "l-v3")); !bytes.Equal(got, fixture(t, "label.json")) {
		t.Errorf("label of format 3 repacked as %.60q…; want its rendering", got)
	}
	for _, tt := range []struct {
		table, id string
		want      []byte
	}{{"shipments", "s-today", today}, {"shipments", "s-none", nil}, {"shipping_labels", "l-damaged", damaged}} {
		if got := packed(tt.table, tt.id); !bytes.Equal(got, tt.want) {
			t.Errorf("%s %s packed %.12x…; want it as it was, %.12x…", tt.table, tt.id, got, tt.want)
		}
	}

	var keys []string
	rows, err := db.Query(`SELECT idempotency_key FROM idempotency_keys ORDER BY idempotency_key`)
	if err != nil {
		t.Fatal(err)
	}
	keys = scanStrings(t, rows)
	if strings.Join(keys, ",") != "k-answered" {
		t.Errorf("idempotency keys after migration 039: %v; want the answered one alone", keys)
	}

	rows, err = db.Query(`SELECT carrier || ' ' || version || ' ' || outline FROM carrier_versions ORDER BY carrier, version`)
	if err != nil {
		t.Fatal(err)
	}
	wantOutlines := []string{
		`ACME 1 {"name":"Acme","tracking":{"scheme":"luhn","prefix":"AC","digits":10},"services":[{"code":"G","name":"Ground"}]}`,
		`ACME 2 {"name":"kept"}`,
		`BARE 1 {"name":"Bare","tracking":{"scheme":""},"services":[]}`,
	}
	if got := scanStrings(t, rows); strings.Join(got, "\n") != strings.Join(wantOutlines, "\n") {
		t.Errorf("outlines after migration 039:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantOutlines, "\n"))
	}

	rows, err = db.Query(`SELECT id || ' ' || COALESCE(shipping_rate_metadata, 'NULL') FROM billing_line_items ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	wantItems := []string{
		`i-current ` + current,
		`i-fee NULL`,
		`i-older {"usps_zone":8,"billable_weight":31,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":31,"dim_factor":166,"dim_threshold":1728,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0.19,"currency":"USD"}}]}`,
	}
	if got := scanStrings(t, rows); strings.Join(got, "\n") != strings.Join(wantItems, "\n") {
		t.Errorf("line items after migration 039:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantItems, "\n"))
	}
}

// scanStrings reads the one text column of rows.
func scanStrings(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
