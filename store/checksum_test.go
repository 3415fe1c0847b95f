package store

import (
	"database/sql"
	"fmt"
	"hash/crc32"
	"testing"
)

// TestChecksumAsStated: checksum is the CRC-32C of the values written out as the record's rule
// states them (each in decimal or as its text, NULL as the byte 1, a 0 byte after each), the
// rule migration 041 applied to the rows before it.
func TestChecksumAsStated(t *testing.T) {
	s := "text"
	vals := []any{"a", []byte("b"), 7, int64(-12), 20.5, 1e21, 0.1, &s, (*string)(nil), sql.NullInt64{Int64: 3, Valid: true}, sql.NullInt64{}, int32(5)}
	var b []byte
	for _, v := range vals {
		switch v := v.(type) {
		case []byte:
			b = append(b, v...)
		case *string:
			if v == nil {
				b = append(b, 1)
			} else {
				b = append(b, *v...)
			}
		case sql.NullInt64:
			if !v.Valid {
				b = append(b, 1)
			} else {
				b = fmt.Append(b, v.Int64)
			}
		default:
			b = fmt.Append(b, v)
		}
		b = append(b, 0)
	}
	if got, want := checksum(vals...), int64(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))); got != want {
		t.Errorf("checksum = %d; want %d", got, want)
	}
}

func BenchmarkChecksum(b *testing.B) {
	req := make([]byte, 1500)
	b.ReportAllocs()
	for b.Loop() {
		checksum(req, (*string)(nil))
	}
}
