package strictjson

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
// last wins); the API refuses every key that is not a field, so Decode checks the keys
// again after decoding (exactKeys) and names the first such key (refusedKeys).
//
// encoding/json also leaves a value untouched on null, so null would read as "not sent": a
// field sent as null is refused (400 validation_failed) unless its struct field is tagged
// nullable:"true", where null means something (a field cleared, or the same as absent); an
// array element or map value is never null. The tags and openapi.json's nullable request
// fields are the same set (TestOpenAPIBodyNulls).

// exactKeys reports whether every object key in body, a JSON value Check accepted, is
// exactly the name of a field of the type t it decodes into, and no value decoded into a Go
// value is null unless its field is nullable. Maps take any key; interface values and the
// insides of values that decode themselves are not walked.
func exactKeys(body []byte, t reflect.Type) bool {
	s := jsonScan{b: body}
	s.space()
	return s.typed(t, false)
}

// nullRefused reports whether a null decoded into a value of type t is refused: everywhere but
// in a field tagged nullable, in an interface value, and where the type is not known (the
// inside of a value that decodes itself).
func nullRefused(t reflect.Type, nullable bool) bool {
	return !nullable && t != nil && t.Kind() != reflect.Interface
}

// typed is value along a Go type: false at the first key that names no field of it, and at
// the first null nullRefused refuses. nullable is whether t's field is tagged nullable.
func (s *jsonScan) typed(t reflect.Type, nullable bool) bool {
	if s.b[s.i] == 'n' && nullRefused(t, nullable) {
		return false
	}
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
		var elem jsonField // the type of the value that follows; nil: not walked
		if open == '[' {
			if k := t.Kind(); k == reflect.Slice || k == reflect.Array {
				elem.typ = t.Elem()
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
				elem.typ = t.Elem()
			}
			s.space()
			s.i++ // ':'
			s.space()
		}
		if !s.typed(elem.typ, elem.nullable) {
			return false
		}
		s.space()
		s.i++ // ',' or the end
		if s.b[s.i-1] == end {
			return true
		}
	}
}

// refusedKeys names what exactKeys refuses in body, a JSON value Check accepted, decoded
// into v: the path of the first key that is not exactly a field of v's type ("origin.foo",
// "customs_info.customs_items[0].foo"), as validation errors name fields; else the paths of
// every null it refuses.
func refusedKeys(body []byte, v any) (unknown string, nulls []string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := refusal{dec: dec}
	w.walk(reflect.TypeOf(v), false, "")
	return w.unknown, w.nulls
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

// refusal is refusedKeys' walk.
type refusal struct {
	dec     *json.Decoder
	unknown string   // the first key that names no field; the walk stops there
	nulls   []string // the refused nulls so far
}

// walk reads one JSON value from r.dec, of Go type t (nullable: in a field tagged so), at path.
func (r *refusal) walk(t reflect.Type, nullable bool, path string) {
	tok, err := r.dec.Token()
	if err != nil {
		return
	}
	if tok == nil && nullRefused(t, nullable) {
		r.nulls = append(r.nulls, fieldPath(path, ""))
		return
	}
	t = walked(t)
	switch tok {
	case json.Delim('{'):
		for r.dec.More() && r.unknown == "" {
			key, err := r.dec.Token()
			if err != nil {
				return
			}
			k := key.(string)
			var elem jsonField
			if t != nil {
				switch t.Kind() {
				case reflect.Struct:
					f, known := jsonFields(t)[k]
					if !known {
						r.unknown = fieldPath(path, k)
						return
					}
					elem = f
				case reflect.Map:
					elem.typ = t.Elem()
				}
			}
			r.walk(elem.typ, elem.nullable, fieldPath(path, k))
		}
		r.dec.Token()
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; r.dec.More() && r.unknown == ""; i++ {
			r.walk(elem, false, fmt.Sprintf("%s[%d]", path, i))
		}
		r.dec.Token()
	}
}

// fields holds jsonFields' answers, by struct type.
var fields sync.Map

// jsonField is a struct field as JSON sees it: its type, and whether it is tagged
// nullable:"true".
type jsonField struct {
	typ      reflect.Type
	nullable bool
}

// jsonFields returns the JSON names of struct type t's fields, each with its field's type:
// exported fields by their tag's name or their own, embedded structs' fields promoted (a field
// of the outer struct wins over a promoted one of the same name, as in encoding/json).
func jsonFields(t reflect.Type) map[string]jsonField {
	if m, ok := fields.Load(t); ok {
		return m.(map[string]jsonField)
	}
	m := map[string]jsonField{}
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
		m[n] = jsonField{f.Type, f.Tag.Get("nullable") == "true"}
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

// valuePath names the value of body, a JSON value Check accepted, that an
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
