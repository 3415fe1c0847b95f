// Package codec holds the bytes of the stored record that SQL does not read: the packed copies
// of shipments' and labels' renderings, and the JSON shapes of the columns that keep a quote's
// rate metadata and surcharges and a shipment's messages. Each is specified in docs/storage.md;
// the store writes and reads them, and nothing here knows of a database.
package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/lz"
)

// The packed copies of shipments' and labels' renderings. A shipment's
// record is its row, its request (shipment_requests) and its quotes (shipment_quotes), which
// sqlite3 and psql read; shipments.packed is a copy of its rendering (the answer of
// GET /shipments/{id}, label_url marked), packed by lz so that a GET reads one small value. A
// label's packed value is its rendering. The store's rerender (and the create and the buy,
// which render what they write) own them.

// Format versions. The first byte of a packed value names its format; every version is read
// for as long as values of it may be stored (docs/storage.md specifies each), and all pack
// against packDict, which is therefore never changed (TestPackDictPinned).
//
//	packV1          version, the parts' lengths (uvarints), the parts packed as one
//	packV2Holed     version, the hole's offset and the filling (uvarints, then its bytes), then
//	                what a packV1 value holds after its version, the first part without the filling
//	packChecked     as packV1, with two CRC-32C (Castagnoli, little-endian) after the version: of
//	                the first part unpacked, and of the others unpacked, one after the other
//	packHoled       as packV2Holed, with the two CRC-32C after the filling, the first part's
//	                counting the filling in its place
//	packRendering   version, the CRC-32C of the rendering, its length (uvarint), it packed
//	packRenderHoled as packV2Holed up to the filling, then the rendering's CRC-32C (counting
//	                the filling), its length without the filling and the rest packed
//
// Versions 1 to 4 hold a label's rendering alone, or a shipment's rendering, request and quote
// cents (three parts); migration 028 moved every shipment's request and quotes into columns and
// rows and its rendering into a packRendering value. Values are written as packRendering and
// packRenderHoled; a read checks what it unpacks against its CRC, and a whole read requires the
// packed input used up, so a damaged value is an error, never wrong or broken data served.
const (
	packV1          = 1
	packV2Holed     = 2
	packChecked     = 3
	packHoled       = 4
	packRendering   = 5
	packRenderHoled = 6
)

// packDict is what a packed value is packed against: the shape of a bought shipment's
// rendering, which holds its label's.
const packDict = `{"id":"","status":"","brand":"","ship_date":"","origin":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"destination":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"return_address":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"parcel":{"length":0,"width":0,"height":0,"length_unit":"IN","weight":0,"weight_unit":"OZ"},"rate_shopping_profile":"default","rate_shopping_strategy":"ALL","label_format":"PDF","custom_reference_1":null,"custom_reference_2":null,"shipping_rates":[{"id":"","shipment_id":"","carrier":"","service":"","price":{"amount":0,"currency":"USD"},"estimated_delivery_date":"","estimated_delivery_days":0,"rate_metadata":{"usps_zone":0,"billable_weight":0,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":0,"dim_factor":0,"dim_threshold":0,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0,"currency":"USD"}}],"carrier_version":0}}],"shipping_label":{"id":"","shipment_id":"","status":"PRE_TRANSIT","substatus":null,"label_url":"","label_format":"PDF","tracking_code":"","carrier":"","service":"","shipping_rate_id":"","shipping_rate":{"id":"","shipment_id":"","carrier":"","service":"","price":{"amount":0,"currency":"USD"},"estimated_delivery_date":"","estimated_delivery_days":0,"rate_metadata":{"usps_zone":0,"billable_weight":0,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":0,"dim_factor":0,"dim_threshold":0,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0,"currency":"USD"}}],"carrier_version":0}},"insurance_amount":null,"manifest_id":null,"delivered_at":null,"first_carrier_scan_at":null,"created_at":"2026-01-01T00:00:00.000000Z","updated_at":""},"created_at":"","updated_at":"","customs_info":null}`

// packer packs against packDict; it is read-only once made.
var packer = lz.NewDict([]byte(packDict))

// maxUnpacked bounds what a packed value may unpack to (a shipment's rendering with its nine
// quotes is 7 kB).
const maxUnpacked = 4 << 20

