// Package strictjson decodes request bodies strictly: one JSON value of valid UTF-8,
// no duplicate keys, no key that is not exactly a field's name, no null where it means nothing,
// no string holding a NUL, nothing nested deeper than 64. A body that passes the allocation-free
// checks is decoded once; any other is looked at again to say exactly what is wrong.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
)

// Malformed is a body that is not one well-formed JSON value (Message says what is wrong).
type Malformed struct{ Message string }

func (e *Malformed) Error() string { return e.Message }

// UnknownField is a key that is no field's name (Name is its path, "(body)" for the body).
type UnknownField struct{ Name string }

func (e *UnknownField) Error() string { return "unknown field " + e.Name }

// Decode decodes body into v strictly: one JSON value of valid UTF-8, no duplicate keys, no
// unknown fields (exactly the fields' names), values of the right types, no null but where a
// field is tagged nullable:"true". A refusal is a *Malformed, an *UnknownField or a
// *shipping.ValidationError naming the field (a NUL in a string, a value of the wrong type, a
// refused null).
func Decode(body []byte, v any) error {
	if err := Check(body); err != nil {
		var nul nulError
		if errors.As(err, &nul) {
			return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: string(nul), Code: "invalid",
				Message: "must not contain a NUL character"}}}
		}
		return &Malformed{Message: err.Error()}
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
		return &UnknownField{Name: name}
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
	return &Malformed{Message: "malformed JSON"}
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
	case "float32", "float64":
		return "a number"
	}
	return "an integer"
}

// Check accepts exactly one well-formed JSON value of valid UTF-8 whose objects have no
// duplicate keys, no string holding a NUL and no value nested deeper than 64. A body that
// passes the allocation-free checks (utf8.Valid, json.Valid, cleanJSON) is accepted without
// tokenizing it; any other body is tokenized by checkJSONTokens, whose error is the answer,
// so every refusal reads as it did.
func Check(body []byte) error {
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

// checkJSONTokens is Check by encoding/json's tokens: it names what is wrong.
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
