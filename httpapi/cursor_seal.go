package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
)

// Cursors are sealed: encodeCursor's position, a dot and a MAC of it under the server's key, so
// a cursor the API did not issue (a decoded one edited to another position, or one made up) is
// refused with invalid_cursor, however well-formed its position is.

// cursorMACLen is how many bytes of HMAC-SHA256 a cursor carries: 128 bits.
const cursorMACLen = 16

// cursorMAC is the MAC of a cursor's position, in unpadded base64url.
func (d *documentState) cursorMAC(position string) string {
	m := hmac.New(sha256.New, d.key)
	m.Write([]byte("waybill cursor\x00" + position))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:cursorMACLen])
}

// sealCursor appends the MAC to a position made by encodeCursor.
func (d *documentState) sealCursor(position string) string {
	return position + "." + d.cursorMAC(position)
}

// unsealCursor returns the position of a sealed cursor, or ok false when the MAC does not match.
func (d *documentState) unsealCursor(cursor string) (position string, ok bool) {
	position, mac, found := strings.Cut(cursor, ".")
	if !found || !hmac.Equal([]byte(mac), []byte(d.cursorMAC(position))) {
		return "", false
	}
	return position, true
}

// unsealCursors returns q with its after and before cursors unsealed, for parseKeyset. A cursor
// whose MAC does not match becomes one decodeCursor refuses, so parseKeyset answers it
// invalid_cursor in its own order (after a pagination_conflict).
func (d *documentState) unsealCursors(q url.Values) url.Values {
	for _, name := range []string{"after", "before"} {
		if !q.Has(name) {
			continue
		}
		q = cloneValues(q)
		position, ok := d.unsealCursor(q.Get(name))
		if !ok {
			position = "!"
		}
		q.Set(name, position)
	}
	return q
}

// sealMeta seals the cursors of a keyset page's metadata.
func (d *documentState) sealMeta(m metadata) metadata {
	for _, c := range []**string{&m.StartCursor, &m.EndCursor} {
		if *c != nil {
			sealed := d.sealCursor(**c)
			*c = &sealed
		}
	}
	return m
}

func cloneValues(q url.Values) url.Values {
	c := make(url.Values, len(q))
	for k, v := range q {
		c[k] = v
	}
	return c
}