var ErrMalformed = errors.New("store: malformed packed value")

// ErrChecksum reports a packed value whose bytes unpack to something else than was packed.
var ErrChecksum = errors.New("store: packed value fails its checksum")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Legacy reports whether b is not a packed value of the versions written today: one of versions
// 1 to 4, which held a shipment's request and quotes' cents beside its rendering (before
// migration 028), or a malformed one, which Unpack refuses.
func Legacy(b []byte) bool { return len(b) == 0 || b[0] < packRendering }

// Pack is the packed value of a rendering (packRendering).
func Pack(rendering []byte) []byte {
	dst := binary.LittleEndian.AppendUint32([]byte{packRendering}, crc32.Checksum(rendering, castagnoli))
	return packLength(dst, rendering)
}

// restCRC is the CRC-32C of the parts after the first, one after the other.
func restCRC(parts [][]byte) uint32 {
	var c uint32
	for _, p := range parts[1:] {
		c = crc32.Update(c, castagnoli, p)
	}
	return c
}

// packLength appends to dst the rendering's length, then the rendering packed (the one part of
// the formats written today).
func packLength(dst, rendering []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rendering)))
	return packer.Pack(slices.Grow(dst, len(rendering)/4), rendering) // a rendering packs to about a sixth
}

// Holed is a rendering packed before some of its bytes are known: the buy packs its
// renderings outside its transaction, where the carrier has not yet given the tracking code,
// and fills the hole with the code inside it, without packing (a packRenderHoled value). It
// keeps the CRC of the rendering up to the hole and the bytes after it, so that the filled
// rendering's CRC costs a pass over 7 kB, not a pack.
type Holed struct {
	at      int
	headCRC uint32 // of the rendering before the hole
	tail    []byte // the rendering after the hole
	packed  []byte // the rendering's length and its packed bytes
}

// PackHole packs a rendering with a hole at offset at.
func PackHole(at int, rendering []byte) Holed {
	return Holed{at, crc32.Checksum(rendering[:at], castagnoli), rendering[at:], packLength(nil, rendering)}
}

// Fill is the packed value with fill in its hole.
func (h Holed) Fill(fill []byte) []byte {
	crc := crc32.Update(crc32.Update(h.headCRC, castagnoli, fill), castagnoli, h.tail)
	out := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(fill)+4+len(h.packed))
	out = binary.AppendUvarint(binary.AppendUvarint(append(out, packRenderHoled), uint64(h.at)), uint64(len(fill)))
	return append(binary.LittleEndian.AppendUint32(append(out, fill...), crc), h.packed...)
}

// Unpack reads a packed value whole: n parts for versions 1 to 4, the rendering alone for the
// later ones.
func Unpack(b []byte, n int) ([][]byte, error) {
	v, err := header(b, n)
	if err != nil {
		return nil, err
	}
	total := len(v.fill)
	for _, l := range v.lens {
		total += l
	}
	raw, err := packer.UnpackAll(make([]byte, 0, total), v.body, total-len(v.fill))
	if err != nil {
		return nil, ErrMalformed
	}
	raw = slices.Insert(raw, v.at, v.fill...)
	v.lens[0] += len(v.fill)
	parts := make([][]byte, len(v.lens))
	for i, l := range v.lens {
		parts[i], raw = raw[:l], raw[l:]
	}
	if v.checked && (crc32.Checksum(parts[0], castagnoli) != v.firstCRC || len(parts) > 1 && restCRC(parts) != v.restCRC) {
		return nil, ErrChecksum
	}
	return parts, nil
}

// ErrUnchecked reports a value of versions 1 or 2, which carry no CRC: migration 037 rewrote
// every one that was stored, so one read now is another value with its version byte damaged.
var ErrUnchecked = errors.New("store: packed value of a version without a checksum")

