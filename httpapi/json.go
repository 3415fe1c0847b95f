package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/waybill/waybill/ingest"
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

// maxCardBody is the largest carrier card accepted (DESIGN §18), as sent and, gzipped, as
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

// decodeStrict is readJSON's decoding, on bytes already read.
func decodeStrict(body []byte, v any) error {
	if err := checkJSON(body); err != nil {
		var nul nulError
		if errors.As(err, &nul) {
			return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: string(nul), Code: "invalid",
				Message: "must not contain a NUL character"}}}
		}
		return &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil && exactKeys(body, reflect.TypeOf(v)):
		return nil
	case err == nil, strings.Contains(err.Error(), "unknown field"):
		name, nulls := refusedKeys(body, v)
		if name == "" && len(nulls) > 0 {
			return nullsRefused(nulls)
		}
		if name == "" {
			name = "(body)"
		}
		return &Error{Status: http.StatusBadRequest, Code: "unknown_field", Message: "unknown field " + name,
			Fields: []shipping.FieldError{{Field: name, Code: "unknown_field", Message: "is not a known field"}}}
	case errors.As(err, &typeErr):
		field := valuePath(body, typeErr.Offset)
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: field, Code: "invalid_type",
			Message: "must be " + jsonKind(typeErr.Type.Kind().String())}}}
	}
	// A type that decodes itself may refuse null with an error of its own; a null is still
	// said to be one.
	if name, nulls := refusedKeys(body, v); name == "" && len(nulls) > 0 {
		return nullsRefused(nulls)
	}
	return &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: "malformed JSON"}
}

// nullsRefused is the validation error for the refused nulls at paths.
func nullsRefused(paths []string) error {
	ve := &shipping.ValidationError{}
	for _, p := range paths {
		ve.Add(p, "invalid", "must not be null")
	}
	return ve
}

// fieldPath joins a JSON path and a key the way field errors name fields ("a.b[0].c"); the
// body itself is "(body)".
func fieldPath(path, key string) string {
	switch {
	case path == "" && key == "":
		return "(body)"
	case path == "":
		return key
	case key == "":
		return path
	}
	return path + "." + key
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a number"
}

// checkJSON accepts exactly one well-formed JSON value of valid UTF-8 whose objects have no
// duplicate keys, no string holding a NUL and no value nested deeper than 64. A body that
// passes the allocation-free checks (utf8.Valid, json.Valid, cleanJSON) is accepted without
// tokenizing it; any other body is tokenized by checkJSONTokens, whose error is the answer,
// so every refusal reads as it did.
func checkJSON(body []byte) error {
	if !utf8.Valid(body) || !json.Valid(body) || !cleanJSON(body) {
		if err := checkJSONTokens(body); err != nil {
			return err
		}
	}
	if ingest.HasLoneSurrogate(body) {
		return ingest.ErrLoneSurrogate
	}
	return nil
}

// cleanJSON reports whether body, a well-formed JSON value (json.Valid), has no value nested
// deeper than 64, no duplicate key in any object and no NUL in any string or key. It may say
// false for a clean body (an object of more than maxCleanKeys keys); never true for another.
func cleanJSON(body []byte) bool {
	var keys [16][]byte
	s := jsonScan{b: body, keys: keys[:0]}
	s.space()
	return s.value(0)
}

// maxCleanKeys bounds the keys of one object cleanJSON compares pairwise; a larger object
// goes to checkJSONTokens, which keeps a map.
const maxCleanKeys = 32

// jsonScan walks a well-formed JSON value; it checks nothing json.Valid already did.
type jsonScan struct {
	b    []byte
	i    int
	keys [][]byte // the keys of the objects being walked, innermost last
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) value(depth int) bool {
	if depth > 64 {
		return false
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		s.space()
		if s.b[s.i] == '}' {
			s.i++
			return true
		}
		mark := len(s.keys)
		for {
			s.space()
			k, ok := s.str()
			if !ok || len(s.keys)-mark >= maxCleanKeys {
				return false
			}
			for _, prev := range s.keys[mark:] {
				if bytes.Equal(prev, k) {
					return false
				}
			}
			s.keys = append(s.keys, k)
			s.space()
			s.i++ // ':'
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			s.i++ // ',' or '}'
			if s.b[s.i-1] == '}' {
				s.keys = s.keys[:mark]
				return true
			}
		}
	case '[':
		s.i++
		s.space()
		if s.b[s.i] == ']' {
			s.i++
			return true
		}
		for {
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			s.i++ // ',' or ']'
			if s.b[s.i-1] == ']' {
				return true
			}
		}
	case '"':
		_, ok := s.str()
		return ok
	}
	// A number, true, false or null: up to the next delimiter.
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		s.i++
	}
	return true
}

// str reads the string at s.i and returns its text (unescaped, when it holds escapes); ok is
// false when the text holds a NUL (only an escape can put one there in well-formed JSON).
func (s *jsonScan) str() (text []byte, ok bool) {
	start := s.i
	s.i++
	escaped := false
	for s.b[s.i] != '"' {
		if s.b[s.i] == '\\' {
			escaped = true
			s.i++
		}
		s.i++
	}
	s.i++
	raw := s.b[start:s.i]
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	var u string
	if json.Unmarshal(raw, &u) != nil || strings.IndexByte(u, 0) >= 0 {
		return nil, false
	}
	return []byte(u), true
}

// checkJSONTokens is checkJSON by encoding/json's tokens: it names what is wrong.
func checkJSONTokens(body []byte) error {
	if !utf8.Valid(body) {
		return errors.New("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := checkValue(dec, 0, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// nulError names the field (a JSON path) of a string holding a NUL character: no database
// text column stores one, so it is a validation error, never a store failure.
type nulError string

func (e nulError) Error() string { return string(e) + " must not contain a NUL character" }

func checkValue(dec *json.Decoder, depth int, path string) error {
	if depth > 64 {
		return errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return errors.New("malformed JSON")
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return errors.New("malformed JSON")
			}
			k := key.(string)
			if seen[k] {
				return fmt.Errorf("duplicate key %q", k)
			}
			seen[k] = true
			if strings.ContainsRune(k, 0) {
				return nulError(fieldPath(path, "(key)"))
			}
			if err := checkValue(dec, depth+1, fieldPath(path, k)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, depth+1, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	default:
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return nulError(fieldPath(path, ""))
		}
	}
	if err != nil {
		return errors.New("malformed JSON")
	}
	return nil
}
