package store

import (
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

// The legible record carries checksums: a shipment's request (with its messages) and each of its
// quotes have a CRC-32C of their stored values, written with them (they never change) and checked
// whenever they are read — rendering, label documents, billing, inspect, export, verify — so that
// a value changed outside waybill (a flipped byte, an edit by hand) is an error naming the
// shipment, which the API logs, never data served. The packed copies have checksums of their own.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errChecksum is a legible value whose checksum does not match it.
var errChecksum = errors.New("the stored value does not match its checksum: it was changed outside waybill")

// checksum is the CRC-32C of vals as the record keeps them: each in decimal (a float in its
// shortest form) or as its text, NULL as the byte 1, each followed by a 0 byte. Writers and
// readers pass the same values in the same order.
func checksum(vals ...any) int64 {
	var crc uint32
	var buf [32]byte // a number's digits, on the stack
	for _, v := range vals {
		var b []byte
		switch v := v.(type) {
		case []byte:
			crc = crc32.Update(crc, castagnoli, v)
		case string:
			crc = crc32.Update(crc, castagnoli, []byte(v))
		case *string:
			if v == nil {
				b = append(buf[:0], 1)
			} else {
				crc = crc32.Update(crc, castagnoli, []byte(*v))
			}
		case int:
			b = strconv.AppendInt(buf[:0], int64(v), 10)
		case int64:
			b = strconv.AppendInt(buf[:0], v, 10)
		case sql.NullInt64:
			if !v.Valid {
				b = append(buf[:0], 1)
			} else {
				b = strconv.AppendInt(buf[:0], v.Int64, 10)
			}
		default:
			b = fmt.Append(buf[:0], v)
		}
		crc = crc32.Update(crc, castagnoli, append(b, 0))
	}
	return int64(crc)
}

// checkSum reports a stored checksum (NULL: none) that does not match the values.
func checkSum(stored sql.NullInt64, vals ...any) error {
	if !stored.Valid || stored.Int64 != checksum(vals...) {
		return errChecksum
	}
	return nil
}