// AppendRendering appends to dst the rendering a packed value holds (its first part, of n
// for versions 3 and 4), unpacked alone and checked against its CRC. A value of one part must
// be used up by it.
func AppendRendering(dst, b []byte, n int) ([]byte, error) {
	v, err := header(b, n)
	if err != nil {
		return nil, err
	}
	if !v.checked {
		return nil, ErrUnchecked
	}
	start := len(dst)
	unpack := packer.Unpack
	if len(v.lens) == 1 {
		unpack = packer.UnpackAll
	}
	if dst, err = unpack(dst, v.body, v.lens[0]); err != nil || len(dst)-start != v.lens[0] {
		return nil, ErrMalformed
	}
	dst = slices.Insert(dst, start+v.at, v.fill...)
	if crc32.Checksum(dst[start:], castagnoli) != v.firstCRC {
		return nil, ErrChecksum
	}
	return dst, nil
}

// packedValue is a packed value's header read: its parts' lengths as packed (the first
// without the filling), its hole's offset and filling (none in a value without a hole), its
// CRCs (in a checked format; restCRC in versions 3 and 4 only), and the packed parts.
type packedValue struct {
	lens              []int
	at                int
	fill              []byte
	checked           bool
	firstCRC, restCRC uint32
	body              []byte
}

// header reads the header of a packed value, of n parts if its version is 1 to 4.
func header(b []byte, n int) (packedValue, error) {
	var v packedValue
	if len(b) == 0 || b[0] < packV1 || b[0] > packRenderHoled {
		return v, ErrMalformed
	}
	version, total := b[0], 0
	hasHole := version == packV2Holed || version == packHoled || version == packRenderHoled
	v.checked = version >= packChecked
	crcs := 2
	if version >= packRendering {
		n, crcs = 1, 1
	}
	b = b[1:]
	next := func() (int, bool) { // a uvarint that keeps the total unpacked within maxUnpacked
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(maxUnpacked-total) {
			return 0, false
		}
		b = b[k:]
		return int(l), true
	}
	if hasHole {
		at, ok1 := next()
		l, ok2 := next()
		if !ok1 || !ok2 || l > len(b) {
			return v, ErrMalformed
		}
		v.at, v.fill, b, total = at, b[:l], b[l:], l
	}
	if v.checked {
		if len(b) < 4*crcs {
			return v, ErrMalformed
		}
		v.firstCRC = binary.LittleEndian.Uint32(b)
		if crcs == 2 {
			v.restCRC = binary.LittleEndian.Uint32(b[4:])
		}
		b = b[4*crcs:]
	}
	v.lens = make([]int, n)
	for i := range v.lens {
		l, ok := next()
		if !ok {
			return v, ErrMalformed
		}
		v.lens[i], total = l, total+l
	}
	if v.at > v.lens[0] {
		return v, ErrMalformed
	}
	v.body = b
	return v, nil
}

// MessagesOf reads the messages of a shipment's rendering, kept there alone (billing copies the
// request part, which they are not part of): nil for a rendering stored before shipments had
// them, which therefore renders without them again. Only the shipment's own key is named
// messages, and a quote inside a string is escaped, so `"messages":[` is found only there.
func MessagesOf(rendering []byte) ([]shipping.Reason, error) {
	const key = `"messages":[`
	i := bytes.Index(rendering, []byte(key))
	if i < 0 {
		return nil, nil
	}
	rest := string(rendering[i+len(key):])
	if ms, ok := fastMessages(rest); ok {
		return ms, nil
	}
	var ms []shipping.Reason
	err := json.NewDecoder(strings.NewReader("[" + rest)).Decode(&ms)
	return ms, err
}

// QuotesOf reads the quotes of a shipment's rendering, with the cents a value of versions 1 to
// 4 stored beside it.
func QuotesOf(rendering, cents []byte) ([]shipping.Rate, error) {
	_, rest, ok := strings.Cut(string(rendering), `"shipping_rates":`)
	if !ok {
		return nil, errors.New("no shipping_rates in the rendering")
	}
	rates, ok := fastQuotes(rest)
	if !ok {
		if err := json.NewDecoder(strings.NewReader(rest)).Decode(&rates); err != nil {
			return nil, err
		}
	}
	for i := range rates {
		r := &rates[i]
		for _, c := range []*int64{&r.PostageCents, &r.SurchargesCents, &r.TotalCents, &r.RetailCents} {
			v, k := binary.Varint(cents)
			if k <= 0 {
				return nil, ErrMalformed
			}
			*c, cents = v, cents[k:]
		}
	}
	if len(cents) > 0 {
		return nil, ErrMalformed
	}
	return rates, nil
}
