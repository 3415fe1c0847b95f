package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/waybill/waybill/httpapi/internal/strictjson"
	"github.com/waybill/waybill/shipping"
)

// maxBody is the largest request body accepted.
const maxBody = 1 << 20

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"errors":{"status":"Internal Server Error","code":"internal_error","message":"internal error"}}`)
	}
	writeBytes(w, status, append(b, '\n'))
}

// writeData answers one resource in the {data} envelope.
func writeData(w http.ResponseWriter, status int, v any) {
	writeJSON(w, status, struct {
		Data any `json:"data"`
	}{v})
}

// writeStoredData answers one stored response (store.ShipmentJSON, say) in the {data}
// envelope, linked: the same bytes writeData writes for the resource.
func (a *API) writeStoredData(w http.ResponseWriter, status int, body string) {
	b := responses.Get().(*[]byte)
	*b = append(a.appendLinked(append((*b)[:0], `{"data":`...), body), "}\n"...)
	writeBytes(w, status, *b)
	responses.Put(b)
}

// responses holds the buffers stored responses are assembled in.
var responses = sync.Pool{New: func() any { return new([]byte) }}

// writeBytes answers a whole JSON response in one write, with its length: a response written
// in pieces costs the server a write to the socket per piece beyond its buffer.
func writeBytes(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// errEmptyBody is returned by readJSON for a request without a body.
var errEmptyBody = &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: "request body is required"}

// readBody reads a JSON request body of at most maxBody bytes, checking its content type.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return readBodyOf(w, r, "application/json")
}

// readBodyOf reads a request body of at most maxBody bytes of the media type: nil for an
// empty one, 415 for one of another type.
func readBodyOf(w http.ResponseWriter, r *http.Request, mediaType string) ([]byte, error) {
	return readLimited(w, r, mediaType, maxBody, false)
}

// maxCardBody is the largest carrier card accepted, as sent and, gzipped, as
// inflated: a real contract's zone chart of 20 origins is over a megabyte.
const maxCardBody = 16 << 20

// cardRoute is the one route that takes bodies up to maxCardBody.
const cardRoute = "PUT /admin/carriers/{code}"

// bodyLimit is the largest body r's route accepts.
func bodyLimit(r *http.Request) int64 {
	if r.Pattern == cardRoute {
		return maxCardBody
	}
	return maxBody
}

// readLimited reads a request body of at most limit bytes of the media type; with gzipOK a body
// sent with Content-Encoding: gzip is inflated, to at most limit bytes too, so a gzip bomb is
// a 413 after bounded work.
func readLimited(w http.ResponseWriter, r *http.Request, mediaType string, limit int64, gzipOK bool) ([]byte, error) {
	tooLargeErr := &Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large",
		Message: "request body exceeds " + strconv.FormatInt(limit>>20, 10) + " MiB"}
	if r.ContentLength > limit {
		return nil, tooLargeErr // at once, not after waiting for a body that may never come
	}
	var src io.Reader = http.MaxBytesReader(w, r.Body, limit)
	inflated := false
	if enc := r.Header.Get("Content-Encoding"); gzipOK && enc != "" && !strings.EqualFold(enc, "identity") {
		if !strings.EqualFold(enc, "gzip") {
			return nil, &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
				Message: "Content-Encoding must be gzip or identity"}
		}
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: "request body is not gzip"}
		}
		src, inflated = io.LimitReader(zr, limit+1), true
	}
	body, err := io.ReadAll(src)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) || int64(len(body)) > limit {
		return nil, tooLargeErr
	}
	if err != nil {
		msg := "could not read request body"
		if inflated {
			msg = "request body is not gzip"
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: msg}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != mediaType {
			return nil, &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type", Message: "request body must be " + mediaType}
		}
	}
	return body, nil
}

// readJSON decodes the request body into v strictly: one JSON value of valid UTF-8, no
// duplicate keys, no unknown fields, values of the right types. An empty body is errEmptyBody,
// which callers whose body is optional ignore.
func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if body == nil {
		return errEmptyBody
	}
	return decodeStrict(body, v)
}

// decodeStrict is readJSON's decoding, on bytes already read (strictjson.Decode), its refusals
// in the API's error shape.
func decodeStrict(body []byte, v any) error {
	err := strictjson.Decode(body, v)
	var m *strictjson.Malformed
	var u *strictjson.UnknownField
	switch {
	case errors.As(err, &m):
		return &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: m.Message}
	case errors.As(err, &u):
		return &Error{Status: http.StatusBadRequest, Code: "unknown_field", Message: "unknown field " + u.Name,
			Fields: []shipping.FieldError{{Field: u.Name, Code: "unknown_field", Message: "is not a known field"}}}
	}
	return err
}
