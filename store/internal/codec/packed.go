// Package codec holds the bytes of the stored record that SQL does not read: the packed copies
// of shipments' and labels' renderings, and the JSON shapes of the columns that keep a quote's
// rate metadata and surcharges and a shipment's messages. Each is specified in docs/storage.md;
// the store writes and reads them, and nothing here knows of a database.
package codec

import (
	"encoding/binary"
	"errors"
	"github.com/waybill/waybill/store/internal/lz"
	"hash/crc32"
	"slices"
)

// The packed copies of shipments' and labels' renderings. A shipment's record is its row, its
// request (shipment_requests) and its quotes (shipment_quotes), which sqlite3 and psql read;
// shipments.packed is a copy of its rendering (the answer of GET /shipments/{id}, label_url
// marked), packed by lz so that a GET reads one small value. A label's packed value is its
// rendering. The store's rerender (and the create and the buy, which render what they write)
// own them.

// Format versions. The first byte of a packed value names its format (docs/storage.md
// specifies each); both pack against packDict, which is therefore never changed
// (TestPackDictPinned).
//
//	packRendering   version, the CRC-32C (Castagnoli, little-endian) of the rendering, its length
//	                (uvarint), it packed
//	packRenderHoled version, the hole's offset and the filling (uvarints, then its bytes), the
//	                rendering's CRC-32C (counting the filling), its length without the filling
//	                and the rest packed
//
// Versions 1 to 4, older formats, were rewritten as version 5 by the migrations (store/migrate),
// so a value of them read now is a damaged one. A read checks what it unpacks against its CRC,
// and requires the packed input used up, so a damaged value is an error, never wrong or broken
// data served.
const (
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

// Pack is the packed value of a rendering (packRendering).
func Pack(rendering []byte) []byte {
	dst := binary.LittleEndian.AppendUint32([]byte{packRendering}, crc32.Checksum(rendering, castagnoli))
	return packLength(dst, rendering)
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

// AppendRendering appends to dst the rendering a packed value holds, unpacked and checked
// against its CRC, the packed input used up.
func AppendRendering(dst, b []byte) ([]byte, error) {
	v, err := header(b)
	if err != nil {
		return nil, err
	}
	start := len(dst)
	if dst, err = packer.UnpackAll(dst, v.body, v.length); err != nil || len(dst)-start != v.length {
		return nil, ErrMalformed
	}
	dst = slices.Insert(dst, start+v.at, v.fill...)
	if crc32.Checksum(dst[start:], castagnoli) != v.crc {
		return nil, ErrChecksum
	}
	return dst, nil
}

// packedValue is a packed value's header read: the rendering's length as packed (without the
// filling), its hole's offset and filling (none in a value without a hole), its CRC, and the
// packed rendering.
type packedValue struct {
	length int
	at     int
	fill   []byte
	crc    uint32
	body   []byte
}

// header reads the header of a packed value.
func header(b []byte) (packedValue, error) {
	var v packedValue
	if len(b) == 0 || b[0] != packRendering && b[0] != packRenderHoled {
		return v, ErrMalformed
	}
	holed, total := b[0] == packRenderHoled, 0
	b = b[1:]
	next := func() (int, bool) { // a uvarint that keeps the total unpacked within maxUnpacked
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(maxUnpacked-total) {
			return 0, false
		}
		b = b[k:]
		return int(l), true
	}
	if holed {
		at, ok1 := next()
		l, ok2 := next()
		if !ok1 || !ok2 || l > len(b) {
			return v, ErrMalformed
		}
		v.at, v.fill, b, total = at, b[:l], b[l:], l
	}
	if len(b) < 4 {
		return v, ErrMalformed
	}
	v.crc, b = binary.LittleEndian.Uint32(b), b[4:]
	l, ok := next()
	if !ok || v.at > l {
		return v, ErrMalformed
	}
	v.length, v.body = l, b
	return v, nil
}
