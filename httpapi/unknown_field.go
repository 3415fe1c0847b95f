package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// A key names a struct field only when it is exactly the field's JSON name. encoding/json
// also decodes a key that differs in case ("NAME" into name, and of "brand" and "BRAND" the
// last wins); DESIGN §3 refuses every key that is not a field, so decodeStrict checks the keys
// again after decoding (exactKeys) and names the first such key (unknownFieldPath).

// exactKeys reports whether every object key in body, a JSON value checkJSON accepted, is
// exactly the name of a field of the type t it decodes into. Maps take any key; interface
// values and values that decode themselves are not walked.
func exactKeys(body []byte, t reflect.Type) bool {
	s := jsonScan{b: body}
	s.space()
	return s.typed(t)
}

// typed is value along a Go type: false at the first key that names no field of it.
func (s *jsonScan) typed(t reflect.Type) bool {
	t = walked(t)
	if t == nil || (s.b[s.i] != '{' && s.b[s.i] != '[') {
		return s.value(0)
	}
	open, end := s.b[s.i], byte('}')
	if open == '[' {
		end = ']'
	}
	s.i++
	s.space()
	if s.b[s.i] == end {
		s.i++
		return true
	}
	for {
		s.space()
		var elem reflect.Type // the type of the value that follows; nil: not walked
		if open == '[' {
			if k := t.Kind(); k == reflect.Slice || k == reflect.Array {
				elem = t.Elem()
			}
		} else {
			k, _ := s.str()
			switch t.Kind() {
			case reflect.Struct:
				f, ok := jsonFields(t)[string(k)]
				if !ok {
					return false
				}
				elem = f
			case reflect.Map:
				elem = t.Elem()
			}
			s.space()
			s.i++ // ':'
			s.space()
		}
		if !s.typed(elem) {
			return false
		}
		s.space()
		s.i++ // ',' or the end
		if s.b[s.i-1] == end {
			return true
		}
	}
}

// unknownFieldPath names the first key of body, a JSON value checkJSON accepted, that is not
// exactly a field of v's type, by its path ("origin.foo", "customs_info.customs_items[0].foo"),
// as validation errors name fields; "(body)" when every key is a field.
func unknownFieldPath(body []byte, v any) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if path, ok := findUnknown(dec, reflect.TypeOf(v), ""); ok {
		return path
	}
	return "(body)"
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// walked is t without its pointers, or nil when values of t are not walked: interfaces, and
// types that decode themselves.
func walked(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return nil
		}
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || t.Implements(unmarshalerType) ||
		reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// findUnknown reads one JSON value from dec, of Go type t, and reports the path of the first
// object key that is not exactly a field of t.
func findUnknown(dec *json.Decoder, t reflect.Type, path string) (string, bool) {
	t = walked(t)
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return "", false
			}
			k := key.(string)
			var elem reflect.Type
			if t != nil {
				switch t.Kind() {
				case reflect.Struct:
					f, known := jsonFields(t)[k]
					if !known {
						return fieldPath(path, k), true
					}
					elem = f
				case reflect.Map:
					elem = t.Elem()
				}
			}
			if p, ok := findUnknown(dec, elem, fieldPath(path, k)); ok {
				return p, true
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if p, ok := findUnknown(dec, elem, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
		_, err = dec.Token()
	}
	return "", false
}

// fields holds jsonFields' answers, by struct type.
var fields sync.Map

// jsonFields returns the JSON names of struct type t's fields, each with its field's type:
// exported fields by their tag's name or their own, embedded structs' fields promoted (a field
// of the outer struct wins over a promoted one of the same name, as in encoding/json).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fields.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		n, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && n == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if n == "" {
			n = f.Name
		}
		m[n] = f.Type
	}
	for _, et := range embedded {
		for n, ft := range jsonFields(et) {
			if _, ok := m[n]; !ok {
				m[n] = ft
			}
		}
	}
	fields.Store(t, m)
	return m
}

// valuePath names the value of body, a JSON value checkJSON accepted, that an
// UnmarshalTypeError at offset is about, by its path ("customs_info.customs_items[1].quantity";
// "(body)" for the whole body): the error's own Field leaves out array indices and map keys.
// The error's offset is the end of a literal or the inside of an object or array just opened,
// so the value is the last one that starts before it.
func valuePath(body []byte, offset int64) string {
	type container struct {
		path  string
		array bool
		next  int    // arrays: the index of the next element
		key   string // objects: the key of the next value
		atKey bool   // objects: the next token is a key
	}
	var open []container
	last := ""
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for dec.InputOffset() < offset {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		n := len(open)
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			open = open[:n-1]
			continue
		}
		if n > 0 && open[n-1].atKey {
			open[n-1].key, open[n-1].atKey = tok.(string), false
			continue
		}
		last = ""
		if n > 0 {
			if c := &open[n-1]; c.array {
				last = fmt.Sprintf("%s[%d]", c.path, c.next)
				c.next++
			} else {
				last = fieldPath(c.path, c.key)
				c.atKey = true
			}
		}
		if d, ok := tok.(json.Delim); ok {
			open = append(open, container{path: last, array: d == '[', atKey: d == '{'})
		}
	}
	return fieldPath(last, "")
}
