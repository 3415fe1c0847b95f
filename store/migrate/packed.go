package migrate

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
)

// A frozen copy of the store's packed formats as migrations read and write them: formats 1 to 4,
// which migrations 028 and 039 read and rewrite, and format 5, which migrations 028, 038 and 039
// write (docs/storage.md specifies each). It must never change with the runtime's codec: these
// migrations must do to a database migrated next year what they did to one migrated today.
//
//	packV1        version, the parts' lengths (uvarints), the parts packed as one
//	packV2Holed   version, the hole's offset and the filling (uvarints, then its bytes), then
//	              what a packV1 value holds after its version, the first part without the filling
//	packChecked   as packV1, with two CRC-32C (Castagnoli, little-endian) after the version: of
//	              the first part unpacked, and of the others unpacked, one after the other
//	packHoled     as packV2Holed, with the two CRC-32C after the filling, the first part's
//	              counting the filling in its place
//	packRendering version, the CRC-32C of the rendering, its length (uvarint), it packed
//
// Versions 1 to 4 hold a label's rendering alone (one part), or a shipment's rendering, request
// and quote cents (three parts).
const (
	packV1        = 1
	packV2Holed   = 2
	packChecked   = 3
	packHoled     = 4
	packRendering = 5
)

// packDict is what every packed value is packed against: the shape of a bought shipment's
// rendering, which holds its label's. It is pinned for as long as any value packed against it
// is stored.
const packDict = `{"id":"","status":"","brand":"","ship_date":"","origin":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"destination":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"return_address":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"parcel":{"length":0,"width":0,"height":0,"length_unit":"IN","weight":0,"weight_unit":"OZ"},"rate_shopping_profile":"default","rate_shopping_strategy":"ALL","label_format":"PDF","custom_reference_1":null,"custom_reference_2":null,"shipping_rates":[{"id":"","shipment_id":"","carrier":"","service":"","price":{"amount":0,"currency":"USD"},"estimated_delivery_date":"","estimated_delivery_days":0,"rate_metadata":{"usps_zone":0,"billable_weight":0,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":0,"dim_factor":0,"dim_threshold":0,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0,"currency":"USD"}}],"carrier_version":0}}],"shipping_label":{"id":"","shipment_id":"","status":"PRE_TRANSIT","substatus":null,"label_url":"","label_format":"PDF","tracking_code":"","carrier":"","service":"","shipping_rate_id":"","shipping_rate":{"id":"","shipment_id":"","carrier":"","service":"","price":{"amount":0,"currency":"USD"},"estimated_delivery_date":"","estimated_delivery_days":0,"rate_metadata":{"usps_zone":0,"billable_weight":0,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":0,"dim_factor":0,"dim_threshold":0,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0,"currency":"USD"}}],"carrier_version":0}},"insurance_amount":null,"manifest_id":null,"delivered_at":null,"first_carrier_scan_at":null,"created_at":"2026-01-01T00:00:00.000000Z","updated_at":""},"created_at":"","updated_at":"","customs_info":null}`

// maxUnpacked bounds what a packed value may unpack to.
const maxUnpacked = 4 << 20

var (
	errMalformed = errors.New("malformed packed value")
	errChecksum  = errors.New("packed value fails its checksum")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// packer packs renderings as format 5, keeping its scratch space from one to the next. The
// dictionary's index is made on first use.
type packer struct {
	dict *lzDict
	win  lzWindow
}

// pack is the packed value of a rendering (packRendering).
func (p *packer) pack(rendering []byte) []byte {
	if p.dict == nil {
		p.dict = newLZDict([]byte(packDict))
	}
	dst := binary.LittleEndian.AppendUint32([]byte{packRendering}, crc32.Checksum(rendering, castagnoli))
	dst = binary.AppendUvarint(dst, uint64(len(rendering)))
	return p.dict.pack(&p.win, slices.Grow(dst, len(rendering)/4), rendering)
}

// older reports whether b is a packed value of versions 1 to 4, or a malformed one.
func older(b []byte) bool { return len(b) == 0 || b[0] < packRendering }

// unpackOlder reads a packed value of versions 1 to 4 whole, as n parts, checked against its
// CRCs (versions 3 and 4).
func (p *packer) unpackOlder(b []byte, n int) ([][]byte, error) {
	if p.dict == nil {
		p.dict = newLZDict([]byte(packDict))
	}
	v, err := olderHeader(b, n)
	if err != nil {
		return nil, err
	}
	total := len(v.fill)
	for _, l := range v.lens {
		total += l
	}
	raw, err := p.dict.unpackAll(make([]byte, 0, total), v.body, total-len(v.fill))
	if err != nil {
		return nil, errMalformed
	}
	raw = slices.Insert(raw, v.at, v.fill...)
	v.lens[0] += len(v.fill)
	parts := make([][]byte, len(v.lens))
	for i, l := range v.lens {
		parts[i], raw = raw[:l], raw[l:]
	}
	if v.checked && (crc32.Checksum(parts[0], castagnoli) != v.firstCRC || len(parts) > 1 && restCRC(parts) != v.restCRC) {
		return nil, errChecksum
	}
	return parts, nil
}

// restCRC is the CRC-32C of the parts after the first, one after the other.
func restCRC(parts [][]byte) uint32 {
	var c uint32
	for _, p := range parts[1:] {
		c = crc32.Update(c, castagnoli, p)
	}
	return c
}

// olderValue is a packed value's header read: its parts' lengths as packed (the first without
// the filling), its hole's offset and filling (none in a value without a hole), its CRCs (in a
// checked format), and the packed parts.
type olderValue struct {
	lens              []int
	at                int
	fill              []byte
	checked           bool
	firstCRC, restCRC uint32
	body              []byte
}

// olderHeader reads the header of a packed value of versions 1 to 4, of n parts.
func olderHeader(b []byte, n int) (olderValue, error) {
	var v olderValue
	if len(b) == 0 || b[0] < packV1 || b[0] > packHoled {
		return v, errMalformed
	}
	version, total := b[0], 0
	v.checked = version >= packChecked
	b = b[1:]
	next := func() (int, bool) { // a uvarint that keeps the total unpacked within maxUnpacked
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(maxUnpacked-total) {
			return 0, false
		}
		b = b[k:]
		return int(l), true
	}
	if version == packV2Holed || version == packHoled {
		at, ok1 := next()
		l, ok2 := next()
		if !ok1 || !ok2 || l > len(b) {
			return v, errMalformed
		}
		v.at, v.fill, b, total = at, b[:l], b[l:], l
	}
	if v.checked {
		if len(b) < 8 {
			return v, errMalformed
		}
		v.firstCRC, v.restCRC = binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
		b = b[8:]
	}
	v.lens = make([]int, n)
	for i := range v.lens {
		l, ok := next()
		if !ok {
			return v, errMalformed
		}
		v.lens[i], total = l, total+l
	}
	if v.at > v.lens[0] {
		return v, errMalformed
	}
	v.body = b
	return v, nil
}
