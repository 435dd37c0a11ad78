package limits

import "reflect"

// Overlay stores in *dst each field of src that is not its zero value and
// leaves the others as they were: what a component's WithLimits does with
// its Limits struct (see Set), field by field, so that a field added to the
// struct is taken without a line of its own. T must be a struct type whose
// fields are all exported; anything else panics, a programming error.
func Overlay[T any](dst *T, src T) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := range s.NumField() {
		if f := s.Field(i); !f.IsZero() {
			d.Field(i).Set(f)
		}
	}
}
