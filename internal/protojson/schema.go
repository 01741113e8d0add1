package protojson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// The schema side of the ProtoJSON input rule (RPC-14): which keys of a
// request object are fields of its Go type, under which JSON and proto
// names, and how the normaliser treats each value.

// fieldShape says how the normaliser treats a field's value.
type fieldShape int

const (
	// shapeOpaque values (scalars, enums, maps, raw JSON) are left as sent.
	shapeOpaque fieldShape = iota
	// shapeObject values are schema messages whose keys are normalised.
	shapeObject
	// shapeArray values are repeated schema messages.
	shapeArray
)

// protoField is one field of a schema message.
type protoField struct {
	name  string       // the JSON (lowerCamelCase) name: the json tag
	shape fieldShape   // how its value is treated
	elem  reflect.Type // the struct type of an object or array element
}

// protoSchema maps both spellings of every field of one struct type.
type protoSchema struct {
	fields map[string]*protoField
}

var protoSchemas sync.Map // reflect.Type → *protoSchema

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// schemaFor returns the (cached) field table of struct type t.
func schemaFor(t reflect.Type) *protoSchema {
	if s, ok := protoSchemas.Load(t); ok {
		return s.(*protoSchema)
	}
	s := &protoSchema{fields: map[string]*protoField{}}
	addSchemaFields(s, t, 0)
	actual, _ := protoSchemas.LoadOrStore(t, s)
	return actual.(*protoSchema)
}

// addSchemaFields adds the tagged fields of t, flattening untagged embedded
// structs as encoding/json does.
func addSchemaFields(s *protoSchema, t reflect.Type, depth int) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && tag == "-" {
			continue
		}
		if sf.Anonymous && name == "" && depth < 8 {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				addSchemaFields(s, et, depth+1)
				continue
			}
		}
		if !sf.IsExported() || !hasTag || name == "" {
			continue // untagged fields keep encoding/json's own matching
		}
		f := &protoField{name: name}
		f.shape, f.elem = shapeOf(sf.Type)
		if _, taken := s.fields[name]; !taken {
			s.fields[name] = f
		}
		if p := protoName(name); p != name {
			if _, taken := s.fields[p]; !taken {
				s.fields[p] = f
			}
		}
	}
}

// shapeOf classifies a field type: structs and slices of structs are
// schema messages unless they decode themselves.
func shapeOf(t reflect.Type) (fieldShape, reflect.Type) {
	t = derefType(t)
	if decodesItself(t) {
		return shapeOpaque, nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return shapeObject, t
	case reflect.Slice, reflect.Array:
		e := derefType(t.Elem())
		if e.Kind() == reflect.Struct && !decodesItself(e) {
			return shapeArray, e
		}
	}
	return shapeOpaque, nil
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// protoName returns the proto field name of a lowerCamelCase JSON name:
// an underscore before each capital, lower-cased ("referenceTaskIds" →
// "reference_task_ids"), which is how protoc derives the JSON name.
func protoName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
