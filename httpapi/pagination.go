package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/waybill/waybill/store"
)

const (
	defaultPageSize = 50
	maxPageSize     = 250
)

// metadata is the list envelope's metadata.
type metadata struct {
	CurrentPage     *int    `json:"current_page"`
	PageSize        int     `json:"page_size"`
	TotalPages      int     `json:"total_pages"`
	TotalCount      int     `json:"total_count"`
	HasNextPage     bool    `json:"has_next_page"`
	HasPreviousPage bool    `json:"has_previous_page"`
	EndCursor       *string `json:"end_cursor"`
	StartCursor     *string `json:"start_cursor"`
}

// writeList answers a list in the {data, metadata} envelope.
func writeList(w http.ResponseWriter, data any, meta metadata) {
	writeJSON(w, http.StatusOK, struct {
		Data     any      `json:"data"`
		Metadata metadata `json:"metadata"`
	}{data, meta})
}

// listOpen, listMid and listEnd are the list envelope's bytes around its items and its
// metadata, as writeList's encoding writes them, for the lists written from encoded items.
const listOpen, listMid, listEnd = `{"data":[`, `],"metadata":`, "}\n"

// writeEncodedList answers a list of items already encoded, the same bytes writeList writes,
// without joining them into one buffer first.
func writeEncodedList(w http.ResponseWriter, items [][]byte, meta metadata) {
	m, err := json.Marshal(meta)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, nil)
		return
	}
	n := len(listOpen) + len(listMid) + len(m) + len(listEnd) + max(len(items)-1, 0)
	for _, it := range items {
		n += len(it)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, listOpen)
	for i, it := range items {
		if i > 0 {
			io.WriteString(w, ",")
		}
		w.Write(it)
	}
	io.WriteString(w, listMid)
	w.Write(m)
	io.WriteString(w, listEnd)
}

// writeStoredList answers a list of stored responses, linked: the same bytes writeList writes
// for the resources.
func (a *API) writeStoredList(w http.ResponseWriter, items []string, meta metadata) {
	m, err := json.Marshal(meta)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, nil)
		return
	}
	b := responses.Get().(*[]byte)
	*b = append((*b)[:0], listOpen...)
	for i, it := range items {
		if i > 0 {
			*b = append(*b, ',')
		}
		*b = a.appendLinked(*b, it)
	}
	*b = append(append(append(*b, listMid...), m...), listEnd...)
	writeBytes(w, http.StatusOK, *b)
	responses.Put(b)
}

// parsePage reads page and page_size.
func parsePage(q url.Values) (store.Page, error) {
	p := store.Page{Number: 1, Size: defaultPageSize}
	var err error
	if p.Number, err = intParam(q, "page", 1, 1, 1<<31-1); err != nil {
		return p, err
	}
	p.Size, err = intParam(q, "page_size", defaultPageSize, 1, maxPageSize)
	return p, err
}

// intParam reads an optional integer query parameter within [min, max].
func intParam(q url.Values, name string, def, min, max int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, invalidParameter(name, name+" must be an integer from "+strconv.Itoa(min)+" to "+strconv.Itoa(max))
	}
	return n, nil
}

// offsetMeta describes an offset page.
func offsetMeta[T any](p store.Page, l store.List[T]) metadata {
	m := metadata{CurrentPage: &p.Number, PageSize: p.Size, HasNextPage: l.HasNext, HasPreviousPage: l.HasPrev}
	if l.Total >= 0 {
		m.TotalCount = l.Total
		m.TotalPages = (l.Total + p.Size - 1) / p.Size
	}
	return m
}

// parseKeyset reads the cursor parameters first/after/last/before. ok is false when the
// request uses none of them (offset pagination then applies); mixing the two styles, or first
// with last, is a pagination_conflict.
func parseKeyset(q url.Values) (k store.Keyset, ok bool, err error) {
	has := func(names ...string) bool {
		for _, n := range names {
			if q.Has(n) {
				return true
			}
		}
		return false
	}
	if !has("first", "after", "last", "before") {
		return k, false, nil
	}
	conflict := func(msg string) error {
		return &Error{Status: http.StatusBadRequest, Code: "pagination_conflict", Message: msg}
	}
	if has("page", "page_size") {
		return k, false, conflict("page/page_size cannot be combined with first/after/last/before")
	}
	if has("first", "after") && has("last", "before") {
		return k, false, conflict("first/after cannot be combined with last/before")
	}
	k.Before = has("last", "before")
	sizeName, cursorName := "first", "after"
	if k.Before {
		sizeName, cursorName = "last", "before"
	}
	if k.Size, err = intParam(q, sizeName, defaultPageSize, 1, maxPageSize); err != nil {
		return k, false, err
	}
	if c := q.Get(cursorName); c != "" || q.Has(cursorName) {
		key, err := decodeCursor(c)
		if err != nil {
			return k, false, &Error{Status: http.StatusBadRequest, Code: "invalid_cursor", Parameter: cursorName, Message: cursorName + " is not a cursor issued by this API"}
		}
		k.Key = &key
	}
	return k, true, nil
}

// keysetMeta describes a keyset page.
func keysetMeta[T any](k store.Keyset, l store.List[T]) metadata {
	m := metadata{PageSize: k.Size, HasNextPage: l.HasNext, HasPreviousPage: l.HasPrev}
	if n := len(l.Keys); n > 0 {
		start, end := encodeCursor(l.Keys[0]), encodeCursor(l.Keys[n-1])
		m.StartCursor, m.EndCursor = &start, &end
	}
	return m
}

var uuidText = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// encodeCursor makes an opaque cursor of a row position.
func encodeCursor(k store.Key) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1:" + strconv.FormatInt(k.CreatedAt, 10) + ":" + k.ID))
}

// decodeCursor accepts only what encodeCursor makes.
func decodeCursor(s string) (store.Key, error) {
	// Strict: a cursor whose unused trailing bits are set is not one encodeCursor made.
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(s) > 128 {
		return store.Key{}, errInvalidCursor
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != "v1" || !uuidText.MatchString(parts[2]) {
		return store.Key{}, errInvalidCursor
	}
	at, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || at < 0 || strconv.FormatInt(at, 10) != parts[1] {
		return store.Key{}, errInvalidCursor
	}
	return store.Key{CreatedAt: at, ID: parts[2]}, nil
}

var errInvalidCursor = &Error{Status: http.StatusBadRequest, Code: "invalid_cursor", Message: "not a cursor issued by this API"}
